"""The echo servers ``stdio_calls`` and ``http_calls`` compare, the calls they answer, and the
report parts both share: the rate table's row and issue 12's ratios for the registry."""

from __future__ import annotations

import argparse
import http.client
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from .harness import SERVERS, BenchError, Process, heading, note, python, table, values_of, verdict


@dataclass(frozen=True)
class Peer:
    """One server: a script of ``bench/servers`` and its options (beside ``--transport``)."""

    key: str
    label: str
    script: str
    args: tuple[str, ...] = ()

    def command(self, transport: str, *extra: str) -> list[str]:
        return python(str(SERVERS / self.script), "--transport", transport, *self.args, *extra)

    def shown(self, transport: str, *extra: str) -> str:
        words = ["python -I", f"bench/servers/{self.script}", "--transport", transport]
        return " ".join([*words, *self.args, *extra])


PEERS = {
    "ours": Peer("ours", "mcpgen Server on the generated stubs", "ours.py"),
    "ours-app": Peer("ours-app", "mcpgen App + @app.tool", "ours.py", ("--app",)),
    "sdk": Peer("sdk", "SDK 2.3 low-level Server", "sdk.py"),
    "sdk-mcpserver": Peer("sdk-mcpserver", "SDK 2.3 MCPServer", "sdk.py", ("--mcpserver",)),
    "bare": Peer("bare", "bare asyncio/ASGI + msgspec, no MCP library (ceiling)", "bare.py"),
    "checked": Peer(
        "checked",
        "bare + the protocol's checks, generated types (floor)",
        "bare.py",
        ("--checked",),
    ),
}
DEFAULT = ("ours", "sdk", "bare")
APP, STUBS, MCPSERVER = "ours-app", "ours", "sdk-mcpserver"
GOAL_CPU_OVERHEAD = 1.10
GOAL_SPEEDUP = 5.0
"""Issue 12: the ``App`` within 10% of the stubs' server CPU per call, 5× ``MCPServer``'s speed."""

# -- the calls ----------------------------------------------------------------------------------

LEGACY, MODERN = "2025-11-25", "2026-07-28"
CLIENT_INFO = {"name": "mcpgen-bench", "version": "0"}
HANDSHAKE = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
INITIALIZE = msgspec.json.encode(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE}
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"echo %d"}}}'
"""``CALL % (n, n)``: a 2025-11-25 call whose answer must echo ``echo <n>``."""
PATH = "/mcp"
TEXT = "hello from wrk"
MODERN_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}


def modern_call(request_id: int, text: str = TEXT) -> bytes:
    """A self-contained (stateless) 2026-07-28 ``tools/call`` of ``echo``."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    params = {"name": "echo", "arguments": {"text": text}, "_meta": meta}
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


def legacy_headers(session_id: str = "") -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": MODERN_HEADERS["Accept"]}
    if session_id:
        headers |= {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    return headers


class Result(msgspec.Struct):
    content: list[dict[str, Any]] = []
    resultType: str | None = None
    protocolVersion: str = ""


class Reply(msgspec.Struct):
    id: int | None = None
    result: Result | None = None


def post(
    server: Process, body: bytes, headers: dict[str, str], text: str = ""
) -> tuple[bytes, dict[str, str]]:
    """One POST on a new connection; with ``text``, the answer must be JSON, to this request,
    one text block echoing ``text`` (and complete, when stateless)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", PATH, body, headers)
        response = conn.getresponse()
        data, status = response.read(), response.status
        answer = {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()
    if text:
        reply = msgspec.json.decode(data, type=Reply) if status == 200 else Reply()
        result = reply.result or Result(resultType="?")
        expected = None if "Mcp-Session-Id" in headers else "complete"
        ok = answer.get("content-type", "").startswith("application/json")
        ok = ok and reply.id == msgspec.json.decode(body)["id"] and result.resultType == expected
        if not ok or result.content != [{"type": "text", "text": text}]:
            raise BenchError(f"{server.label}: bad answer: HTTP {status} {answer} {data[:300]!r}")
    return data, answer


def open_session(server: Process) -> str:
    """``initialize`` and ``initialized`` at 2025-11-25 over HTTP; returns the session id."""
    data, answer = post(server, INITIALIZE, legacy_headers())
    session_id = answer.get("mcp-session-id", "")
    result = msgspec.json.decode(data, type=Reply).result
    if not session_id or result is None or result.protocolVersion != LEGACY:
        raise BenchError(f"{server.label}: initialize failed: {data[:300]!r}")
    post(server, INITIALIZED, legacy_headers(session_id))
    return session_id


# -- choosing peers, and the registry's ratios ---------------------------------------------------


def peer_list(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys or set(keys) - set(PEERS) or len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(f"distinct servers among {', '.join(PEERS)}")
    return keys


def add_options(p: argparse.ArgumentParser) -> None:
    which = f"servers to measure, in order (default {','.join(DEFAULT)}; all: {','.join(PEERS)})"
    p.add_argument("--peers", type=peer_list, help=which)
    p.add_argument("--app", action="store_true", help=f"add {APP} and {MCPSERVER}")


def selected(args: argparse.Namespace) -> list[Peer]:
    keys = list(args.peers or DEFAULT)
    keys += [k for k in (APP, MCPSERVER) if args.app and k not in keys]
    return [PEERS[k] for k in keys]


def wanted(keys: Sequence[str]) -> bool:
    """Whether the servers measured allow the registry's ratios."""
    return {STUBS, APP, MCPSERVER} <= set(keys)


def rate_row(m: Mapping[str, Any], fields: Sequence[str]) -> list[object]:
    """A row of the rate table: the rate's median, min and max, then the other medians."""
    return [*(round(m[f]) for f in (fields[0], "min", "max")), *(m[f] for f in fields[1:])]


def acceptance(
    label: str, cells: Mapping[str, Mapping[str, Sequence[Any]]], rate: str, speed_by: str
) -> dict[str, Any]:
    """Print and return issue 12's ratios for each cell (``stdio``, ``c1``, …) from its samples
    by peer: each the ratio of the medians, in parentheses the median of per-round ratios (the
    servers of one round ran back to back); the verdicts read the former."""
    heading(f"{label}: the registry ({APP}) against {STUBS} and {MCPSERVER}, same run")
    by = "server CPU per call" if speed_by == "cpu" else "req/s"
    note(f"goals: CPU {APP}/{STUBS} ≤ {GOAL_CPU_OVERHEAD:.2f}×; {APP}/{MCPSERVER} ≥ 5× by {by}")
    med = statistics.median
    out: dict[str, Any] = {}
    rows: list[list[object]] = []
    for cell, samples in cells.items():
        of = {k: (values_of(s, rate), values_of(s, "server_cpu_us")) for k, s in samples.items()}
        pairs = {
            "cpu_app_over_stubs": (of[APP][1], of[STUBS][1]),
            "rate_app_over_mcpserver": (of[APP][0], of[MCPSERVER][0]),
            "cpu_mcpserver_over_app": (of[MCPSERVER][1], of[APP][1]),
        }
        ratios = {
            k: (med(a) / med(b), med(x / y for x, y in zip(a, b))) for k, (a, b) in pairs.items()
        }
        speed = ratios["cpu_mcpserver_over_app" if speed_by == "cpu" else "rate_app_over_mcpserver"]
        ok = (ratios["cpu_app_over_stubs"][0] <= GOAL_CPU_OVERHEAD, speed[0] >= GOAL_SPEEDUP)
        out[cell] = {k: round(r, 3) for k, (r, _) in ratios.items()}
        out[cell] |= {"overhead_met": ok[0], "speedup_met": ok[1]}
        rows.append([cell, *(round(med(of[k][1]), 1) for k in (STUBS, APP, MCPSERVER))])
        rows[-1] += [f"{r:.3f}× ({m:.3f}×)" for r, m in ratios.values()]
        rows[-1].append("/".join(map(verdict, ok)))
    columns = f"CPU {APP}/{STUBS}|rate {APP}/{MCPSERVER}|CPU {MCPSERVER}/{APP}|goals"
    print(table(["cell", f"CPU µs {STUBS}", APP, MCPSERVER, *columns.split("|")], rows))
    met = all(v["overhead_met"] and v["speedup_met"] for v in out.values())
    note(f"issue 12's acceptance ({label}): {verdict(met)}")
    return {"goal_cpu_overhead": GOAL_CPU_OVERHEAD, "goal_speedup": GOAL_SPEEDUP, "met": met} | out
