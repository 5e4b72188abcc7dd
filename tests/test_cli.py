"""The user-facing CLI: versions, diff, new, help text, and a new spec revision landing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import MIRROR, ROOT
from mcpgen.generator.pins import PINS_FILE


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


def test_a_failed_scaffold_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.generator import scaffold

    def broken(*args: Any, **kwargs: Any) -> list[Path]:
        raise RuntimeError("disk full")

    monkeypatch.setattr(scaffold, "generate", broken)
    with pytest.raises(RuntimeError):
        scaffold.new_project("half-done", directory=tmp_path / "half-done")
    assert list(tmp_path.iterdir()) == []


def test_new_project_installs_serves_and_passes_its_tests(tmp_path: Path, fetched: Path) -> None:
    """Scaffold, install into a fresh virtual environment, call the tool with the official
    SDK client over stdio, and run the project's own tests."""
    result = cli("new", "demo-server", "--transport", "both", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    project = tmp_path / "demo-server"
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-e", f"{project}[test]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    script = env_dir / "bin" / "demo-server"
    assert script.exists()

    async def sdk_client() -> None:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=str(script), args=[])
        with anyio.fail_after(30):
            async with Client(params, mode="legacy") as client:
                tools = await client.list_tools()
                assert [t.name for t in tools.tools] == ["greet"]
                called = await client.call_tool("greet", {"name": "SDK"})
                assert called.content[0].text == "Hello, SDK!"  # type: ignore[union-attr]

    anyio.run(sdk_client)
    own_tests = subprocess.run(
        [str(env_dir / "bin" / "pytest"), "-q"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert own_tests.returncode == 0, own_tests.stdout[-2000:]
    assert "1 passed" in own_tests.stdout


def test_a_new_spec_revision_needs_no_code_change(tmp_path: Path, fetched: Path) -> None:
    """A synthetic version (draft plus one field and one method) goes through the pin
    mechanism and reaches diff, generate, the dispatch table and the typed stubs."""
    mirror = tmp_path / "mirror"
    shutil.copytree(
        MIRROR / "draft", mirror / "2099-01-01", ignore=shutil.ignore_patterns("examples")
    )
    schema_file = mirror / "2099-01-01" / "schema.json"
    schema = json.loads(schema_file.read_text())
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
    schema_file.write_text(json.dumps(schema))
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    env = {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}
    shutil.copytree(fetched / "draft", tmp_path / "schema" / "draft")

    added = cli(
        "schema", "add", "2099-01-01", "--commit", "abcdef1", "--from", str(mirror), env=env
    )
    assert added.returncode == 0, added.stderr
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
