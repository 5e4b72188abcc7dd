"""Generation is deterministic, checkable, type-clean, and vendorable with msgspec alone."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from support.cli_runner import Ran, mcpgen
from support.checkout import ROOT, VERSIONS, pyright_of_generated
from mcpgen.generator.pins import module_name
from mcpgen.generator.pipeline import Inputs, generate


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.py"))
    }


def cli(*args: str) -> Ran:
    return mcpgen(*args, cwd=ROOT)


@pytest.mark.parametrize(
    "versions",
    [
        pytest.param(["2024-11-05", "2026-07-28"], id="one-of-each-era"),
        pytest.param(VERSIONS, id="all", marks=pytest.mark.slow),
    ],
)
def test_output_is_byte_identical_across_runs(
    tmp_path: Path, fetched: Path, versions: list[str]
) -> None:
    """In parallel and then serially into the same place: the second run rewrites nothing
    (every file is byte for byte what the first wrote). ``test_default_package_is_up_to_date``
    compares a run with the one ``make generate`` did in another process. ``make unit``
    runs it for a version of each era; every version, under ``slow``."""
    inputs = Inputs.load()
    out = tmp_path / "a"
    written = generate(versions, "acme.mcp", out, inputs=inputs)
    assert {str(Path(p).relative_to(out)) for p in written if p.suffix == ".py"} == set(digest(out))
    for version in versions:
        assert (out / "acme" / "mcp" / module_name(version) / "types.py").exists()
    assert not (out / "acme" / "__init__.py").exists(), "acme stays a namespace package"
    before = digest(out)
    assert generate(versions, "acme.mcp", out, inputs=inputs, jobs=1) == [], "nothing rewritten"
    assert digest(out) == before


def test_check_names_the_files_that_would_change(tmp_path: Path, fetched: Path) -> None:
    out = tmp_path / "out"
    assert (
        cli(
            "generate",
            "--version",
            "2025-06-18",
            "--package",
            "acme.mcp",
            "--out",
            str(out),
        ).returncode
        == 0
    )
    ok = cli(
        "generate",
        "--version",
        "2025-06-18",
        "--package",
        "acme.mcp",
        "--out",
        str(out),
        "--check",
    )
    assert ok.returncode == 0, ok.stderr
    target = out / "acme" / "mcp" / "v2025_06_18" / "types.py"
    target.write_text(target.read_text() + "\n# edited by hand\n")
    stale = cli(
        "generate",
        "--version",
        "2025-06-18",
        "--package",
        "acme.mcp",
        "--out",
        str(out),
        "--check",
    )
    assert stale.returncode == 1
    assert f"would change: {target}" in stale.stdout
    assert "edited by hand" in target.read_text(), "--check writes nothing"
    assert (
        cli(
            "generate",
            "--version",
            "2025-06-18",
            "--package",
            "acme.mcp",
            "--out",
            str(out),
        ).returncode
        == 0
    )
    assert "edited by hand" not in target.read_text()


def test_default_package_is_up_to_date(generated: dict[str, ModuleType]) -> None:
    result = cli("generate", "--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_generated_modules_pass_pyright(generated: dict[str, ModuleType]) -> None:
    """pyright over ``generated/`` (the ``generated`` fixture started it beside the tests
    before this one: see ``conftest.pyright_of_generated``)."""
    pyright = pyright_of_generated()
    stdout, _ = pyright.communicate(timeout=600)
    assert pyright.returncode == 0, stdout[-4000:]
    assert "0 errors" in stdout


VENDORED_CHECK = textwrap.dedent("""
    import sys
    try:
        import mcpgen
    except ImportError:
        pass
    else:
        raise SystemExit("mcpgen must not be importable here")
    from acme.mcp.v2025_11_25 import types as t
    from acme.mcp import load, VERSIONS
    result = t.decode(b'{"content":[{"type":"text","text":"hi"}],"isError":false}', t.CallToolResult)
    assert t.encode(result) == b'{"content":[{"type":"text","text":"hi"}],"isError":false}'
    assert load("2025-11-25") is t and list(VERSIONS) == ["2025-11-25"]
    libs = sys.argv[1]
    third_party = sorted({
        name.split(".")[0]
        for name, module in list(sys.modules.items())
        if (getattr(module, "__file__", None) or "").startswith(libs)
    })
    print(",".join(third_party))
    """)


def test_vendored_package_needs_only_msgspec(tmp_path: Path, fetched: Path) -> None:
    out = tmp_path / "vendor"
    result = cli(
        "generate",
        "--version",
        "2025-11-25",
        "--package",
        "acme.mcp",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    libs = tmp_path / "libs"
    shutil.copytree(Path(msgspec.__file__).parent, libs / "msgspec")
    script = tmp_path / "check.py"
    script.write_text(VENDORED_CHECK)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{out}{os.pathsep}{libs}"}
    # -S: no site-packages (so no mcpgen, no other third-party module); PYTHONPATH is honoured.
    run = subprocess.run(
        [sys.executable, "-S", str(script), str(libs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "msgspec"


def test_a_vendored_package_carries_the_notice_its_modules_point_to(
    tmp_path: Path, fetched: Path
) -> None:
    """``generate --package P --out DIR`` writes ``NOTICE`` inside the package, where a copy
    of the package takes it along: the specification's copyright and license, the versions
    the package holds (a version added later is added to it) and the modules that come from
    mcpgen. ``--check`` counts it as output: missing or edited, it is named as stale."""
    out = tmp_path / "vendor"
    package = out / "acme" / "mcp"
    args = ("generate", "--package", "acme.mcp", "--out", str(out))
    assert cli(*args, "--version", "2025-11-25").returncode == 0
    notice = package / "NOTICE"
    text = " ".join(notice.read_text().split())
    assert "Copyright (c) 2024-2025 Model Context Protocol a Series of LF Projects, LLC." in text
    assert "Apache License, Version 2.0" in text and "MIT License" in text
    assert "versions 2025-11-25," in text and "_support.py" in text
    pointing = [p for p in package.rglob("*.py") if "(see NOTICE)" in p.read_text()]
    assert {p.parent for p in pointing} == {package, package / "v2025_11_25"}, pointing

    assert cli(*args, "--version", "2026-07-28").returncode == 0  # a second version
    assert "versions 2025-11-25, 2026-07-28," in " ".join(notice.read_text().split())
    assert cli(*args, "--version", "2026-07-28", "--check").returncode == 0

    notice.unlink()
    stale = cli(*args, "--version", "2026-07-28", "--check")
    assert stale.returncode == 1 and f"would change: {notice}" in stale.stdout
    assert not notice.exists(), "--check writes nothing"
    assert cli(*args, "--version", "2026-07-28").returncode == 0
    notice.write_text(notice.read_text().replace("Apache", "Other"))
    stale = cli(*args, "--version", "2026-07-28", "--check")
    assert stale.returncode == 1 and stale.stdout.splitlines() == [f"would change: {notice}"]


def test_statement_wise_formatting_equals_black_on_whole_files(
    generated: dict[str, ModuleType],
) -> None:
    """Generation formats each distinct top-level statement once and joins them; the
    result must be exactly what black makes of the whole file."""
    from mcpgen.generator.emit import format_python

    for version in ("2024-11-05", "2026-07-28"):
        folder = Path(str(generated[version].__file__)).parent
        for module in ("types.py", "methods.py", "server.py", "client.py"):
            text = (folder / module).read_text()
            assert format_python(text) == text, f"{version}/{module}"
