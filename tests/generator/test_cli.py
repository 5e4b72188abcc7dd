"""The user-facing CLI: versions, diff, help text, errors, and a new spec revision landing."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.cli_runner import mcpgen
from support.checkout import MIRROR, ROOT
from mcpgen.generator.errors import EXIT_USAGE
from support.revisions import synthetic_revision

# Slow: real processes throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpgen", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_versions_lists_every_pin(fetched: Path, generated: Any) -> None:
    result = cli("versions")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["version", "era", "dialect", "commit", "fetched", "generated"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(rows) == [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
        "draft",
    ]
    assert rows["2025-11-25"][1:3] == ["legacy", "2020-12"] and rows["2026-07-28"][1] == "modern"
    assert all(r[4:] == ["yes", "yes"] for r in rows.values())


def diff_json(old: str, new: str) -> dict[str, Any]:
    result = cli("diff", old, new, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def methods(section: list[dict[str, str]], direction: str = "client → server") -> set[str]:
    return {m["method"] for m in section if m["direction"] == direction}


def test_diff_json_has_the_documented_shape(fetched: Path) -> None:
    d = diff_json("2025-11-25", "2026-07-28")
    for key in ("definitions", "methods"):
        assert set(d[key]) == {"added", "removed", "changed"}


def test_diff_finds_what_the_changelogs_say(fetched: Path) -> None:
    # 2025-03-26 → 2025-06-18 drops JSON-RPC batching and adds elicitation
    d = diff_json("2025-03-26", "2025-06-18")
    assert {"JSONRPCBatchRequest", "JSONRPCBatchResponse"} <= set(d["definitions"]["removed"])
    assert "elicitation/create" in methods(d["methods"]["added"], "server → client")
    assert "client.elicitation" in d["capabilities"]["added"]
    # 2025-06-18 → 2025-11-25 adds tasks and tools in sampling
    d = diff_json("2025-06-18", "2025-11-25")
    assert {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} <= methods(
        d["methods"]["added"]
    )
    assert {"client.tasks", "server.tasks", "client.sampling.tools"} <= set(
        d["capabilities"]["added"]
    )
    sampling = next(
        c for c in d["definitions"]["changed"] if c["name"] == "CreateMessageRequestParams"
    )
    assert {"field": "tools", "change": "added", "after": "array of Tool"} in sampling["changes"]
    # 2025-11-25 → 2026-07-28 removes the handshake, ping and setLevel; adds discover, listen
    d = diff_json("2025-11-25", "2026-07-28")
    removed, added = methods(d["methods"]["removed"]), methods(d["methods"]["added"])
    assert {"initialize", "ping", "logging/setLevel"} <= removed
    assert {"server/discover", "subscriptions/listen"} <= added
    assert "InitializeRequest" in d["definitions"]["removed"]
    assert "DiscoverRequest" in d["definitions"]["added"]
    # identical schemas: nothing at all
    d = diff_json("2026-07-28", "draft")
    assert all(
        not d[k][part]
        for k in ("definitions", "methods")
        for part in ("added", "removed", "changed")
    )


def test_diff_markdown(fetched: Path) -> None:
    result = cli("diff", "2025-11-25", "2026-07-28")
    assert result.returncode == 0
    assert result.stdout.startswith("# MCP 2025-11-25 → 2026-07-28")
    assert "- Removed: `initialize` — request, client → server" in result.stdout


@pytest.mark.parametrize(
    "command",
    [
        (),
        ("schema",),
        ("schema", "fetch"),
        ("schema", "add"),
        ("generate",),
        ("versions",),
        ("diff",),
        ("new",),
    ],
)
def test_every_command_shows_a_complete_example(command: tuple[str, ...]) -> None:
    result = cli(*command, "--help")
    assert result.returncode == 0
    assert "mcpgen " in result.stdout.split("Options:")[0], result.stdout  # an example line


def test_errors_are_one_line_with_a_hint_and_exit_code(tmp_path: Path, fetched: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    cases = [
        (("diff", "2025-11-25", "1999-01-01"), 2),
        (("new", "9lives"), 2),
        (("new", "json"), 2),
        (("new", "ok-name", "--versions", "1999-01-01"), 2),
        (("new", "taken", "--dir", str(tmp_path / "taken")), 5),
        (("generate", "--bogus"), 2),  # click's usage errors too, through the console script
        (("bogus",), 2),
    ]
    for args, code in cases:
        result = cli(*args, cwd=tmp_path)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "hint:" in lines[0], lines
    assert (tmp_path / "taken" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"], "nothing half-written"
    ok = cli("new", "taken", "--dir", str(tmp_path / "taken"), "--force", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert (
        not (tmp_path / "taken" / "keep.txt").exists()
        and (tmp_path / "taken" / "pyproject.toml").exists()
    )


def make_environment() -> dict[str, str]:
    """The environment of a ``make`` a test starts: nothing of a ``make`` the tests run
    under (``make tests``), nor its mirror, leaks in."""
    leaks = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MCPGEN_SCHEMA_SOURCE")
    return {k: v for k, v in os.environ.items() if k not in leaks}


def test_a_relative_schema_source_is_read_from_the_directory_it_was_given_in(
    tmp_path: Path,
) -> None:
    """``MCPGEN_SCHEMA_SOURCE=../mirror`` names the mirror beside the directory it was
    given in. mcpgen run there reads it; the Makefile, given it there, hands its recipes
    and their sub-makes the absolute path, which mcpgen run from anywhere else reads too
    (as tests in temporary directories do under ``make test``); given in a directory
    where it leads nowhere, the one-line error names the absolute path it looked at."""
    small = "2024-11-05"  # one schema file
    shutil.copytree(MIRROR / small, tmp_path / "mirror" / small)
    mirror = (tmp_path / "mirror").resolve()
    work = tmp_path / "work"
    elsewhere = tmp_path / "elsewhere" / "deeper"
    for directory in (work, elsewhere):
        directory.mkdir(parents=True)

    def fetch_small(cwd: Path, source: str, into: str) -> subprocess.CompletedProcess[str]:
        env = {"MCPGEN_SCHEMA_SOURCE": source, "MCPGEN_SCHEMA_DIR": str(tmp_path / into)}
        return cli("schema", "fetch", "--version", small, cwd=cwd, env=env)

    ran = fetch_small(work, "../mirror", "from-work")
    assert ran.returncode == 0, ran.stderr
    assert f"{small}: fetched" in ran.stdout

    def source_seen_by_make(given: str) -> list[str]:
        """What a recipe, and a sub-make in another directory, see of ``given``."""
        makefile = shlex.quote(str(ROOT / "Makefile"))
        show = 'mcpgen-source: ; @echo "$$MCPGEN_SCHEMA_SOURCE"'
        nested = (
            f"nested: ; @cd {shlex.quote(str(elsewhere))} && "
            f"$(MAKE) -s --no-print-directory -f {makefile} mcpgen-source"
        )
        made = subprocess.run(
            ["make", "-s", "-f", str(ROOT / "Makefile"), "--eval", show, "--eval", nested]
            + ["mcpgen-source", "nested", f"MCPGEN_SCHEMA_SOURCE={given}"],
            cwd=work,
            env=make_environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert made.returncode == 0, made.stderr
        return made.stdout.splitlines()

    assert source_seen_by_make("../mirror") == [str(mirror)] * 2
    ran = fetch_small(elsewhere, str(mirror), "from-elsewhere")
    assert ran.returncode == 0, ran.stderr
    assert f"{small}: fetched" in ran.stdout
    # a URL, and no mirror at all (the upstream URL), are passed on as given
    url = "http://127.0.0.1:9/mirror"
    assert source_seen_by_make(url) == [url] * 2
    assert source_seen_by_make("") == [""] * 2

    # the relative path given where it leads nowhere: one line naming where it looked
    ran = fetch_small(elsewhere, "../mirror", "nowhere")
    assert ran.returncode == EXIT_USAGE, (ran.stdout, ran.stderr)
    (line,) = ran.stderr.splitlines()
    looked = elsewhere.resolve().parent / "mirror"
    assert line.startswith(f"error: {looked}: not a directory"), line
    assert "MCPGEN_SCHEMA_SOURCE=../mirror" in line and str(elsewhere.resolve()) in line, line
    assert "(hint: " in line and "absolute path" in line, line
    assert not (tmp_path / "nowhere").exists(), "a failed fetch writes nothing"


#: Bad command lines of every kind click rejects, and what the one line must say.
BAD_USAGE = [
    pytest.param(("bogus",), "no such command 'bogus'", id="no-such-command"),
    pytest.param(("genrate",), "did you mean 'generate'?", id="misspelt-command"),
    pytest.param(("schema", "fecth"), "did you mean 'fetch'?", id="no-such-subcommand"),
    pytest.param(("generate", "--bogus"), "no such option '--bogus'", id="unknown-option"),
    pytest.param(("generate", "--chek"), "did you mean '--check'", id="misspelt-option"),
    pytest.param(("--bogus", "versions"), "no such option '--bogus'", id="unknown-group-option"),
    pytest.param(("diff", "2025-11-25"), "missing argument 'NEW'", id="missing-argument"),
    pytest.param(("schema", "add", "2099-01-01"), "missing option '--commit'", id="missing-option"),
    pytest.param(("diff", "a", "b", "--format", "xml"), "'xml' is not one of", id="bad-choice"),
    pytest.param(
        ("new", "x", "--transport", "pigeon"), "'pigeon' is not one of", id="bad-choice-2"
    ),
    pytest.param(("generate", "--jobs", "many"), "'many' is not a valid integer", id="not-an-int"),
    pytest.param(("generate", "--jobs", "0"), "0 is not between 1 and 64", id="out-of-range"),
    pytest.param(("generate", "--version"), "'--version' requires an argument", id="no-value"),
    pytest.param(("generate", "--check=yes"), "does not take a value", id="flag-with-value"),
    pytest.param(("diff", "a", "b", "c"), "unexpected extra argument", id="extra-argument"),
    pytest.param(("--schema-dir",), "'--schema-dir' requires an argument", id="no-schema-dir"),
    pytest.param(
        ("--schema-dir", str(ROOT / "README.md"), "versions"), "is a file", id="schema-dir-file"
    ),
    pytest.param(("schema", "add", "--era"), "'--era' requires an argument", id="no-era"),
    pytest.param(("bogus\x1b[31m\n",), "no such command", id="control-characters"),
]


@pytest.mark.parametrize("args, says", BAD_USAGE)
def test_usage_errors_are_one_line_with_a_hint_and_exit_2(
    args: tuple[str, ...], says: str, tmp_path: Path
) -> None:
    result = mcpgen(*args, cwd=tmp_path)
    assert result.returncode == EXIT_USAGE, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: mcpgen") and "(hint: " in line and line.endswith(")"), line
    assert "--help`" in line, line  # the hint names the help of the command at fault
    assert says in line, line
    assert "\x1b" not in line, "control characters are shown escaped"
    assert result.stdout == "" and "Usage:" not in result.stderr
    ok = mcpgen("versions", cwd=tmp_path)  # and then a good command works
    assert ok.returncode == 0 and ok.stdout.startswith("version"), ok.stderr
    assert list(tmp_path.iterdir()) == [], "a usage error writes nothing"


def test_help_and_version_are_not_errors() -> None:
    for args in (("--help",), ("-h",), ("schema", "--help"), ("schema", "add", "-h")):
        shown = mcpgen(*args)
        assert shown.returncode == 0 and shown.stdout.startswith("Usage: mcpgen"), args
        assert shown.stderr == ""
    version = mcpgen("--version")
    assert version.returncode == 0 and version.stdout.startswith("mcpgen, version ")
    # a group alone shows its help (click's convention), not a one-line error
    alone = mcpgen("schema")
    assert "Commands:" in alone.stdout + alone.stderr and "error:" not in alone.stderr


ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")


def _reads_environment(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Attribute)
        and n.attr in ("environ", "getenv")
        and isinstance(n.value, ast.Name)
        and n.value.id == "os"
        for n in ast.walk(node)
    )


def environment_variables_read() -> set[str]:
    """Every environment variable the generator reads: the upper-case string constants of
    each function that reads ``os.environ`` or calls ``os.getenv``, and the module-level
    constants such a function names (``SOURCE_ENV = "MCPGEN_SCHEMA_SOURCE"``)."""
    names: set[str] = set()
    for file in sorted((ROOT / "generator").glob("*.py")):
        tree = ast.parse(file.read_text())
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not _reads_environment(function):
                continue
            for n in ast.walk(function):
                value = None
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    value = n.value
                elif isinstance(n, ast.Name) and n.id in constants:
                    value = constants[n.id]
                if value is not None and ENV_NAME.fullmatch(value):
                    names.add(value)
    return names


def test_help_and_readme_list_every_environment_variable() -> None:
    names = environment_variables_read()
    assert {"MCPGEN_SCHEMA_SOURCE", "MCPGEN_SCHEMA_DIR", "MCPGEN_PINS"} <= names, names
    shown = mcpgen("--help").stdout
    page = (ROOT / "docs" / "spec-tracking.md").read_text()
    commands = page[page.index("## Commands") :]
    for name in sorted(names):
        # one line each in --help: the name, then what it sets
        assert re.search(rf"^ +{name} +\S", shown, re.MULTILINE), (name, shown)
        assert f"`{name}`" in commands, name
    assert "per-user cache" in shown and "current directory" in shown
    out = mcpgen("generate", "--help").stdout
    assert "default: the current directory" in " ".join(out.split())


def test_a_new_spec_revision_needs_no_code_change(tmp_path: Path, fetched: Path) -> None:
    """A synthetic version (draft plus one field and one method) goes through the pin
    mechanism and reaches diff, generate, the dispatch table and the typed stubs."""

    def revised(schema: dict[str, Any]) -> None:
        defs = schema["$defs"]
        defs["Tool"]["properties"]["category"] = {
            "type": "string",
            "description": "Where the tool belongs.",
        }
        defs["HealthCheckRequest"] = {
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0", "type": "string"},
                "id": {"$ref": "#/$defs/RequestId"},
                "method": {"const": "health/check", "type": "string"},
                "params": {"$ref": "#/$defs/RequestParams"},
            },
            "required": ["jsonrpc", "id", "method"],
        }
        defs["HealthCheckResult"] = {"$ref": "#/$defs/Result"}
        defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/HealthCheckRequest"})

    mirror, env = synthetic_revision(tmp_path, "2099-01-01", fetched, revised)

    added = cli(
        "schema", "add", "2099-01-01", "--commit", "abcdef1", "--from", str(mirror), env=env
    )
    assert added.returncode == 0, added.stderr
    # The fixes draft needs follow it to its new name (patches are keyed by their tests).
    assert "patches it needs: jsonvalue-scalars, elicit-result-number-2020" in added.stdout
    # ... and, compared with the nearest pinned revision of its era, no fix and no
    # override rule lost its target (the legacy era's rules are not listed).
    assert "nearest pinned revision of the modern era: draft" in added.stdout
    assert "patches draft needs and it does not: none" in added.stdout
    assert "overrides that act on draft and find nothing in it: none" in added.stdout
    listed = cli("versions", env=env)
    assert "2099-01-01  modern" in listed.stdout

    d = json.loads(cli("diff", "draft", "2099-01-01", "--format", "json", env=env).stdout)
    assert d["definitions"]["added"] == ["HealthCheckRequest", "HealthCheckResult"]
    tool = next(c for c in d["definitions"]["changed"] if c["name"] == "Tool")
    assert tool["changes"] == [{"field": "category", "change": "added", "after": "string"}]
    assert [m["method"] for m in d["methods"]["added"]] == ["health/check"]

    out = tmp_path / "out"
    made = cli(
        "generate", "--version", "2099-01-01", "--package", "future.mcp", "--out", str(out), env=env
    )
    assert made.returncode == 0, made.stderr
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "from future.mcp.v2099_01_01 import methods, server, client, types as t\n"
            "spec = methods.CLIENT_REQUESTS['health/check']\n"
            "assert spec.result is t.HealthCheckResult and spec.handler == 'health_check'\n"
            "assert hasattr(server.ServerHandlers, 'health_check')\n"
            "assert hasattr(client.Client, 'health_check')\n"
            'tool = t.decode(b\'{"name":"x","inputSchema":{"type":"object"},"category":"c"}\', t.Tool)\n'
            "assert tool.category == 'c'\n"
            "print('ok')",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(out)},
        timeout=60,
    )
    assert check.stdout.strip() == "ok", check.stderr
