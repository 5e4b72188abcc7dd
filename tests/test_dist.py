"""What ``make dist`` ships, checked as a user meets it: the wheel is the same from one
build to the next, carries the bindings of every pinned version and the notices their
text needs, installs into a fresh environment where this checkout is not importable, runs
the CLI there without writing into its own installation, and uninstalls without a trace.
The install is offline: from the directory of wheels ``make dist`` fills, with no index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

from conftest import MIRROR, ROOT, VERSIONS
from mcpgen.generator.pins import module_name

#: Every module a version's bindings consist of.
MODULES = ("__init__", "types", "methods", "server", "client")


def run(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    return done


def build(into: Path) -> Path:
    """``make dist`` into ``into``; the wheel it made."""
    env = {**os.environ, "MCPGEN_SCHEMA_SOURCE": str(MIRROR)}
    run(["make", "-s", "dist", f"DIST={into}"], cwd=ROOT, env=env)
    wheels = list(into.glob("mcpgen-*.whl"))
    assert len(wheels) == 1 and list(into.glob("mcpgen-*.tar.gz")), list(into.iterdir())
    return wheels[0]


def site_packages(env_dir: Path) -> Path:
    (found,) = env_dir.glob("lib/python*/site-packages")
    return found


def test_two_builds_make_one_wheel_that_installs_works_and_uninstalls_cleanly(
    tmp_path: Path,
) -> None:
    first, second = build(tmp_path / "a"), build(tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()  # byte-identical, timestamps included

    with zipfile.ZipFile(first) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    for version in VERSIONS:
        for module in MODULES:
            assert f"mcpgen/generated/{module_name(version)}/{module}.py" in names
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert {f"{info}/licenses/LICENSE", f"{info}/licenses/NOTICE"} <= names
    assert b"License-Expression: MIT" in metadata
    # Upstream schema files are data mcpgen reads, never ships: only the pins and tables.
    assert sorted(n for n in names if n.startswith("mcpgen/schema/")) == [
        "mcpgen/schema/overrides.json",
        "mcpgen/schema/patches.json",
        "mcpgen/schema/pins.json",
    ]

    # A fresh environment, run from a directory where the checkout is not importable.
    env_dir, work, home = tmp_path / "venv", tmp_path / "work", tmp_path / "home"
    work.mkdir()
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "PYTHONNOUSERSITE": "1",
        "MCPGEN_SCHEMA_SOURCE": str(MIRROR),
    }
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    # Offline: the wheels next to mcpgen's are all it needs (no index at all).
    offline = ["--no-index", "--find-links", str(first.parent), "mcpgen[generator]"]
    run([*pip, *offline], cwd=work, env={**os.environ, **env})
    packages = site_packages(env_dir)
    before = set(packages.iterdir())
    python = str(bin_dir / "python")
    imported = run(
        [
            python,
            "-c",
            "import json, mcpgen, mcpgen.generated as g; "
            f"print(json.dumps([mcpgen.__file__] + [g.load(v).__name__ for v in {VERSIONS!r}]))",
        ],
        cwd=work,
        env=env,
    )
    where, *loaded = json.loads(imported.stdout)
    assert Path(where).is_relative_to(packages), where  # the wheel's, not the checkout's
    assert loaded == [f"mcpgen.generated.{module_name(v)}.types" for v in VERSIONS]

    mcpgen = str(bin_dir / "mcpgen")
    assert "Usage: mcpgen" in run([mcpgen, "--help"], cwd=work, env=env).stdout
    listed = run([mcpgen, "versions"], cwd=work, env=env).stdout
    assert all(v in listed for v in VERSIONS), listed
    run([mcpgen, "schema", "fetch", "--version", "all"], cwd=work, env=env)
    cache = home / ".cache" / "mcpgen" / "schema"
    assert all((cache / v / "schema.json").is_file() for v in VERSIONS)
    newest = VERSIONS[-2] if VERSIONS[-1] == "draft" else VERSIONS[-1]
    run(
        [mcpgen, "generate", "--version", newest, "--package", "acme.mcp", "--out", "src"],
        cwd=work,
        env=env,
    )
    assert (work / "src" / "acme" / "mcp" / module_name(newest) / "types.py").is_file()
    run([mcpgen, "generate", "--version", newest], cwd=work, env=env)  # default: cwd
    assert (work / "mcpgen" / "generated" / module_name(newest) / "types.py").is_file()
    assert set(packages.iterdir()) == before  # nothing written into the installation

    run([python, "-m", "pip", "uninstall", "-y", "-q", "mcpgen"], cwd=work, env=env)
    left = sorted(p.name for p in packages.iterdir() if p.name.lower().startswith("mcpgen"))
    assert left == [], left
