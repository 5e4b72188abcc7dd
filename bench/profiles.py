"""Where a server's time goes: its code driven in this process; a running server's cProfile."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import math
import os
import pstats
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .harness import SERVERS, BenchError, note, table
from .peers import CALL, INITIALIZE, INITIALIZED, MODERN_HEADERS, PATH, TEXT, legacy_headers
from .peers import modern_call

Message = dict[str, Any]
App = Callable[..., Awaitable[None]]
"""An ASGI app: ``app(scope, receive, send)``."""
T = TypeVar("T")


def server_script(name: str) -> Any:
    """``bench/servers/NAME.py`` imported once, registered so that msgspec resolves its types."""
    registered = f"bench_server_{name}"
    if (module := sys.modules.get(registered)) is None:
        spec = importlib.util.spec_from_file_location(registered, SERVERS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def asgi_app(key: str) -> App:
    """The ASGI app a peer serves over HTTP (see ``peers.PEERS``), built in this process."""
    if key in ("ours", "ours-app", "ours-legacy"):
        from mcpgen.runtime.http.endpoint import McpHttpApp

        app: App = McpHttpApp(server_script("ours").build("http", key == "ours-app"))
    elif key in ("sdk", "sdk-mcpserver"):
        server = server_script("sdk").build(key == "sdk-mcpserver")
        app = server.streamable_http_app(stateless_http=True, json_response=True)
    elif key == "checked":
        app = server_script("bare").checked_app()
    else:
        app = server_script("bare").app
    return app


async def drive(
    app: App,
    n: int,
    concurrency: int,
    between: Callable[[], None] | None = None,
    headers: Sequence[tuple[bytes, bytes]] | Callable[[], Sequence[tuple[bytes, bytes]]] = (),
    legacy: bool = False,
) -> float:
    """µs per stateless call of ``app`` alone, ``concurrency`` at a time, after the lifespan's
    start-up and 50 untimed calls; answers checked. ``between`` runs before every batch;
    ``headers`` go with every request (an ``authorization`` one, say); a function gives
    each request's own. ``legacy``: calls of one 2025-11-25 session instead, begun (and
    its ``initialized`` sent) before the untimed calls."""
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    outbox: asyncio.Queue[Message] = asyncio.Queue()
    state: dict[str, Any] = {}
    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": state}, inbox.get, outbox.put)
    )
    await inbox.put({"type": "lifespan.startup"})
    started = asyncio.ensure_future(outbox.get())
    await asyncio.wait({started, lifespan}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if not started.done() or started.result()["type"] != "lifespan.startup.complete":
        raise BenchError(f"lifespan start-up failed: {lifespan.done() and lifespan.exception()}")
    modern = [(k.lower().encode(), v.encode()) for k, v in MODERN_HEADERS.items()]
    fresh = headers if callable(headers) else None
    if not callable(headers):
        modern += headers
    scope: dict[str, Any] = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1"}
    scope |= {"method": "POST", "scheme": "http", "path": PATH, "raw_path": PATH.encode()}
    scope |= {"query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000)}
    scope |= {"server": ("127.0.0.1", 3001), "headers": [*modern, (b"host", b"127.0.0.1:3001")]}
    bodies, bad = [modern_call(1)] * concurrency, []
    if legacy:
        session = await _legacy_session(app, scope, state)
        named = [(k.lower().encode(), v.encode()) for k, v in legacy_headers(session).items()]
        extra = () if callable(headers) else headers
        scope["headers"] = [*named, *extra, (b"host", b"127.0.0.1:3001")]
        bodies = [LEGACY_CALL % (i + 1) for i in range(concurrency)]

    async def one(index: int = 0) -> None:
        sent, out, status, body = False, [], 0, bodies[index]

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status
            status = message.get("status", status)
            out.append(message.get("body", b""))

        if fresh is None:
            await app(scope | {"state": dict(state)}, receive, send)
        else:
            own = [*scope["headers"], *fresh()]
            await app(scope | {"state": dict(state), "headers": own}, receive, send)
        if status != 200 or TEXT.encode() not in b"".join(out):
            bad.append(b"".join(out)[:300])

    for _ in range(50):
        await one()
    t0, done = time.perf_counter_ns(), 0
    while done < n:
        if between is not None:
            between()
        batch = min(concurrency, n - done)
        await (one() if batch == 1 else asyncio.gather(*(one(i) for i in range(batch))))
        done += batch
    elapsed = time.perf_counter_ns() - t0
    await inbox.put({"type": "lifespan.shutdown"})
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(lifespan, 10)
    if bad:
        raise BenchError(f"in-process answers were wrong: {bad[0]!r}")
    return elapsed / n / 1e3


LEGACY_CALL = (
    b'{"jsonrpc":"2.0","id":%%d,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"%s"}}}' % TEXT.encode()
)
"""``LEGACY_CALL % n``: a 2025-11-25 call (id ``n``) of a session, echoing ``TEXT``."""


async def _legacy_session(app: App, scope: dict[str, Any], state: dict[str, Any]) -> str:
    """A 2025-11-25 session of ``app`` begun (``initialize``, ``initialized``): its id."""

    async def post(body: bytes, session: str = "") -> tuple[int, dict[bytes, bytes], bytes]:
        given = [(k.lower().encode(), v.encode()) for k, v in legacy_headers(session).items()]
        own = scope | {"state": dict(state), "headers": [*given, (b"host", b"127.0.0.1:3001")]}
        messages: list[Message] = []
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            messages.append(message)

        await app(own, receive, send)
        start = messages[0]
        answer = b"".join(m.get("body", b"") for m in messages[1:])
        return start["status"], dict(start.get("headers", [])), answer

    status, answered, data = await post(INITIALIZE)
    session = answered.get(b"mcp-session-id", b"").decode()
    if status != 200 or not session:
        raise BenchError(f"in-process initialize failed: HTTP {status} {data[:300]!r}")
    status, _, data = await post(INITIALIZED, session)
    if status != 202:
        raise BenchError(f"in-process initialized refused: HTTP {status} {data[:300]!r}")
    return session


def connection_us(n: int, repeat: int = 5, app: bool = False) -> float:
    """Best of ``repeat``, µs per ``tools/call`` through our sans-IO ``Connection`` alone."""
    ours = server_script("ours")
    conn = ours.build("stdio", app).connection()
    conn.receive(INITIALIZE)
    conn.receive(INITIALIZED)
    types = importlib.import_module("mcpgen.generated.v2025_11_25.types")
    result = types.CallToolResult(content=[types.TextContent(text="echo")])
    frames = [CALL % (i, i) for i in range(1, n + 1)]
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter_ns()
        for frame in frames:
            event = conn.receive(frame)[0]
            conn.result(event.id, result, event.spec.name)
        best = min(best, (time.perf_counter_ns() - started) / n / 1e3)
    return best


class Loopback:
    """An in-memory transport: ``frames`` handed out one loop iteration apart, replies counted."""

    def __init__(self, frames: Sequence[bytes]) -> None:
        self.frames, self.sent = iter(frames), 0

    async def receive(self) -> bytes | None:
        await asyncio.sleep(0)
        return next(self.frames, None)

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        self.sent += 1

    async def close(self) -> None:
        return None


def session_us(n: int, repeat: int = 5, app: bool = False) -> float:
    """Best of ``repeat``, µs per ``tools/call`` through ``Server.serve`` on a ``Loopback``."""
    ours, best = server_script("ours"), math.inf
    for _ in range(repeat):
        transport = Loopback([INITIALIZE, INITIALIZED, *(CALL % (i, i) for i in range(1, n + 1))])
        server = ours.build("stdio", app)

        async def serve() -> int:
            started = time.perf_counter_ns()
            await server.serve(transport)
            return time.perf_counter_ns() - started

        elapsed = asyncio.run(serve())
        if transport.sent != n + 1:
            raise BenchError(f"loopback: {transport.sent} answers to {n + 1} requests")
        best = min(best, elapsed / n / 1e3)
    return best


# -- cProfile of a running server ----------------------------------------------------------------


def under_profile(pid: int, out: Path, work: Callable[[], T]) -> T:
    """Run ``work`` with a ``--profile OUT`` server's profiler on; wait for the profile."""
    os.kill(pid, signal.SIGUSR1)
    time.sleep(0.1)
    result = work()
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 30
    while not Path(f"{out}.done").exists():
        if time.monotonic() > deadline:
            raise BenchError("the profiled server wrote no profile")
        time.sleep(0.05)
    return result


IDLE = "waiting in epoll"


def where(filename: str, func: str) -> str:
    """A profile entry's group: its module, under its package for ours, asyncio, uvicorn."""
    if filename == "~":
        return IDLE if "poll" in func else func
    path = Path(filename)
    package = next(
        (p for p in ("runtime", "generated", "asyncio", "uvicorn") if p in path.parts), ""
    )
    return f"{package}.{path.stem}" if package else path.name


def summary(path: Path, n: int, unit: str, top: int = 12) -> dict[str, Any]:
    """A cProfile dump of ``n`` units of work: own time by module, then the top functions."""
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = getattr(pstats.Stats(str(path)), "stats")
    own: dict[str, float] = defaultdict(float)
    for (filename, _, func), (_, _, tottime, *_) in raw.items():
        own[where(filename, func)] += tottime
    busy = sum(v for k, v in own.items() if k != IDLE)
    note(f"busy (not in epoll): {busy / n * 1e6:.1f} µs per {unit}, profiler overhead included")
    ranked = sorted(own.items(), key=lambda kv: kv[1], reverse=True)[:top]
    rows = [[k, f"{v / n * 1e6:.1f}", "" if k == IDLE else f"{v / busy:.0%}"] for k, v in ranked]
    print(table(["where (own time)", f"µs per {unit}", "share of busy"], rows))
    buffer = io.StringIO()
    pstats.Stats(str(path), stream=buffer).strip_dirs().sort_stats("tottime").print_stats(top)
    lines = buffer.getvalue().splitlines()
    lines = lines[next(i for i, x in enumerate(lines) if x.lstrip().startswith("ncalls")) :]
    print("\n".join(lines).rstrip())
    return {
        f"busy_us_per_{unit}": round(busy / n * 1e6, 1),
        f"own_us_per_{unit}": {k: round(v / n * 1e6, 2) for k, v in ranked},
        "top_tottime": [x.strip() for x in lines[1:] if x.strip()],
    }
