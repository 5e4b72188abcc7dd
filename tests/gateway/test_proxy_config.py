"""Upstreams from a configuration file (JSON or TOML, the ``mcpServers`` shape hosts
use): what each key becomes, a proxy serving what a file names, and every bad file a
one-line error naming its key, from ``load_config`` and from ``mcpgen proxy --config``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime.gateway import Proxy, Upstream
from mcpgen.runtime.gateway.config import ConfigError, load_config, mounts_from
from mcpgen.runtime.testing import connect
from support.app_scenarios import plain
from support.checkout import ROOT
from support.cli_runner import mcpgen

SERVERS: dict[str, Any] = {
    "mcpServers": {
        "adder": {"command": sys.executable, "args": [str(ROOT / "tests/peers/add_app.py")]},
        "slow": {
            "command": sys.executable,
            "args": ["-m", "tests.peers.slow_server"],
            "cwd": str(ROOT),
            "env": {"SLOW_SERVER_NOTE": "from the config"},
            "mode": "legacy",
            "perSession": True,
            "hiddenTools": ["boom"],
        },
        "remote": {
            "url": "https://mcp.example/mcp",
            "headers": {"Authorization": "Bearer x"},
            "type": "sse",
            "prefix": "far",
            "tools": ["search"],
        },
        "off": {"command": "nothing", "disabled": True},
    }
}


def test_each_key_of_a_server_becomes_what_it_names(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(SERVERS))
    adder, slow, remote = load_config(path)
    assert (adder.at, adder.upstream.command) == ("adder", sys.executable)
    assert adder.upstream.args == (str(ROOT / "tests/peers/add_app.py"),)
    assert slow.upstream.mode == "legacy" and slow.upstream.per_session
    assert slow.upstream.env == {"SLOW_SERVER_NOTE": "from the config"}
    assert slow.upstream.cwd == str(ROOT) and slow.hidden_tools == {"boom"}
    assert remote.at == "far" and remote.tools == {"search"}
    assert remote.upstream.url == "https://mcp.example/mcp"
    assert remote.upstream.transport == "sse"
    assert remote.upstream.headers == {"Authorization": "Bearer x"}


def test_a_toml_file_reads_as_its_json_twin(tmp_path: Path) -> None:
    path = tmp_path / "servers.toml"
    path.write_text(
        "[mcpServers.adder]\n"
        'command = "python"\n'
        'args = ["add_app.py"]\n'
        "[mcpServers.remote]\n"
        'url = "http://127.0.0.1:3001/mcp"\n'
        'mode = "modern"\n'
    )
    adder, remote = load_config(path)
    assert adder.upstream.args == ("add_app.py",) and adder.at == "adder"
    assert remote.upstream.mode == "modern"


def test_one_server_is_served_under_no_prefix() -> None:
    (only,) = mounts_from({"servers": {"adder": {"command": "python"}}})
    assert only.at == ""


#: A bad configuration → what its one-line error must say.
BAD: list[tuple[Any, str]] = [
    ([], "must be an object holding mcpServers"),
    ({"mcpServers": []}, "mcpServers: must be an object of servers by name"),
    ({"mcpServers": {}}, "mcpServers: names no server"),
    ({"mcpServers": {"a": "python"}}, "mcpServers.a: must be an object"),
    ({"mcpServers": {"a": {"command": "x", "argv": []}}}, "mcpServers.a.argv: unknown key"),
    ({"mcpServers": {"a": {"command": "x", "args": "-m x"}}}, "mcpServers.a.args: must be a list"),
    (
        {"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}},
        "mcpServers.a.env: must be an object of strings",
    ),
    (
        {"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}},
        "exactly one of command and url",
    ),
    ({"mcpServers": {"a": {"args": []}}}, "mcpServers.a: give exactly one of command and url"),
    ({"mcpServers": {"a": {"url": "ftp://h"}}}, "mcpServers.a.url: must start with"),
    ({"mcpServers": {"a": {"command": "x", "mode": "old"}}}, "mcpServers.a.mode: must be one of"),
    (
        {"mcpServers": {"a": {"url": "http://h", "type": "grpc"}}},
        "mcpServers.a.type: must be one of",
    ),
    (
        {"mcpServers": {"a": {"command": "x", "perSession": "yes"}}},
        "perSession: must be true or false",
    ),
    ({"mcpServers": {"a": {"command": ""}}}, "mcpServers.a.command: must be a non-empty string"),
]


@pytest.mark.parametrize(("data", "said"), BAD, ids=[s for _, s in BAD])
def test_a_bad_configuration_is_one_line_naming_its_key(data: Any, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        mounts_from(data, "servers.json")
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).startswith("servers.json")


def test_mcpgen_proxy_says_what_is_wrong_with_a_file_in_one_line(tmp_path: Path) -> None:
    cases = {
        "bad.json": json.dumps({"mcpServers": {"a": {"command": "x", "args": 3}}}),
        "clash.json": json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "x", "prefix": "p"},
                    "b": {"url": "http://h", "prefix": "p"},
                }
            }
        ),
        "broken.json": "{",
        "broken.toml": "[mcpServers",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        ran = mcpgen("proxy", "--config", str(tmp_path / name))
        assert ran.returncode == 2, (name, ran)
        (line,) = ran.stderr.splitlines()
        assert line.startswith("error: ") and name in line, line
    ran = mcpgen("proxy", "--config", str(tmp_path / "absent.json"))
    assert ran.returncode == 2 and "absent.json" in ran.stderr
    ran = mcpgen("proxy")
    assert ran.returncode == 2 and "missing UPSTREAM" in ran.stderr
    ran = mcpgen("proxy", "--config", str(tmp_path / "bad.json"), "http://h/mcp")
    assert ran.returncode == 2 and "not both" in ran.stderr


@pytest.mark.slow
def test_a_proxy_serves_every_server_a_file_names(tmp_path: Path) -> None:
    """Two stdio servers from a file, each under its name, called through the proxy."""
    path = tmp_path / "servers.json"
    named = {"adder": SERVERS["mcpServers"]["adder"], "slow": SERVERS["mcpServers"]["slow"]}
    path.write_text(json.dumps({"mcpServers": named}))

    async def scenario() -> None:
        async with Proxy(load_config(path)) as proxy:
            async with connect(proxy.server, mode="auto") as client:
                listed = [tool.name for tool in (await client.list_tools()).tools]
                assert "adder_add" in listed and "slow_sleep" in listed
                assert "slow_boom" not in listed
                added = await client.call_tool(name="adder_add", arguments={"a": 2, "b": 5})
                assert plain(added)["structuredContent"] == {"result": 7}
                who = await client.call_tool(name="slow_whoami", arguments={})
                assert json.loads(plain(who)["content"][0]["text"])["protocolVersion"] == (
                    "2025-11-25"
                )

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.slow
def test_mcpgen_proxy_whose_upstream_cannot_be_reached_says_so_in_one_line() -> None:
    """An upstream command that exits at once, one that does not exist, and a URL nobody
    answers: exit 7 and one line naming the upstream, no traceback; the proxy then starts
    in front of an upstream that answers."""
    upstreams = {
        "exits": ["--", sys.executable, "-c", "raise SystemExit(3)"],
        "/nonexistent/mcp-server": ["--", "/nonexistent/mcp-server"],
        "http://127.0.0.1:9/mcp": ["http://127.0.0.1:9/mcp"],
    }
    for named, words in upstreams.items():
        ran = mcpgen("proxy", "--transport", "stdio", "--timeout", "10", *words)
        assert ran.returncode == 7, (named, ran)
        (line,) = ran.stderr.splitlines()
        assert line.startswith("error: ") and "(hint: " in line, line
        assert "upstream" in line and (named in line or sys.executable in line), line
    adder = SERVERS["mcpServers"]["adder"]

    async def scenario() -> None:
        async with Proxy(Upstream.of([adder["command"], *adder["args"]])) as proxy:
            async with connect(proxy.server, mode="auto") as client:
                added = await client.call_tool(name="add", arguments={"a": 2, "b": 5})
                assert plain(added)["structuredContent"] == {"result": 7}

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_mcpgen_proxy_auth_options_go_together_and_only_over_http() -> None:
    ran = mcpgen("proxy", "--auth-issuer", "https://login.example", "http://h/mcp")
    assert ran.returncode == 2 and "go together" in ran.stderr
    ran = mcpgen(
        "proxy",
        "--auth-issuer",
        "https://login.example",
        "--auth-audience",
        "https://mcp.example/mcp",
        "http://h/mcp",
    )
    assert ran.returncode == 2 and "not stdio" in ran.stderr


def test_mcpgen_proxy_task_options_reach_the_proxy() -> None:
    """``--task-after 0`` makes every tool one the proxy runs as a task (a 2025-11-25
    client sees ``taskSupport: optional`` and gets a task); a negative value is refused."""
    ran = mcpgen("proxy", "--task-after", "-5", "http://h/mcp")
    assert ran.returncode == 2 and "--task-after" in ran.stderr
    shown = mcpgen("proxy", "--help").stdout
    assert "--task-after" in shown and "--strict-tasks" in shown

    async def scenario() -> None:
        from mcpgen.generated.v2025_11_25.client import Client
        from mcpgen.runtime.client import ClientSession, stdio_client

        command = ["-m", "mcpgen", "proxy", "--task-after", "0", "--strict-tasks", "--"]
        command += [sys.executable, str(ROOT / "tests/peers/add_app.py")]
        async with stdio_client(Client, sys.executable, command, cwd=str(ROOT)) as client:
            session = client.session
            assert isinstance(session, ClientSession)
            listed = plain(await session.request("tools/list", {}))
            assert {t["execution"]["taskSupport"] for t in listed["tools"]} == {"optional"}
            name = listed["tools"][0]["name"]
            handle = await session.call_tool_as_task(name, {"a": 2, "b": 3})
            assert not handle.immediate
            assert plain(await handle.result())["structuredContent"] == {"result": 5}

    asyncio.run(asyncio.wait_for(scenario(), 60))
