"""Every message our servers send is valid at the protocol version in use.

Two servers, ``examples.everything`` and a fresh ``mcpgen new`` scaffold, each over stdio
and over Streamable HTTP, are driven by ten clients: the official SDK client (``mcp`` 2.3)
in its default ``auto`` mode and in ``legacy`` mode offering each handshake version, and our
runtime's client with the generated ``Client`` of each dated version; over HTTP+SSE and
WebSocket, by ours. Each lists and uses
everything the server offers: every tool (arguments valid for its input schema), resource,
resource template and prompt, completion, ping, ``logging/setLevel`` and subscriptions in
the legacy era, ``subscriptions/listen`` in the modern one; it answers sampling, elicitation
and roots validly.

What the server sends is taken off the wire (:mod:`support.wire_capture`: a tee process on stdio, a
recording ASGI middleware on HTTP, HTTP+SSE and WebSocket) and checked by ``jsonschema`` against the official schema
of the version that exchange used (:mod:`support.wire_oracle`): a result against the result
definition of the request it answers, an error against the JSON-RPC error definition (and
its code's own), a server request or notification against its method's definition, each
against the envelope too. The counts go to the report printed at the end of the run.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp.client.session as sdk_session
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from support.checkout import REPORT, ROOT
from mcpgen.runtime.http.endpoint import McpHttpApp
from mcpgen.runtime.client import http_client, stdio_client, websocket_client
from support.wire_capture import Recording, serving, stdio_messages, stop_captured
from support.wire_clients import HANDSHAKE, Drive, Ours, Sdk, drive, on_log, our_client
from support.wire_clients import sdk_elicit, sdk_roots, sdk_sampling
from support.wire_oracle import VERSION_KEY, Oracle, Sent, Wire, shorten

TEE = ROOT / "tests" / "support" / "wire_capture.py"
DATED = [*HANDSHAKE, "2026-07-28"]
SCAFFOLD = "wire-probe"
#: Bound of one whole session: connect, drive, shut down.
SESSION_TIMEOUT = 60.0

pytestmark = [
    # Slow: real servers and clients over pipes and sockets (``make unit`` leaves it out).
    pytest.mark.slow,
    pytest.mark.anyio,
    # The SDK marks ping, logging, sampling, roots and elicitation deprecated at 2026-07-28.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@dataclass(frozen=True)
class Peer:
    """A client: the SDK's or ours (``mcpgen``), its mode, and the version it offers."""

    kind: str
    mode: str
    version: str | None = None

    @property
    def label(self) -> str:
        offers = f" offering {self.version}" if self.version else ""
        return f"{self.kind} {self.mode}{offers}"


PEERS = [
    Peer("sdk", "auto"),
    *(Peer("sdk", "legacy", v) for v in HANDSHAKE),
    *(Peer("mcpgen", "legacy", v) for v in HANDSHAKE),
    Peer("mcpgen", "auto", "2026-07-28"),
]


@dataclass(frozen=True)
class Target:
    """A server: its package (run with ``-m`` from ``cwd``) and the versions it speaks."""

    name: str
    module: str
    cwd: Path
    versions: tuple[str, ...] = tuple(DATED)

    def build(self) -> Any:
        """The server object, in this process (for HTTP)."""
        if str(self.cwd) not in sys.path:
            sys.path.insert(0, str(self.cwd))
        main = importlib.import_module(f"{self.module}.__main__")
        if hasattr(main, "build_server"):  # examples.everything
            return main.build_server()
        return importlib.import_module(f"{self.module}.server").app.server  # a scaffold


EVERYTHING = Target("everything", "examples.everything", ROOT)


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(ROOT / "schema")


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    project = tmp_path_factory.mktemp("scaffold") / SCAFFOLD
    made = subprocess.run(
        [sys.executable, "-m", "mcpgen", "new", SCAFFOLD, "--dir", str(project)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    module = SCAFFOLD.replace("-", "_")
    vendored = sorted(p.name for p in (project / module / "mcp").glob("v2*"))
    versions = tuple(name[1:].replace("_", "-") for name in vendored)
    yield Target("scaffold", module, project, versions)
    with contextlib.suppress(ValueError):
        sys.path.remove(str(project))


# -- one session, recorded --------------------------------------------------------------


@contextlib.contextmanager
def offering(peer: Peer) -> Iterator[None]:
    """The SDK client offers ``peer.version`` in ``initialize`` (the module global its
    ``ClientSession.initialize`` reads at call time; restored afterwards)."""
    with pytest.MonkeyPatch.context() as patch:
        if peer.kind == "sdk" and peer.version is not None:
            patch.setattr(sdk_session, "LATEST_HANDSHAKE_VERSION", peer.version)
        yield


async def run_peer(
    peer: Peer, target: Target, url: str | None, capture: Path, d: Drive, transport: str = "http"
) -> None:
    """Connect ``peer`` to ``url`` over ``transport``, or over stdio through the tee
    (recording to ``capture``), and drive everything the server offers."""
    tee = [str(TEE), str(capture), "--", sys.executable, "-m", target.module]
    tee += ["--transport", "stdio"]
    if peer.kind == "sdk":
        # The SDK gives its child a minimal environment; keep an import path if one is set.
        env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
        stdio = StdioServerParameters(
            command=sys.executable, args=tee, cwd=str(target.cwd), env=env or None
        )
        with offering(peer):
            async with SdkClient(
                url or stdio,
                mode=peer.mode,
                log_level="debug" if peer.mode == "auto" else None,
                sampling_callback=sdk_sampling,
                elicitation_callback=sdk_elicit,
                list_roots_callback=sdk_roots,
                logging_callback=on_log,
            ) as c:
                api = Sdk(c)
                async with contextlib.AsyncExitStack() as stack:
                    if not api.legacy:  # the trigger tools' change notifications ride it
                        changes = c.listen(
                            tools_list_changed=True,
                            prompts_list_changed=True,
                            resources_list_changed=True,
                        )
                        await d.attempt("listen", lambda: stack.enter_async_context(changes))
                    await drive(api, d)
        return
    assert peer.version is not None
    client_class, handlers = our_client(peer.version)
    options: dict[str, Any] = {"handlers": handlers, "mode": peer.mode, "versions": [peer.version]}
    if url is None:
        connect = stdio_client(client_class, sys.executable, tee, cwd=str(target.cwd), **options)
    elif transport == "websocket":
        connect = websocket_client(client_class, "ws" + url.removeprefix("http"), **options)
    elif transport == "sse":
        connect = http_client(client_class, url.removesuffix("/mcp") + "/sse", **options)
    else:
        connect = http_client(client_class, url, transport="streamable-http", **options)
    async with connect as client:
        await drive(Ours(client, handlers.types), d)


# -- the counts and the test -----------------------------------------------------------

#: (group, key) → [valid, total], over the whole run; printed by ``conftest``.
TALLY: dict[tuple[str, str], list[int]] = {}
#: What each session that settles a version must have had answered with a result.
COVERED = {"tools/list", "tools/call", "resources/list", "resources/read", "prompts/list"}
COVERED |= {"prompts/get"}


def tally(sent: list[Sent], peer: Peer, where: str) -> None:
    for s in sent:
        name = f"{s.method} {s.kind}" if s.kind in ("result", "error") else s.method or s.kind
        for key in (
            ("total", ""),
            ("server", where),
            ("client", f"{peer.label} @ {s.version}"),
            ("method", name),
        ):
            counts = TALLY.setdefault(key, [0, 0])
            counts[0] += s.error is None
            counts[1] += 1
    for title in [t for t in REPORT if t.startswith("wire validity")]:
        del REPORT[title]
    for (group, key), (valid, total) in sorted(TALLY.items()):
        REPORT[f"wire validity, {group} {key}".rstrip()] = f"{valid} of {total} messages valid"


def describe(s: Sent, peer: Peer) -> str:
    where = f"{s.version} | {peer.label} | {s.scope} | {s.kind} {s.method or ''}".rstrip()
    return f"{where}\n    {s.error}\n    {shorten(s.message)}"


#: (peer, transport): every client over stdio and Streamable HTTP; ours over HTTP+SSE and
#: WebSocket too (the SDK 2.x client has no WebSocket, and its SSE client is judged in
#: tests/interop/test_interop_http.py).
SESSIONS = [
    *((peer, transport) for transport in ("stdio", "http") for peer in PEERS),
    *(
        (peer, transport)
        for transport in ("sse", "websocket")
        for peer in PEERS
        if peer.kind != "sdk"
    ),
]


@pytest.mark.parametrize("server", ["everything", "scaffold"])
@pytest.mark.parametrize(
    ("peer", "transport"),
    SESSIONS,
    ids=[f"{p.label.replace(' ', '-')}-{t}" for p, t in SESSIONS],
)
async def test_every_message_sent_is_valid(
    peer: Peer, server: str, transport: str, scaffold: Target, oracle: Oracle, tmp_path: Path
) -> None:
    target = scaffold if server == "scaffold" else EVERYTHING
    capture = tmp_path / "capture.txt"
    recording = None
    if transport != "stdio":
        recording = Recording(McpHttpApp(target.build(), websocket_path="/mcp"))

    def wire() -> list[Sent]:
        return recording.messages(oracle) if recording else stdio_messages(capture, oracle)

    d = Drive(wire)
    failure: str | None = None
    try:
        with anyio.fail_after(SESSION_TIMEOUT):
            if recording is None:
                await run_peer(peer, target, None, capture, d)
            else:
                async with serving(recording) as url:
                    await run_peer(peer, target, url, capture, d, transport)
    except Exception as exc:
        failure = f"{type(exc).__name__}: {shorten(str(exc), 300)}"
    finally:
        stop_captured(capture)
    sent = wire()
    tally(sent, peer, f"{server} over {transport}")

    problems = [describe(s, peer) for s in sent if s.error is not None]
    # Our client offering only a version the server does not speak refuses the one the
    # server answers with: expected (what was sent until then is checked all the same).
    unspoken = peer.kind == "mcpgen" and peer.version not in target.versions
    refused = unspoken and (failure or "").startswith("NegotiationError")
    if failure is not None and not refused:
        problems.append(f"the session failed: {failure}")
    answered = {s.method for s in sent if s.kind == "result"}
    if not refused and not COVERED <= answered:
        problems.append(f"never answered with a result: {sorted(COVERED - answered)}")
    notes = "".join(f"\n  client: {note}" for note in Counter(d.notes))
    assert not problems, (
        f"{sum(s.error is None for s in sent)} of {len(sent)} messages valid "
        f"({server} over {transport}, {peer.label}):\n" + "\n".join(problems) + notes
    )


# -- the oracle itself: it must see the invalid messages servers once sent ---------------


def result(**fields: Any) -> dict[str, Any]:
    return {"result": fields}


def asking(prop: dict[str, Any]) -> dict[str, Any]:
    """A server's elicitation request with one form field."""
    form = {"type": "object", "properties": {"field": prop}}
    return {
        "id": 7,
        "method": "elicitation/create",
        "params": {"message": "?", "requestedSchema": form},
    }


DONE, CACHE = {"resultType": "complete"}, {"ttlMs": 0, "cacheScope": "public"}
AUDIO = {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}
NOT_BASE64 = {"type": "image", "data": "not base64!", "mimeType": "image/png"}
NAN = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":NaN}}'
#: (version, the request answered or None, what the server sent, whether that is valid).
ORACLE_CASES: list[tuple[str, str | None, Any, bool]] = [
    ("2026-07-28", "tools/list", result(**DONE, tools=[]), False),
    ("2026-07-28", "tools/list", result(**DONE, tools=[], **CACHE), True),
    ("2026-07-28", "resources/read", result(**DONE, contents=[]), False),
    ("2026-07-28", "tools/call", result(resultType="input_required"), False),
    ("2026-07-28", "tools/call", result(resultType="input_required", requestState="s"), True),
    ("2026-07-28", "ping", result(**DONE), False),
    ("2026-07-28", None, {"id": 7, "method": "roots/list"}, False),
    ("2024-11-05", "tools/call", result(content=[AUDIO]), False),
    ("2025-06-18", None, asking({"type": "array", "items": {"enum": ["a", "b"]}}), False),
    ("2025-06-18", None, asking({"type": "string"}), True),
    ("2025-11-25", "ping", result(), True),
    ("2025-11-25", "tools/call", {"error": {"code": -32602, "message": "Unknown tool"}}, True),
    ("2025-11-25", "tools/call", result(content=[NOT_BASE64]), False),
    ("2025-11-25", None, result(), False),  # answers no request
    ("2025-11-25", None, NAN, False),
]


@pytest.mark.parametrize(("version", "asked", "sent", "valid"), ORACLE_CASES)
async def test_the_oracle_sees_invalid_messages(
    version: str, asked: str | None, sent: Any, valid: bool, oracle: Oracle
) -> None:
    wire = Wire("case", oracle, version=version)
    envelope = {"jsonrpc": "2.0", "id": 1}
    if asked is not None:
        meta = {"_meta": {VERSION_KEY: version}} if version == "2026-07-28" else {}
        wire.from_client(json.dumps({**envelope, "method": asked, "params": meta}).encode())
    wire.from_server(sent if isinstance(sent, bytes) else json.dumps({**envelope, **sent}).encode())
    (checked,) = wire.sent
    assert (checked.error is None) == valid, checked.error
