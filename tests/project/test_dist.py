"""What ``make dist`` ships, checked as a user meets it: the wheel is the same from one
build to the next, carries the bindings of every pinned version and the notices their
text needs, installs into a fresh environment where this checkout is not importable, runs
the CLI there without writing into its own installation, and uninstalls without a trace.
The install is offline: from the directory of wheels ``make dist`` fills, with no index.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
import zipfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from support.processes import announced_http
from support.scaffolds import grow
from support.checkout import MIRROR, ROOT, VERSIONS
from mcpgen.generator.pins import module_name

#: Every module a version's bindings consist of.
MODULES = ("__init__", "types", "methods", "server", "client")


# Slow: builds wheels and virtual environments (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcpgen's wheel, in the directory of wheels ``make dist`` fills."""
    return build(tmp_path_factory.mktemp("dist"))


def test_two_builds_of_one_commit_make_the_same_wheel(wheel: Path, tmp_path: Path) -> None:
    assert build(tmp_path).read_bytes() == wheel.read_bytes()  # timestamps included


def test_the_wheel_installs_offline_works_and_uninstalls_cleanly(
    wheel: Path, tmp_path: Path
) -> None:
    first = wheel

    with zipfile.ZipFile(first) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
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


# -- the whole path: wheel → vendored bindings → scaffold → a second venv → peers --------

SAMPLE = {"integer": 2, "number": 2.5, "string": "x", "boolean": True}


def files_of(directory: Path) -> list[Path]:
    """Every file under ``directory`` but Python's own bytecode caches."""
    return sorted(p for p in directory.rglob("*") if "__pycache__" not in p.parts)


def fresh_venv(path: Path) -> Path:
    """A new virtual environment; its ``bin`` directory."""
    venv.create(path, with_pip=True)
    return path / "bin"


def clean_env(bin_dir: Path, home: Path) -> dict[str, str]:
    """An environment in which only ``bin_dir``'s Python and what it installed exist."""
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {
        **keep,
        "PATH": f"{bin_dir}{os.pathsep}{keep.get('PATH', '')}",
        "HOME": str(home),
        "PYTHONNOUSERSITE": "1",
        "MCPGEN_SCHEMA_SOURCE": str(MIRROR),
    }


def offline_install(bin_dir: Path, wheels: Path, cwd: Path, *requirements: str) -> None:
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    command = [*pip, "--no-index", "--find-links", str(wheels), *requirements]
    run(command, cwd=cwd, env=clean_env(bin_dir, cwd))


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """A valid call's arguments: a sample value for each required property."""
    properties = schema.get("properties", {})
    return {name: SAMPLE[properties[name]["type"]] for name in schema.get("required", [])}


async def call_every_way(script: Path, project: Path) -> list[str]:
    """List and call the project's first tool through the official SDK client, over
    stdio and Streamable HTTP, in its default (``auto``) mode and in ``legacy`` mode."""
    from mcp import Client as SdkClient
    from mcp import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    seen: list[str] = []
    command = [str(script), "--transport", "http", "--port", "0"]
    with announced_http(command, project) as url:
        for transport in ("stdio", "http"):
            for mode in ("auto", "legacy"):
                with anyio.fail_after(60):
                    async with AsyncExitStack() as stack:
                        if transport == "stdio":
                            peer: Any = StdioServerParameters(command=str(script), cwd=project)
                        else:
                            http = await stack.enter_async_context(
                                httpx2.AsyncClient(timeout=httpx2.Timeout(30.0))
                            )
                            peer = streamable_http_client(url, http_client=http)
                        client = await stack.enter_async_context(SdkClient(peer, mode=mode))
                        tools = (await client.list_tools()).tools
                        assert tools, (transport, mode)
                        tool = tools[0]
                        called = await client.call_tool(tool.name, arguments_for(tool.input_schema))
                        assert not called.is_error, (transport, mode, called)
                        if tool.output_schema is not None:
                            assert called.structured_content is not None, (transport, mode)
                        seen.append(f"{transport}/{mode}")
    return seen


#: Where nothing answers: the discard port of this machine, which nobody serves here.
UNREACHABLE = "http://127.0.0.1:9"


def offline_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``env`` where no schema was ever fetched and none can be: an empty schema
    directory, no ``MCPGEN_SCHEMA_SOURCE``, pins whose upstream URLs lead nowhere, and
    every HTTP request sent through a proxy that does not exist."""
    pins = json.loads((ROOT / "schema" / "pins.json").read_text())
    for key in ("raw_url", "tree_url"):
        pins["upstream"][key] = f"{UNREACHABLE}/{{repository}}/{{commit}}/{key}"
    pins_file = tmp_path / "unreachable-pins.json"
    pins_file.write_text(json.dumps(pins))
    empty = tmp_path / "no-schemas"
    empty.mkdir()
    offline = {k: v for k, v in env.items() if k != "MCPGEN_SCHEMA_SOURCE"}
    offline |= {"MCPGEN_SCHEMA_DIR": str(empty), "MCPGEN_PINS": str(pins_file)}
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        offline[proxy] = UNREACHABLE
    offline.pop("no_proxy", None)
    offline.pop("NO_PROXY", None)
    return offline


def test_from_the_wheel_to_a_scaffold_that_official_clients_call(
    wheel: Path, tmp_path: Path
) -> None:
    """The whole path a user takes: install the wheel into a fresh venv (the checkout not
    importable); scaffold a project there with no schema fetched and no network (its
    bindings are those the wheel installs); add three tools, a resource template and a
    prompt to its server as a user would; vendor bindings into a package; install the
    project from the directory of wheels into a second fresh venv, run the project's own
    tests, and call its tool with the official SDK client (auto and legacy; stdio and
    HTTP)."""
    wheels = wheel.parent
    work = tmp_path / "work"
    work.mkdir()
    tool_bin = fresh_venv(tmp_path / "tool-venv")
    offline_install(tool_bin, wheels, work, "mcpgen[generator]")
    installation = files_of(site_packages(tmp_path / "tool-venv"))
    env = clean_env(tool_bin, tmp_path / "home")
    mcpgen = str(tool_bin / "mcpgen")
    newest = VERSIONS[-2] if VERSIONS[-1] == "draft" else VERSIONS[-1]

    offline = offline_env(env, tmp_path)
    refused = subprocess.run(
        [mcpgen, "schema", "fetch", "--version", newest],
        cwd=work,
        env=offline,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The network is out of reach indeed: a fetch says so.
    assert refused.returncode == 3 and "unreachable" in refused.stderr, refused.stderr
    made = run([mcpgen, "new", "demo-server", "--transport", "both"], cwd=work, env=offline)
    assert "created" in made.stdout and "error" not in made.stderr, made.stderr
    assert list(Path(offline["MCPGEN_SCHEMA_DIR"]).iterdir()) == []  # nothing fetched
    project = work / "demo-server"
    grow(project, "demo_server", "demo-server")
    run([mcpgen, "schema", "fetch", "--version", "all"], cwd=work, env=env)
    run(
        [mcpgen, "generate", "--version", newest, "--package", "acme.mcp", "--out", "vendor"],
        cwd=work,
        env=env,
    )
    vendored = run(
        [
            str(tool_bin / "python"),
            "-c",
            f"import acme.mcp.{module_name(newest)}.types as t; " "print(t.__file__)",
        ],
        cwd=work,
        env={**env, "PYTHONPATH": str(work / "vendor")},
    )
    assert Path(vendored.stdout.strip()).is_relative_to(work / "vendor")

    # new, fetch and generate wrote nothing into the installation
    assert files_of(site_packages(tmp_path / "tool-venv")) == installation
    app_bin = fresh_venv(tmp_path / "app-venv")
    offline_install(app_bin, wheels, project, "-e", ".[test]")
    own = run([str(app_bin / "pytest"), "-q"], cwd=project, env=clean_env(app_bin, project))
    # Its tests, all of them, pass with the additions: they look things up by name.
    passed = re.search(r"(\d+) passed", own.stdout)
    assert passed and int(passed.group(1)) == 8, own.stdout[-2000:]
    assert "failed" not in own.stdout, own.stdout[-2000:]
    seen = anyio.run(call_every_way, app_bin / "demo-server", project)
    assert seen == ["stdio/auto", "stdio/legacy", "http/auto", "http/legacy"]
