"""The README's and the guides' python blocks that need real processes and sockets: run as
``python FILE``, served over Streamable HTTP as a process, and the OAuth client's flows
against an authorization server and a protected server on 127.0.0.1. Which block is run
how: ``doc_blocks``; the in-process ones: test_docs.py."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import socket
import subprocess
import sys
import webbrowser
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from support import doc_blocks
from support.doc_blocks import Block
from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.runtime.client import http_client
from support.processes import announced_http

pytestmark = pytest.mark.slow
TIMEOUT = 60


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def run_script(block: Block, tmp_path: Path, *_: Any) -> None:
    """``python FILE`` in the folder of named blocks: it ends well and prints what it says."""
    assert block.file is not None
    folder = doc_blocks.write_named(tmp_path)
    done = subprocess.run(
        [sys.executable, block.file], cwd=folder, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    said = doc_blocks.printed(block.code)
    assert said, f"{block.where}: a script says what it prints"
    assert done.stdout.splitlines() == said


def run_calculator_http(block: Block, tmp_path: Path, *_: Any) -> None:
    """``python server.py PORT`` serves Streamable HTTP: its tools, resource and prompt
    answer a client of either era."""
    assert block.file is not None
    folder = doc_blocks.write_named(tmp_path)

    async def call(url: str, mode: str) -> list[Any]:
        async with http_client(c.Client, url, mode=mode) as client:  # type: ignore[arg-type]
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            added = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
            divided = await client.call_tool(name="divide", arguments={"a": 1, "b": 0})
            note = await client.read_resource(uri="notes://groceries")
            prompt = await client.get_prompt(name="explain", arguments={"topic": "MCP"})
            return [
                tools,
                added.structured_content,
                divided.is_error,
                getattr(note.contents[0], "text", None),
                getattr(prompt.messages[0].content, "text", None),
            ]

    with announced_http([sys.executable, block.file, "0"], folder) as url:
        for mode in ("auto", "legacy"):
            assert run(call(url, mode)) == [
                ["add", "divide"],
                {"result": 5},
                True,
                "This is note groceries.",
                "Explain MCP in one paragraph.",
            ]


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[int]:
    """``app`` served by uvicorn in this event loop on 127.0.0.1; its port."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not task.done(), "uvicorn stopped while starting"
            await asyncio.sleep(0.02)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


class ApprovingBrowser(webbrowser.BaseBrowser):
    """A person who approves at once: follows the authorization URL to the redirect."""

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        with httpx.Client(timeout=10) as http:
            answer = http.get(url, follow_redirects=False)
            return http.get(answer.headers["location"]).status_code == 200


def run_oauth_client(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Both flows against the test authorization server and a protected server, served on
    127.0.0.1: the user signs in through the (default) browser, registering the client;
    the agent authenticates with an ES256 client assertion. Each lists the tools."""
    from joserfc.jwk import ECKey
    from support.oauth_world import AuthServer, Resource, World, mcp_app

    key = ECKey.generate_key("P-256")
    pem = key.as_pem(private=True).decode()
    # the browser webbrowser.open finds first (the flow's default opens it)
    for registry in ("_tryorder", "_browsers"):  # webbrowser's own, put back afterwards
        monkeypatch.setattr(webbrowser, registry, copy.copy(getattr(webbrowser, registry)))
    webbrowser.register("approving", None, ApprovingBrowser("approving"), preferred=True)
    namespace: dict[str, Any] = {"__name__": "docs_oauth_client"}
    exec(compile(block.code, block.where, "exec"), namespace)

    async def scenario() -> list[str]:
        place = World({})
        async with served(place) as as_port, served(place) as rs_port:
            server = AuthServer(
                issuer=f"http://127.0.0.1:{as_port}",
                auth_methods=["none", "private_key_jwt"],
                assertion_keys={"my-agent": key},
            )
            url = f"http://127.0.0.1:{rs_port}/mcp"
            resource = Resource(mcp_app(), [server], url=url, prm_scopes=["mcp:read"])
            place.apps.update({server.host: server, resource.host: resource})
            await namespace["as_a_user"](url)
            await namespace["as_an_agent"](url, pem)
            return [entry["grant_type"] for entry in server.seen("token")]

    grants = run(scenario())
    assert grants == ["authorization_code", "client_credentials"]
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 2 and all("name='read'" in line for line in listed), listed


RUNNERS: dict[str, Callable[..., None]] = {
    "script": run_script,
    "calculator-http": run_calculator_http,
    "oauth-client": run_oauth_client,
}


def test_this_module_has_a_runner_for_each_of_its_names() -> None:
    mine = {name for name, module in doc_blocks.RUNNERS.items() if module == __name__}
    assert set(RUNNERS) == mine


@pytest.mark.parametrize(
    "block",
    doc_blocks.run_by("test_docs_processes"),
    ids=lambda block: f"{block.where}-{block.runner}",
)
def test_the_block_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    assert block.runner is not None
    RUNNERS[block.runner](block, tmp_path, monkeypatch, capsys)
