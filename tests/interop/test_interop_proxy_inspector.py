"""The official MCP inspector's CLI (``mcp-inspector --cli``, pinned as ``INSPECTOR`` in
``tests/support/node_tools.py``) uses MCP servers through ``mcpgen proxy --transport http``,
in each protocol era it speaks and over both HTTP transports the proxy serves.

What the pinned inspector (2.12.0, the newest on npm when this was written; its client is
``@modelcontextprotocol/client`` 2.3.1) speaks, from its ``--help`` and its source:

* eras, chosen by ``--protocol-era``: ``legacy`` (the default for a URL given on the command
  line) is the ``initialize`` handshake offering 2025-11-25 (the SDK also accepts 2025-06-18,
  2025-03-26, 2024-11-05 and 2024-10-07 from a server); ``modern`` pins 2026-07-28, the
  stateless revision (a ``server/discover`` probe, then ``_meta`` envelopes on every
  request, no fallback); ``auto`` probes with ``server/discover`` and falls back to the
  handshake. No other option concerns the revision.
* transports: ``--transport http`` (Streamable HTTP, the default for a ``/mcp`` URL),
  ``--transport sse`` (the 2024-11-05 HTTP+SSE transport: GET ``/sse``, then POSTs to the
  endpoint it announces; default for a ``/sse`` URL) and ``stdio``. Both eras run over both
  HTTP transports: in the modern era the inspector posts ``server/discover`` and its
  enveloped requests to the SSE messages endpoint too.
* ``--method initialize`` prints the version it negotiated; ``--format json -q`` prints the
  result alone as ``{"result": …}`` (an error as ``{"error": …}`` on stderr, exit ≠ 0).

So every pair below crosses the proxy's bridge between eras: the inspector speaks one era
to the proxy, the proxy the other to its upstream (``--upstream-mode``), in front of
``python -m examples.everything`` on stdio, which speaks both. The TypeScript reference
server, server-everything (stdio, pinned as in ``test_interop_proxy.py``), answers only the
handshake (``server/discover`` is "Method not found"), so the proxy in front of it pins
``legacy`` and the inspector's modern era is the crossing there.

Each proxy starts once for the module on 127.0.0.1 (``--port 0``; its address read from
what it announces, within a bound: ``support.processes.announced_http``) and is stopped
at the end; every inspector run is
bounded in time and runs with a HOME of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.checkout import ROOT
from support.node_tools import INSPECTOR, SERVER_EVERYTHING, node_bin, node_env, npm_package
from support.processes import announced_http

pytestmark = [pytest.mark.slow]

#: Seconds one inspector run may take (each takes about a second).
RUN_TIMEOUT = 60
#: The version each of the inspector's eras negotiates.
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
#: The era the proxy speaks to the upstream while the inspector speaks the key.
OTHER = {"legacy": "modern", "modern": "legacy"}
#: Where each transport is served by the proxy, below its base URL.
PATHS = {"http": "/mcp", "sse": "/sse"}
SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."
SIMPLE_PROMPT = "This is a simple prompt for testing."


def server_everything() -> Path:
    folder = npm_package(SERVER_EVERYTHING)
    dist = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
    return dist / "index.js"


@contextmanager
def proxy(upstream_mode: str, upstream: Sequence[str]) -> Iterator[str]:
    """``mcpgen proxy --transport http --port 0 --upstream-mode MODE -- UPSTREAM…`` until
    the block ends: its base URL (``/mcp`` and ``/sse`` below it)."""
    command = [sys.executable, "-m", "mcpgen", "proxy", "--transport", "http", "--port", "0"]
    command += ["--upstream-mode", upstream_mode, "--", *upstream]
    with announced_http(command, ROOT) as url:
        yield url.removesuffix("/mcp")


@dataclass(frozen=True)
class Endpoint:
    """One proxy endpoint and the era the inspector speaks to it."""

    base: str
    era: str
    transport: str
    home: Path

    @property
    def url(self) -> str:
        return self.base + PATHS[self.transport]

    def inspect(self, *args: str, era: str | None = "") -> Any:
        """Run ``mcp-inspector --cli`` with ``args`` on this endpoint in its era (``era``
        instead when given; None: no ``--protocol-era``, the inspector's default): the
        result it prints."""
        folder = npm_package(INSPECTOR)
        launcher = folder / "node_modules" / ".bin" / "mcp-inspector"
        command = [str(launcher), "--cli", self.url, "--transport", self.transport]
        chosen = self.era if era == "" else era
        if chosen is not None:
            command += ["--protocol-era", chosen]
        done = subprocess.run(
            [*command, "--format", "json", "-q", *args],
            cwd=folder,
            env={**node_env(), "HOME": str(self.home)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
        assert done.returncode == 0, (command, args, done.stdout[-2000:], done.stderr[-2000:])
        return json.loads(done.stdout)["result"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The inspector's HOME (it keeps ``~/.mcp-inspector`` there), not the user's."""
    return tmp_path_factory.mktemp("inspector-home")


@pytest.fixture(scope="module", params=["legacy", "modern"], ids=lambda era: f"inspector-{era}")
def crossing(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """The inspector's era and the base URL of a proxy in front of ``examples.everything``
    that speaks the other era to it."""
    era: str = request.param
    with proxy(OTHER[era], [sys.executable, "-m", "examples.everything"]) as base:
        yield era, base


@pytest.fixture(params=["http", "sse"])
def endpoint(request: pytest.FixtureRequest, crossing: tuple[str, str], home: Path) -> Endpoint:
    era, base = crossing
    return Endpoint(base, era, request.param, home)


@pytest.fixture(scope="module")
def ts_everything() -> Iterator[str]:
    """The base URL of a proxy in front of the TypeScript server-everything (stdio), to
    which the proxy speaks the handshake, the only era it answers."""
    upstream = [str(node_bin() / "node"), str(server_everything()), "stdio"]
    with proxy("legacy", upstream) as base:
        yield base


def test_the_inspector_negotiates_its_own_era_with_the_proxy(endpoint: Endpoint) -> None:
    """The inspector gets the version of its era from the proxy, whatever the proxy
    speaks to the upstream, and sees the upstream's name."""
    shown = endpoint.inspect("--method", "initialize")
    assert shown["protocolVersion"] == VERSIONS[endpoint.era]
    assert shown["serverInfo"]["name"] == "mcpgen-everything"
    assert shown["capabilities"]["tools"] is not None


def test_the_inspector_lists_and_calls_a_tool_across_eras(endpoint: Endpoint) -> None:
    """tools/list and tools/call reach an upstream of the other era through the proxy."""
    tools = endpoint.inspect("--method", "tools/list")["tools"]
    assert {"test_simple_text", "test_elicitation"} <= {tool["name"] for tool in tools}
    called = endpoint.inspect("--method", "tools/call", "--tool-name", "test_simple_text")
    assert called["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    assert not called.get("isError")


def test_the_inspector_reads_a_resource_across_eras(endpoint: Endpoint) -> None:
    """resources/read of ``test://static-text`` gives its text through the proxy."""
    read = endpoint.inspect("--method", "resources/read", "--uri", "test://static-text")
    assert read["contents"] == [
        {"uri": "test://static-text", "mimeType": "text/plain", "text": STATIC_TEXT}
    ]


def test_the_inspector_gets_a_prompt_across_eras(endpoint: Endpoint) -> None:
    """prompts/get of a prompt without arguments gives its user message through the
    proxy."""
    got = endpoint.inspect("--method", "prompts/get", "--prompt-name", "test_simple_prompt")
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": SIMPLE_PROMPT}}]


def test_the_inspectors_automatic_negotiation_finds_2026_07_28_at_the_proxy(
    endpoint: Endpoint,
) -> None:
    """The inspector's ``auto`` era probes with ``server/discover``, which the proxy
    answers, so it settles on 2026-07-28; with no ``--protocol-era`` it keeps to the
    2025-11-25 handshake."""
    assert endpoint.inspect("--method", "initialize", era="auto")["protocolVersion"] == (
        "2026-07-28"
    )
    assert endpoint.inspect("--method", "initialize", era=None)["protocolVersion"] == ("2025-11-25")


@pytest.mark.parametrize("transport", ["http", "sse"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_calls_the_typescript_reference_server_through_the_proxy(
    ts_everything: str, home: Path, era: str, transport: str
) -> None:
    """The inspector, in either era, lists server-everything's tools and calls ``echo``
    and ``get-sum``, reads its first resource and gets its simple prompt through the
    proxy, which speaks the handshake to it."""
    endpoint = Endpoint(ts_everything, era, transport, home)
    shown = endpoint.inspect("--method", "initialize")
    assert shown["protocolVersion"] == VERSIONS[era]
    assert shown["serverInfo"]["name"] == "mcp-servers/everything"
    tools = endpoint.inspect("--method", "tools/list")["tools"]
    assert {"echo", "get-sum"} <= {tool["name"] for tool in tools}
    echoed = endpoint.inspect(
        "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=through the proxy"
    )
    assert echoed["content"] == [{"type": "text", "text": "Echo: through the proxy"}]
    total = endpoint.inspect(
        "--method", "tools/call", "--tool-name", "get-sum", "--tool-args-json", '{"a": 2, "b": 40}'
    )
    assert total["content"] == [{"type": "text", "text": "The sum of 2 and 40 is 42."}]
    resources = endpoint.inspect("--method", "resources/list")["resources"]
    assert resources
    read = endpoint.inspect("--method", "resources/read", "--uri", resources[0]["uri"])
    assert read["contents"][0]["uri"] == resources[0]["uri"]
    prompts = {p["name"] for p in endpoint.inspect("--method", "prompts/list")["prompts"]}
    assert "simple-prompt" in prompts
    got = endpoint.inspect("--method", "prompts/get", "--prompt-name", "simple-prompt")
    assert got["messages"] and got["messages"][0]["role"] == "user"
