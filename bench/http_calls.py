"""``tools/call`` over Streamable HTTP: mcpgen's ``Server.http_app()`` vs the official SDK's
low-level ``streamable_http_app()``, plus a bare ASGI app as the ceiling, all under the same
uvicorn and driven by the same load generator.

The servers are the scripts ``bench/servers/http_*.py`` (one ``echo`` tool each), spawned as
``python -I bench/servers/http_NAME.py --port PORT`` with a minimal environment. Each one
calls ``uvicorn.run(app, host="127.0.0.1", port=PORT, loop=…, http=…, log_level="warning",
access_log=False)``: one worker, the same options for all. The SDK app is
``streamable_http_app(stateless_http=True, json_response=True)``.

The requests are stateless 2026-07-28 ``tools/call`` POSTs, each self-contained: the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers, ``Accept`` listing JSON and
SSE, and ``_meta`` with the protocol version, client capabilities and client info. Both
servers answer them as JSON, so no session state distorts the comparison. ``--legacy`` also
measures a 2025-11-25 session (``initialize`` first, then ``Mcp-Session-Id`` on every POST,
unique ids; the SDK runs with ``--stateful``).

The load generator is ``wrk`` (one thread, keep-alive connections, the pre-built request of a
generated Lua script whose ``done()`` prints one JSON line: requests, duration, latency
percentiles, errors). Concurrency = wrk's connections (default 1 and 32). Before timing, a
quick check sends requests to every server over ``http.client`` and validates each answer
(status 200, JSON, the echoed text), including the exact body wrk sends. Then each cell
(server, concurrency) gets a short untimed wrk run and a timed one; cells are interleaved
(the servers' order alternates round by round) and the report gives medians over rounds.
The servers stay up for the whole run. Alongside wrk's figures: the server's CPU per request
(``/proc/<pid>/task/*/schedstat``) and wrk's own CPU (``RUSAGE_CHILDREN``), which shows
whether the generator could be the bottleneck (it shares the machine's cores).

``--profile`` (automatic when the goal is missed) then breaks mcpgen's server down: the
ASGI apps driven in process without uvicorn (µs per request: ours, the SDK, bare), and a
cProfile of ours under wrk load (``bench/servers/http_profiled.py``, toggled by SIGUSR1).

``--app`` (or ``--peers``) adds the registry peers ``ours-app`` and ``sdk-mcpserver`` to the
same interleaved rounds and prints issue 12's acceptance ratios (``bench/_registry.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgspec

from . import BENCHMARKS
from . import _registry as registry
from ._cprofile import IDLE, calls_to, raw_stats, report
from ._util import (
    ROOT,
    BenchError,
    Stats,
    children_cpu,
    clean_env,
    emit,
    heading,
    load,
    load_note,
    note,
    progress,
    python,
    table,
    verdict,
)
from .stdio_calls import cpu_seconds, memory

NAME = "http_calls"
DESCRIPTION = BENCHMARKS[NAME]
SERVERS_DIR = Path(__file__).resolve().parent / "servers"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
GOAL_SPEEDUP = 3.0
"""ours ≥ this × the SDK's requests/s, at every concurrency."""
PATH = "/mcp"
TEXT = "hello from wrk"
"""What the timed requests ask ``echo`` to echo."""
CLIENT_INFO = {"name": "mcpgen-bench", "version": "0"}
ACCEPT = "application/json, text/event-stream"
STOP_TIMEOUT_S = 10.0


# -- the requests ------------------------------------------------------------------------------


def modern_body(request_id: int, text: str) -> bytes:
    """A self-contained 2026-07-28 ``tools/call`` of ``echo``."""
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": text},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                },
            },
        }
    )


MODERN_HEADERS = {
    "Content-Type": "application/json",
    "Accept": ACCEPT,
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}


def legacy_body(request_id: int, text: str) -> bytes:
    """A 2025-11-25 ``tools/call`` of ``echo`` inside a session."""
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
    )


LEGACY_TEMPLATE = legacy_body(999_999_999, "echo 999999999").replace(b"999999999", b"%d")
"""``LEGACY_TEMPLATE % (n, n)`` (Python) or ``string.format(template, n, n)`` (Lua)."""


def legacy_headers(session_id: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": LEGACY,
        "Mcp-Session-Id": session_id,
    }


INITIALIZE = msgspec.json.encode(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


# -- the servers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    key: str
    label: str
    script: str
    args: tuple[str, ...] = ()

    def command(self, port: int, uvicorn_args: Sequence[str]) -> list[str]:
        return python(
            str(SERVERS_DIR / self.script), "--port", str(port), *self.args, *uvicorn_args
        )

    def shown(self, uvicorn_args: Sequence[str] = ()) -> str:
        return " ".join(
            ["python -I", f"bench/servers/{self.script}", "--port PORT", *self.args, *uvicorn_args]
        )


OURS = ServerSpec("ours", "mcpgen Server.http_app() (2026-07-28 stubs)", "http_ours.py")
SDK = ServerSpec("sdk", "SDK 2.3 low-level streamable_http_app(stateless, json)", "http_sdk.py")
BARE = ServerSpec("bare", "bare ASGI app + msgspec (ceiling)", "http_bare.py")
SERVERS = (OURS, SDK, BARE)
OURS_APP = ServerSpec(
    "ours-app", "mcpgen App + @app.tool, http_app() (2026-07-28 stubs)", "http_ours_app.py"
)
SDK_MCPSERVER = ServerSpec(
    "sdk-mcpserver",
    "SDK 2.3 MCPServer + @server.tool(), streamable_http_app(stateless, json)",
    "http_sdk_mcpserver.py",
)
PEERS = {s.key: s for s in (OURS, OURS_APP, SDK, SDK_MCPSERVER, BARE)}
"""Every server ``--peers`` can name (``SERVERS`` by default)."""
SDK_STATEFUL = ServerSpec(
    "sdk", "SDK 2.3 streamable_http_app(stateful, json)", "http_sdk.py", ("--stateful",)
)
"""The SDK for the legacy-session variant (``stateless_http=True`` has no sessions)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Running:
    """A spawned HTTP server on 127.0.0.1; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, spec: ServerSpec, uvicorn_args: Sequence[str], ready_s: float) -> None:
        self.spec = spec
        self.port = free_port()
        self.errors: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            spec.command(self.port, uvicorn_args),
            stdin=subprocess.DEVNULL,
            stdout=self.errors,
            stderr=self.errors,
            env=clean_env(),
            cwd=ROOT,
        )
        self.rss_start: dict[str, float] = {}
        try:
            self._wait_ready(ready_s)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.spec.key}: server exited\n{self.output()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            time.sleep(0.05)
        raise BenchError(f"{self.spec.key}: not listening after {timeout:.0f} s\n{self.output()}")

    def output(self, lines: int = 20) -> str:
        if self.errors.closed:
            return ""
        self.errors.seek(0)
        text = self.errors.read().decode(errors="replace").strip()
        return "\n".join(text.splitlines()[-lines:])

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise BenchError(f"{self.spec.key}: server died\n{self.output()}")

    def stop(self) -> str:
        """Stop the server (SIGTERM: uvicorn shuts down gracefully); returns its output."""
        proc = self.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        text = self.output(200)
        if not self.errors.closed:
            self.errors.close()
        return text


@contextlib.contextmanager
def running(
    specs: Sequence[ServerSpec], uvicorn_args: Sequence[str], ready_s: float = 60.0
) -> Iterator[dict[str, Running]]:
    """Start every server (each on its own free port); stop them all on the way out."""
    servers: dict[str, Running] = {}
    try:
        for spec in specs:
            servers[spec.key] = Running(spec, uvicorn_args, ready_s)
        yield servers
    finally:
        for server in servers.values():
            output = server.stop()
            if output:
                progress(f"{server.spec.key} said on exit:\n{output}")


# -- validation (http.client, before timing) -----------------------------------------------------


class _Content(msgspec.Struct):
    type: str = ""
    text: str = ""


class _Result(msgspec.Struct):
    content: list[_Content] = []
    resultType: str | None = None


class _Reply(msgspec.Struct):
    id: int | str | None = None
    result: _Result | None = None
    error: Any = None


_reply = msgspec.json.Decoder(_Reply)


def post(
    conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    conn.request("POST", PATH, body, headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def check_echo(
    label: str, status: int, headers: dict[str, str], data: bytes, rid: int, text: str, modern: bool
) -> None:
    def fail(why: str) -> BenchError:
        return BenchError(f"{label}: {why}: HTTP {status} {headers} {data[:300]!r}")

    if status != 200:
        raise fail("status is not 200")
    if headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise fail("not a JSON answer")
    try:
        reply = _reply.decode(data)
    except msgspec.DecodeError as exc:
        raise fail(f"undecodable ({exc})") from None
    result = reply.result
    if reply.id != rid or result is None or reply.error is not None:
        raise fail("not a result for this request")
    if len(result.content) != 1 or result.content[0].type != "text":
        raise fail("content is not one text block")
    if result.content[0].text != text:
        raise fail(f"echoed {result.content[0].text!r}, not {text!r}")
    if modern and result.resultType != "complete":
        raise fail("modern result without resultType 'complete'")


def validate_modern(server: Running, n: int) -> dict[str, Any]:
    """``n`` distinct modern calls on one keep-alive connection, then the exact body wrk
    sends; every answer checked."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for i in range(1, n + 1):
            text = f"check {i} ✓"
            status, headers, data = post(conn, modern_body(i, text), MODERN_HEADERS)
            check_echo(server.spec.key, status, headers, data, i, text, True)
        status, headers, data = post(conn, modern_body(1, TEXT), MODERN_HEADERS)
        check_echo(server.spec.key, status, headers, data, 1, TEXT, True)
    finally:
        conn.close()
    return {"calls": n + 1, "answer": data.decode(), "answer_headers": headers}


def open_session(server: Running) -> str:
    """``initialize`` + ``initialized`` at 2025-11-25; returns the session id."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        status, answer, data = post(conn, INITIALIZE, headers)
        session_id = answer.get("mcp-session-id")
        if status != 200 or not session_id or b'"protocolVersion":"2025-11-25"' not in data:
            raise BenchError(f"{server.spec.key}: initialize failed: {status} {data[:300]!r}")
        status, _, data = post(conn, INITIALIZED, legacy_headers(session_id))
        if status not in (200, 202):
            raise BenchError(f"{server.spec.key}: initialized refused: {status} {data[:300]!r}")
    finally:
        conn.close()
    return session_id


def validate_legacy(server: Running, session_id: str, n: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for i in range(1, n + 1):
            status, headers, data = post(conn, LEGACY_TEMPLATE % (i, i), legacy_headers(session_id))
            check_echo(server.spec.key, status, headers, data, i, f"echo {i}", False)
    finally:
        conn.close()


# -- the load generator -------------------------------------------------------------------------

LUA_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"mean_us":%.1f,"stdev_us":%.1f,"max_us":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
end
"""
"""Prints wrk's summary as one JSON line (latencies in µs; ``status``: non-2xx/3xx answers)."""


def _lua_string(text: str | bytes) -> str:
    value = text.decode() if isinstance(text, bytes) else text
    level = "=" * 3
    if f"]{level}]" in value:
        raise ValueError("cannot quote this as a Lua long string")
    return f"[{level}[{value}]{level}]"


def lua_modern() -> str:
    """The modern script: one fixed request, pre-built by wrk once (its cheapest mode)."""
    lines = [
        "-- generated by bench/http_calls.py: stateless 2026-07-28 tools/call, fixed body",
        'wrk.method = "POST"',
        f"wrk.body = {_lua_string(modern_body(1, TEXT))}",
    ]
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in MODERN_HEADERS.items()]
    return "\n".join(lines) + "\n" + LUA_DONE


def lua_legacy(session_id: str, first_id: int) -> str:
    """The legacy script: one session, a unique id per request (built per request in Lua)."""
    lines = [
        "-- generated by bench/http_calls.py: 2025-11-25 tools/call in one session",
        'wrk.method = "POST"',
    ]
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in legacy_headers(session_id).items()]
    lines += [
        f"local template = {_lua_string(LEGACY_TEMPLATE)}",
        f"local counter = {first_id}",
        "request = function()",
        "  counter = counter + 1",
        "  return wrk.format(nil, nil, nil, string.format(template, counter, counter))",
        "end",
    ]
    return "\n".join(lines) + "\n" + LUA_DONE


@dataclass(frozen=True)
class Cell:
    """One timed wrk run against one server at one concurrency."""

    requests_per_s: float
    p50_us: float
    p90_us: float
    p99_us: float
    mean_us: float
    server_cpu_us: float
    """Server CPU (user + system, all threads) per request."""
    server_busy: float
    """Server CPU / wall: 1.0 is one core saturated."""
    wrk_busy: float
    """wrk's CPU / wall (all its threads)."""
    requests: int
    errors: int


def wrk_command(
    wrk: str, script: Path, url: str, connections: int, seconds: int, timeout_s: int
) -> list[str]:
    return [
        wrk,
        "-t1",
        f"-c{connections}",
        f"-d{seconds:g}s",
        f"--timeout={timeout_s:g}s",
        "-s",
        str(script),
        url,
    ]


def run_wrk(
    wrk: str,
    script: Path,
    server: Running,
    connections: int,
    seconds: int,
    timeout_s: int,
) -> Cell:
    """One wrk run; the server's CPU from schedstat, wrk's from ``RUSAGE_CHILDREN`` (the
    servers are reaped only at the end, so the delta is wrk's alone)."""
    command = wrk_command(wrk, script, server.url, connections, seconds, timeout_s)
    cpu_server = cpu_seconds(server.pid)
    cpu_wrk = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=seconds + timeout_s + 60,
    )
    wall = time.perf_counter() - started
    cpu_wrk = children_cpu() - cpu_wrk
    cpu_server = cpu_seconds(server.pid) - cpu_server
    server.alive()
    line = next((x for x in done.stdout.splitlines() if x.startswith("WRK ")), None)
    if done.returncode != 0 or line is None:
        raise BenchError(
            f"wrk failed (exit {done.returncode}): {' '.join(command)}\n"
            f"{done.stdout[-1500:]}{done.stderr[-1500:]}"
        )
    r = json.loads(line[4:])
    errors = sum(r[k] for k in ("connect", "read", "write", "status", "timeout"))
    if errors:
        raise BenchError(
            f"{server.spec.key}, {connections} connections: {errors} failed requests "
            f"(connect/read/write/non-2xx/timeout = {r['connect']}/{r['read']}/{r['write']}/"
            f"{r['status']}/{r['timeout']})\n{done.stdout[-1500:]}\n{server.output()}"
        )
    if r["requests"] == 0:
        raise BenchError(f"{server.spec.key}: no request completed\n{done.stdout[-1500:]}")
    duration = r["duration_us"] / 1e6
    return Cell(
        requests_per_s=r["requests"] / duration,
        p50_us=float(r["p50_us"]),
        p90_us=float(r["p90_us"]),
        p99_us=float(r["p99_us"]),
        mean_us=float(r["mean_us"]),
        server_cpu_us=cpu_server / r["requests"] * 1e6,
        server_busy=cpu_server / wall,
        wrk_busy=cpu_wrk / wall,
        requests=r["requests"],
        errors=errors,
    )


# -- one variant (modern or legacy): interleaved rounds ---------------------------------------


@dataclass
class Variant:
    """What one era's comparison needs: servers, scripts (per server) and the results."""

    name: str
    specs: Sequence[ServerSpec]
    scripts: dict[str, Path] = field(default_factory=dict)
    cells: dict[tuple[str, int], list[Cell]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    validated: dict[str, Any] = field(default_factory=dict)


def measure_variant(
    variant: Variant,
    servers: dict[str, Running],
    wrk: str,
    args: argparse.Namespace,
) -> None:
    keys = [s.key for s in variant.specs]
    concurrencies: list[int] = args.concurrency
    for key in keys:
        variant.rss[key] = {"start": memory(servers[key].pid)}
        if args.warmup_first <= 0:
            continue
        progress(
            f"{variant.name}: warm-up of {key}, {args.warmup_first} s at c={max(concurrencies)}"
        )
        run_wrk(
            wrk,
            variant.scripts[key],
            servers[key],
            max(concurrencies),
            args.warmup_first,
            args.timeout,
        )
    for i in range(args.rounds):
        for j, c in enumerate(concurrencies):
            order = keys if (i + j) % 2 == 0 else keys[::-1]
            for key in order:
                progress(
                    f"{variant.name} round {i + 1}/{args.rounds}: {key}, c={c}, "
                    f"{args.warmup:g} s warm-up + {args.duration:g} s"
                )
                if args.warmup > 0:
                    run_wrk(wrk, variant.scripts[key], servers[key], c, args.warmup, args.timeout)
                cell = run_wrk(
                    wrk, variant.scripts[key], servers[key], c, args.duration, args.timeout
                )
                variant.cells[(key, c)].append(cell)
    for key in keys:
        variant.rss[key]["end"] = memory(servers[key].pid)


def median_of(cells: Sequence[Cell], attr: str) -> float:
    return Stats.of([getattr(x, attr) for x in cells]).median


def report_variant(variant: Variant, args: argparse.Namespace) -> dict[str, Any]:
    keys = [s.key for s in variant.specs]
    concurrencies: list[int] = args.concurrency
    heading(
        f"{variant.name}: tools/call over Streamable HTTP, uvicorn (1 worker), wrk -t1; "
        f"{args.duration:g} s per cell after {args.warmup:g} s warm-up, median of "
        f"{args.rounds} interleaved rounds"
    )
    uv = uvicorn_args(args)
    for spec in variant.specs:
        note(f"{spec.key}: `{spec.shown(uv)}` → {spec.label}")
    example = wrk_command(
        "wrk",
        Path(f"{variant.name}-SERVER.lua"),
        f"http://127.0.0.1:PORT{PATH}",
        32,
        args.duration,
        args.timeout,
    )
    note(f"load: `{' '.join(example)}` (and -c1); script: {variant_script_note(args)}")
    note(
        "req/s = wrk's requests / its duration; latency = wrk's per-request send → answer; "
        "server CPU = the server's CPU per request; busy = CPU / wall (1.0 = one core)"
    )
    rows: list[list[object]] = []
    per: dict[str, dict[str, Any]] = {}
    for c in concurrencies:
        for key in keys:
            cs = variant.cells[(key, c)]
            rate = Stats.of([x.requests_per_s for x in cs])
            summary = {
                "requests_per_s": round(rate.median, 1),
                "requests_per_s_min": round(rate.low, 1),
                "requests_per_s_max": round(rate.high, 1),
                "p50_us": round(median_of(cs, "p50_us"), 1),
                "p90_us": round(median_of(cs, "p90_us"), 1),
                "p99_us": round(median_of(cs, "p99_us"), 1),
                "mean_us": round(median_of(cs, "mean_us"), 1),
                "server_cpu_us_per_request": round(median_of(cs, "server_cpu_us"), 1),
                "server_busy": round(median_of(cs, "server_busy"), 3),
                "wrk_busy": round(median_of(cs, "wrk_busy"), 3),
                "rounds": [round(x.requests_per_s, 1) for x in cs],
                "requests": [x.requests for x in cs],
            }
            per[f"{key}@c{c}"] = summary
            rows.append(
                [
                    c,
                    key,
                    round(rate.median),
                    round(rate.low),
                    round(rate.high),
                    summary["p50_us"],
                    summary["p99_us"],
                    summary["server_cpu_us_per_request"],
                    f"{summary['server_busy']:.2f}",
                    f"{summary['wrk_busy']:.2f}",
                ]
            )
    print(
        table(
            [
                "conc",
                "server",
                "req/s",
                "min",
                "max",
                "p50 µs",
                "p99 µs",
                "server CPU µs/req",
                "server busy",
                "wrk busy",
            ],
            rows,
        )
    )
    ratios: dict[str, dict[str, Any]] = {}
    goal: dict[str, Any] = {}
    if "ours" in keys and "sdk" in keys:
        for c in concurrencies:
            o, s = per[f"ours@c{c}"], per[f"sdk@c{c}"]
            r = {
                "requests_per_s": round(o["requests_per_s"] / s["requests_per_s"], 3),
                "p50": round(o["p50_us"] / s["p50_us"], 3),
                "p99": round(o["p99_us"] / s["p99_us"], 3),
                "server_cpu_per_request": round(
                    o["server_cpu_us_per_request"] / s["server_cpu_us_per_request"], 3
                ),
            }
            ratios[f"c{c}"] = r
            note(
                f"c={c}: ours/SDK req/s {r['requests_per_s']:.2f}×; latency ours/SDK p50 "
                f"{r['p50']:.2f}×, p99 {r['p99']:.2f}×; server CPU per request ours/SDK "
                f"{r['server_cpu_per_request']:.2f}×"
            )
            per_round = [
                round(a.requests_per_s / b.requests_per_s, 2)
                for a, b in zip(variant.cells[("ours", c)], variant.cells[("sdk", c)])
            ]
            ratios[f"c{c}"]["rounds"] = per_round
        if "bare" in keys:
            for c in concurrencies:
                b = per[f"bare@c{c}"]
                share = per[f"ours@c{c}"]["requests_per_s"] / b["requests_per_s"]
                ceiling = b["requests_per_s"] / per[f"sdk@c{c}"]["requests_per_s"]
                note(
                    f"c={c}: ours reaches {share:.0%} of the bare ASGI app's req/s; even the "
                    f"bare app is only {ceiling:.2f}× the SDK (the most any app under this "
                    f"uvicorn could show)"
                )
                ratios[f"c{c}"]["ours_over_bare"] = round(share, 3)
                ratios[f"c{c}"]["bare_over_sdk"] = round(ceiling, 3)
        met = all(ratios[f"c{c}"]["requests_per_s"] >= GOAL_SPEEDUP for c in concurrencies)
        goal = {
            "goal": GOAL_SPEEDUP,
            "met": met,
            **{f"c{c}": ratios[f"c{c}"]["requests_per_s"] for c in concurrencies},
        }
        note(
            f"goal: ours ≥ {GOAL_SPEEDUP:.0f}× the SDK's req/s at c = "
            f"{', '.join(map(str, concurrencies))} → "
            + ", ".join(f"{ratios[f'c{c}']['requests_per_s']:.2f}×" for c in concurrencies)
            + f", {verdict(met)}"
        )
    busiest = max(per[k]["wrk_busy"] for k in per)
    note(
        f"generator: wrk used at most {busiest:.0%} of one core (median per cell) while the "
        f"server used up to {max(per[k]['server_busy'] for k in per):.0%}"
        + (
            "; the generator is not the bottleneck"
            if busiest < 0.5
            else "; CAUTION: the generator may be limiting"
        )
    )
    rss_rows: list[list[object]] = []
    for key in keys:
        start, end = variant.rss[key]["start"], variant.rss[key]["end"]
        rss_rows.append(
            [
                key,
                round(start.get("VmRSS", 0.0), 1),
                round(end.get("VmRSS", 0.0), 1),
                round(end.get("VmHWM", 0.0), 1),
                sum(sum(x.requests for x in variant.cells[(key, c)]) for c in concurrencies),
            ]
        )
    print(
        table(
            ["server", "VmRSS MiB before load", "after", "VmHWM", "timed requests"],
            rss_rows,
        )
    )
    return {
        "servers": {s.key: s.shown(uv) for s in variant.specs},
        "results": per,
        "ratio_ours_over_sdk": ratios,
        "goal": goal,
        "memory_mib": variant.rss,
        "validated": variant.validated,
    }


def variant_script_note(args: argparse.Namespace) -> str:
    if args.save_scripts:
        return f"saved in {args.save_scripts}"
    return "generated per run (--save-scripts DIR keeps them)"


def uvicorn_args(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    if args.loop != "auto":
        out += ["--loop", args.loop]
    if args.http != "auto":
        out += ["--http", args.http]
    return out


def uvicorn_stack(args: argparse.Namespace) -> dict[str, str]:
    """Which event loop and HTTP parser uvicorn's ``auto`` picks here."""
    found = {name: importlib.util.find_spec(name) is not None for name in ("uvloop", "httptools")}
    loop = args.loop if args.loop != "auto" else ("uvloop" if found["uvloop"] else "asyncio")
    parser_ = args.http if args.http != "auto" else ("httptools" if found["httptools"] else "h11")
    import uvicorn

    return {"uvicorn": uvicorn.__version__, "loop": loop, "http": parser_}


# -- the profile of ours --------------------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
App = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


def _load_module(name: str, script: str) -> Any:
    """A server script as a module of this process (registered, so msgspec can resolve its
    annotations; loaded once)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SERVERS_DIR / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def app_of(key: str) -> App:
    """The ASGI app a server script serves, built in this process."""
    if key == "ours":
        app: App = _load_module("_bench_http_ours", OURS.script).build().http_app()
        return app
    if key == "ours-app":
        app = _load_module("_bench_http_ours_app", OURS_APP.script).build().http_app()
        return app
    if key in ("sdk", "sdk-mcpserver"):
        script = SDK.script if key == "sdk" else SDK_MCPSERVER.script
        sdk = _load_module(f"_bench_http_{key.replace('-', '_')}", script)
        app = sdk.server.streamable_http_app(stateless_http=True, json_response=True)
        return app
    app = _load_module("_bench_http_bare", BARE.script).app
    return app


def _scope(port: int) -> Scope:
    headers = [(k.lower().encode(), v.encode()) for k, v in MODERN_HEADERS.items()]
    headers.append((b"host", f"127.0.0.1:{port}".encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", port),
    }


async def _drive(
    app: App, n: int, concurrency: int, between: Callable[[], None] | None = None
) -> float:
    """µs per request of ``app`` alone: ``n`` modern calls, ``concurrency`` at a time,
    through fake ASGI receive/send (lifespan run first, as uvicorn does). Checks answers.
    ``between`` runs before each timed batch (``app_instructions`` evicts the caches)."""
    state: dict[str, Any] = {}
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    started: asyncio.Queue[Message] = asyncio.Queue()

    async def life_receive() -> Message:
        return await inbox.get()

    async def life_send(message: Message) -> None:
        await started.put(message)

    lifespan = asyncio.ensure_future(
        app(
            {"type": "lifespan", "asgi": {"version": "3.0"}, "state": state},
            life_receive,
            life_send,
        )
    )
    await inbox.put({"type": "lifespan.startup"})
    answer = asyncio.ensure_future(started.get())
    await asyncio.wait({answer, lifespan}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if not answer.done():
        answer.cancel()
        failed = lifespan.exception() if lifespan.done() else TimeoutError("no answer")
        raise BenchError(f"lifespan startup failed: {failed!r}")
    first = answer.result()
    if first["type"] != "lifespan.startup.complete":
        raise BenchError(f"lifespan startup failed: {first}")
    base = _scope(3001)
    body = modern_body(1, TEXT)
    bad: list[bytes] = []

    async def one() -> None:
        scope = dict(base)
        scope["state"] = dict(state)
        sent_body = False
        out: list[bytes] = []
        status = 0

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # never disconnects
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                out.append(message.get("body", b""))

        await app(scope, receive, send)
        data = b"".join(out)
        if status != 200 or TEXT.encode() not in data:
            bad.append(data[:300])

    for _ in range(50):
        await one()
    clock = time.perf_counter_ns
    t0 = clock()
    done = 0
    while done < n:
        batch = min(concurrency, n - done)
        if between is not None:
            between()
        if batch == 1:
            await one()
        else:
            await asyncio.gather(*(one() for _ in range(batch)))
        done += batch
    elapsed = clock() - t0
    await inbox.put({"type": "lifespan.shutdown"})
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(lifespan, 10)
    if bad:
        raise BenchError(f"in-process answers were wrong: {bad[0]!r}")
    return elapsed / n / 1e3


def app_only(
    keys: Sequence[str], n: int, concurrencies: Sequence[int], repeat: int
) -> dict[str, Any]:
    """Best of ``repeat`` runs, µs per request, of each app driven in process."""
    out: dict[str, dict[str, float]] = {}
    for key in keys:
        out[key] = {}
        for c in concurrencies:
            # a fresh app per run: the SDK's session manager runs its lifespan only once
            runs = [asyncio.run(_drive(app_of(key), n, c)) for _ in range(repeat)]
            out[key][f"c{c}"] = round(min(runs), 1)
    return out


def _category(filename: str, func: str) -> str:
    if filename == "~":
        if "poll" in func:
            return IDLE
        return func
    for marker, name in (
        ("/runtime/", "mcpgen.runtime."),
        ("/generated/", "mcpgen.generated."),
        ("/uvicorn/", "uvicorn."),
        ("/h11/", "h11."),
        ("/asyncio/", "asyncio."),
    ):
        if marker in filename:
            return name + Path(filename).stem
    if "bench/servers" in filename:
        return "the echo handler (bench/servers/http_ours.py)"
    if filename == "<string>":
        return "dataclass __init__ (<string>)"
    return Path(filename).name


def _family(category: str) -> str:
    if category.startswith(("mcpgen.runtime", "dataclass __init__")):
        return "mcpgen.runtime"
    if category.startswith("mcpgen.generated"):
        return "generated"
    if category.startswith("the echo handler"):
        return "echo handler"
    if category.startswith(("uvicorn", "h11")):
        return "uvicorn + h11"
    if "msgspec" in category:
        return "msgspec"
    if "socket" in category or category.startswith("<method 'send'"):
        return "socket syscalls"
    if (
        category.startswith("asyncio")
        or category in ("selectors.py", "events.py", "_weakrefset.py")
        or "_asyncio" in category
        or "_contextvars" in category
    ):
        return "asyncio (loop, tasks, futures)"
    return "other"


def cpu_profile(
    wrk: str, connections: int, seconds: int, timeout_s: int, top: int, uv: Sequence[str]
) -> dict[str, Any]:
    """cProfile of ours under wrk load: on after a warm-up (SIGUSR1), off and dumped after
    ``seconds`` (SIGUSR1 again)."""
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        out = Path(tmp) / "ours.prof"
        script = Path(tmp) / "modern.lua"
        script.write_text(lua_modern())
        spec = ServerSpec(
            "ours-profiled", "ours under cProfile", "http_profiled.py", ("--out", str(out))
        )
        with running([spec], uv) as servers:
            server = servers[spec.key]
            validate_modern(server, 5)
            run_wrk(wrk, script, server, connections, 2, timeout_s)
            os.kill(server.pid, signal.SIGUSR1)
            time.sleep(0.1)
            cell = run_wrk(wrk, script, server, connections, seconds, timeout_s)
            os.kill(server.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 30
            while not (out.exists() and out.with_suffix(".done").exists()):
                if time.monotonic() > deadline:
                    raise BenchError("the profiled server wrote no profile")
                time.sleep(0.1)
        n = cell.requests
        raw = raw_stats(out)
        sends = calls_to(raw, "<method 'send' of '_socket.socket' objects>")
        tasks = calls_to(raw, "create_task", "base_events.py")
        figures = report(
            out,
            n,
            "request",
            top,
            f"ours under cProfile: wrk -c{connections} for {seconds:g} s "
            f"({cell.requests_per_s:.0f} req/s with the profiler on, {n} requests)",
            _category,
            _family,
            [
                f"per request: {sends / n:.2f} socket send() calls, {tasks / n:.2f} asyncio tasks created"
            ],
        )
    return {
        "connections": connections,
        "seconds": seconds,
        "requests": n,
        "requests_per_s_profiled": round(cell.requests_per_s, 1),
        "socket_sends_per_request": round(sends / n, 2),
        "tasks_per_request": round(tasks / n, 2),
        **figures,
    }


def profile(wrk: str, args: argparse.Namespace, modern: dict[str, Any]) -> dict[str, Any]:
    keys = [s.key for s in registry.selected(args, PEERS) if s.key not in args.skip]
    progress("profile: the ASGI apps in process, without uvicorn")
    apps = app_only(keys, args.profile_requests, args.concurrency, 3)
    heading(
        f"the apps alone, in process (no uvicorn, no sockets): best of 3 × "
        f"{args.profile_requests} modern calls, µs per request"
    )
    note("fake ASGI receive/send; lifespan run first; each answer checked")
    rows: list[list[object]] = []
    for key in keys:
        rows.append([key, *(apps[key][f"c{c}"] for c in args.concurrency)])
    print(table(["app", *(f"c={c}" for c in args.concurrency)], rows))
    results = modern["results"]
    split: dict[str, Any] = {}
    if "bare" in keys:
        note(
            "end to end, server CPU per request minus the app alone ≈ what uvicorn (its HTTP parser, "
            "the loop, sockets) costs every app; µs per request:"
        )
        rows = []
        for c in args.concurrency:
            for key in keys:
                whole = results[f"{key}@c{c}"]["server_cpu_us_per_request"]
                app_us = apps[key][f"c{c}"]
                rows.append([c, key, whole, app_us, round(whole - app_us, 1)])
                split[f"{key}@c{c}"] = {
                    "server_cpu_us": whole,
                    "app_us": app_us,
                    "rest_us": round(whole - app_us, 1),
                }
        print(table(["conc", "server", "server CPU µs/req", "app alone µs", "the rest µs"], rows))
        for c in args.concurrency:
            floor = split[f"bare@c{c}"]["server_cpu_us"]
            sdk = split[f"sdk@c{c}"]["server_cpu_us"] if "sdk" in keys else 0.0
            needed = sdk / GOAL_SPEEDUP
            note(
                f"c={c}: {GOAL_SPEEDUP:.0f}× the SDK needs ≤ {needed:.0f} µs of server CPU per "
                f"request; uvicorn + a bare app already take {floor:.0f} µs, leaving "
                f"{needed - floor:.0f} µs for mcpgen's app (it takes "
                f"{split[f'ours@c{c}']['app_us']:.0f} µs alone)"
            )
    progress("profile: cProfile of ours under wrk load")
    cpu = cpu_profile(
        wrk, max(args.concurrency), args.profile_seconds, args.timeout, args.top, uvicorn_args(args)
    )
    return {"app_only_us_per_request": apps, "split": split, "cprofile": cpu}


# -- the run ------------------------------------------------------------------------------------


def measure(args: argparse.Namespace) -> dict[str, Any]:
    wrk = args.wrk or shutil.which("wrk")
    if wrk is None:
        raise BenchError("wrk: not installed (hint: apt-get install -y wrk)")
    started_load = load()
    uv = uvicorn_args(args)
    stack = uvicorn_stack(args)
    script_dir = Path(args.save_scripts) if args.save_scripts else None
    result: dict[str, Any] = {
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "uvicorn": stack,
        "wrk": wrk_version(wrk),
    }
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        where = script_dir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        modern_script = where / "modern.lua"
        modern_script.write_text(lua_modern())
        specs = [s for s in registry.selected(args, PEERS) if s.key not in args.skip]
        variant = Variant("modern", specs)
        progress(f"starting {', '.join(s.key for s in specs)}")
        with running(specs, uv) as servers:
            for spec in specs:
                variant.scripts[spec.key] = modern_script
                variant.validated[spec.key] = validate_modern(servers[spec.key], args.check)
            note_validation(variant)
            measure_variant(variant, servers, wrk, args)
        result["modern"] = report_variant(variant, args)
        if registry.wanted([s.key for s in specs]):
            result["registry_acceptance"] = acceptance(variant, args.concurrency)

        if args.legacy:
            specs = [s for s in (OURS, SDK_STATEFUL) if s.key not in args.skip]
            legacy = Variant("legacy", specs)
            progress(f"legacy: starting {', '.join(s.key for s in specs)}")
            with running(specs, uv) as servers:
                for spec in specs:
                    session_id = open_session(servers[spec.key])
                    validate_legacy(servers[spec.key], session_id, args.check)
                    path = where / f"legacy-{spec.key}.lua"
                    path.write_text(lua_legacy(session_id, args.check))
                    legacy.scripts[spec.key] = path
                    legacy.validated[spec.key] = {"calls": args.check, "session": session_id}
                measure_variant(legacy, servers, wrk, args)
            result["legacy"] = report_variant(legacy, args)

    result["load_average"] = load_note(started_load)
    goal = result["modern"]["goal"]
    missed = goal.get("met") is False
    if args.profile or (missed and not args.no_profile):
        if missed:
            note("the goal was missed: profiling mcpgen's server (--no-profile to skip)")
        result["profile"] = profile(wrk, args, result["modern"])
    return emit(NAME, result)


def acceptance(variant: Variant, concurrencies: Sequence[int]) -> dict[str, Any]:
    """Issue 12's ratios at each concurrency (req/s decides the 5×)."""

    def at(c: int) -> Callable[[str], tuple[list[float], list[float]]]:
        def of(key: str) -> tuple[list[float], list[float]]:
            cells = variant.cells[(key, c)]
            return [x.requests_per_s for x in cells], [x.server_cpu_us for x in cells]

        return of

    cells = {f"c{c}": at(c) for c in concurrencies}
    return registry.acceptance("HTTP (stateless JSON, 2026-07-28)", cells, "rate")


def note_validation(variant: Variant) -> None:
    heading("validation before timing (http.client, one keep-alive connection per server)")
    for key, v in variant.validated.items():
        note(f"{key}: {v['calls']} calls OK; the answer to wrk's request: {v['answer']}")
        h = v["answer_headers"]
        framing = (
            f"content-length {h['content-length']}"
            if "content-length" in h
            else f"transfer-encoding {h.get('transfer-encoding', '?')}"
        )
        note(f"{' ' * len(key)}  framed with {framing}")


def wrk_version(wrk: str) -> str:
    done = subprocess.run([wrk, "-v"], capture_output=True, text=True, check=False)
    text = (done.stdout + done.stderr).strip().splitlines()
    return text[0] if text else "?"


def concurrency_list(text: str) -> list[int]:
    values = [int(x) for x in text.split(",") if x.strip()]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers")
    return values


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench http_calls", description=DESCRIPTION)
    p.add_argument("--duration", type=int, default=10, help="whole seconds per timed cell (10)")
    p.add_argument(
        "--warmup", type=int, default=2, help="untimed whole seconds before each cell, 0: none (2)"
    )
    p.add_argument(
        "--warmup-first",
        type=int,
        default=3,
        help="untimed whole seconds per server before the first round (3)",
    )
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    p.add_argument(
        "--concurrency",
        type=concurrency_list,
        default=[1, 32],
        help="wrk connections, comma-separated (1,32)",
    )
    p.add_argument("--timeout", type=int, default=5, help="wrk's request timeout, whole s (5)")
    p.add_argument("--check", type=int, default=20, help="validated calls per server (20)")
    p.add_argument(
        "--legacy",
        action="store_true",
        help="also measure a 2025-11-25 session (the SDK with --stateful)",
    )
    p.add_argument(
        "--skip", action="append", default=[], choices=["bare"], help="leave out the ceiling"
    )
    registry.add_options(p)
    p.add_argument("--loop", default="auto", help="uvicorn --loop for every server (auto)")
    p.add_argument("--http", default="auto", help="uvicorn --http for every server (auto)")
    p.add_argument("--wrk", default=None, help="the wrk binary (default: wrk on PATH)")
    p.add_argument("--save-scripts", default=None, help="keep the generated Lua scripts here")
    p.add_argument("--profile", action="store_true", help="profile ours even when the goal is met")
    p.add_argument(
        "--no-profile", action="store_true", help="do not profile ours when the goal is missed"
    )
    p.add_argument(
        "--profile-seconds", type=int, default=10, help="whole seconds under cProfile (10)"
    )
    p.add_argument(
        "--profile-requests",
        type=int,
        default=5000,
        help="requests per in-process app run (5000)",
    )
    p.add_argument("--top", type=int, default=20, help="rows of the profile tables (20)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return measure(parser().parse_args(argv))


if __name__ == "__main__":
    main()
