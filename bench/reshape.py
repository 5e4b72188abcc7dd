"""What answering an older peer costs a 2026-07-28 ``App``: server CPU (or instructions) per
``tools/call`` answered to a peer of each version, side by side, and ``reshape()`` alone."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec

from . import BENCHMARKS
from .harness import ROOT, BenchError, alternate, emit, heading, load, load_note, note, progress
from .harness import table, tool, verdict
from .peers import CLIENT_INFO
from .profiles import Loopback

NAME = "reshape"
OWN = "2026-07-28"
"""The version the ``App`` is typed against; a peer of it needs no reshaping."""
OLDEST = "2024-11-05"
GOAL_RATIO = 1.5
"""A 2024-11-05 peer costs the server at most 1.5× the CPU of a 2026-07-28 peer per call."""
TOOLS = ("echo", "measure")
PEERS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
DEFAULT_PEERS = (OWN, OLDEST)
CHILD_TIMEOUT_S = 900
INSTRUCTIONS = re.compile(r"==\d+==\s+I\s+refs:\s+([\d,]+)")


class Measured(msgspec.Struct):
    """What the ``measure`` tool answers: structured content, which 2024-11-05 and
    2025-03-26 lack (their answer drops it and keeps the text block of the same JSON)."""

    text: str
    length: int
    words: list[str]


def build() -> Any:
    """The server of a 2026-07-28 ``App`` with two tools: ``echo`` (a string: one text
    block) and ``measure`` (a Struct: structured content and its text)."""
    from mcpgen.runtime import App

    stubs = importlib.import_module("mcpgen.generated.v2026_07_28.server")
    app = App("mcpgen-reshape", "1.0.0", binding=stubs)

    @app.tool
    def echo(text: str) -> str:
        """Echo text"""
        return text

    @app.tool
    def measure(text: str) -> Measured:
        """The text, its length and its words"""
        return Measured(text, len(text), text.split())

    return app.server


def modern(version: str) -> bool:
    from mcpgen.generated import ERAS

    return ERAS[version] == "modern"


def frames(peer: str, name: str, n: int) -> list[bytes]:
    """The frames a peer of ``peer``'s version sends for ``n`` calls of tool ``name``: a
    legacy peer's handshake first; a modern peer's calls carry its ``_meta`` each."""
    encode = msgspec.json.encode
    out: list[bytes] = []
    meta: dict[str, Any] = {}
    if modern(peer):
        meta = {
            "io.modelcontextprotocol/protocolVersion": peer,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
    else:
        hello = {"protocolVersion": peer, "capabilities": {}, "clientInfo": CLIENT_INFO}
        out.append(encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        out.append(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    for i in range(1, n + 1):
        params: dict[str, Any] = {"name": name, "arguments": {"text": f"call {i}"}}
        if meta:
            params["_meta"] = meta
        out.append(encode({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}))
    return out


class Kept(Loopback):
    """A loopback that keeps every answer, to check them after the timed run."""

    def __init__(self, frames: Sequence[bytes]) -> None:
        super().__init__(frames)
        self.answers: list[bytes] = []

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        self.answers.append(data)


def check(answers: list[bytes], peer: str, name: str, n: int) -> None:
    """Every call answered, as ``peer``'s version has it."""
    calls = [msgspec.json.decode(a) for a in answers if b'"content"' in a]
    if len(calls) != n:
        raise BenchError(f"{peer} {name}: {len(calls)} answers to {n} calls")
    for i, frame in enumerate(calls, 1):
        result = frame.get("result") or {}
        text = result.get("content", [{}])[0].get("text", "")
        ok = frame["id"] == i and f"call {i}" in text
        ok = ok and ("resultType" in result) == modern(peer)
        structured = name == "measure" and peer not in ("2024-11-05", "2025-03-26")
        if not ok or ("structuredContent" in result) != structured:
            raise BenchError(f"{peer} {name}: wrong answer to call {i}: {frame!r:.300}")


def serve(peer: str, name: str, n: int) -> float:
    """µs of this process's CPU per call, ``n`` calls of ``name`` served to a ``peer``
    through ``Server.serve`` on an in-memory loopback (answers checked after)."""
    transport = Kept(frames(peer, name, n))
    server = build()

    async def run() -> int:
        started = time.process_time_ns()
        await server.serve(transport)
        return time.process_time_ns() - started

    elapsed = asyncio.run(run())
    check(transport.answers, peer, name, n)
    return elapsed / n / 1e3


# -- instructions (cachegrind) -----------------------------------------------------------------


def counted(peer: str, name: str, n: int) -> int:
    """cachegrind's instruction count of a child serving ``n`` calls."""
    command = [tool("valgrind"), "--tool=cachegrind", "--cache-sim=no"]
    command += ["--cachegrind-out-file=/dev/null", sys.executable, "-m", f"bench.{NAME}"]
    command += ["--child", peer, name, str(n)]
    env = os.environ | {"PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"cachegrind run of {peer} {name} took over {CHILD_TIMEOUT_S} s")
    found = INSTRUCTIONS.search(done.stderr)
    if found is not None and done.returncode == 0:
        return int(found[1].replace(",", ""))
    tail = "\n".join(done.stderr.strip().splitlines()[-10:])
    raise BenchError(f"cachegrind run failed (exit {done.returncode}): {peer} {name} {n}\n{tail}")


def instructions(peer: str, name: str, n1: int, n2: int) -> float:
    """Instructions per call: the difference of two run lengths (run side by side)."""
    with ThreadPoolExecutor(2) as pool:
        short, long = pool.map(lambda n: counted(peer, name, n), (n1, n2))
    return (long - short) / (n2 - n1)


# -- reshape() alone ---------------------------------------------------------------------------


def results() -> dict[str, Any]:
    """The 2026-07-28 results the micro figure reshapes: the two tools' answers, and a
    ``tools/list`` answer of a tool with what older versions lack at every depth."""
    t = importlib.import_module("mcpgen.generated.v2026_07_28.types")
    text = t.TextContent(text="call 1")
    structured = {"text": "call 1", "length": 6, "words": ["call", "1"]}
    tool_ = t.Tool(
        name="measure",
        title="Measure",
        description="The text, its length and its words",
        icons=[t.Icon(src="https://example.com/m.png")],
        input_schema=t.convert({"type": "object"}, t.ToolInputSchema),
        output_schema=t.convert({"type": "object"}, t.ToolOutputSchema),
        annotations=t.ToolAnnotations(read_only_hint=True, title="Measure"),
    )
    return {
        "echo": ("tools/call", t.CallToolResult(content=[text])),
        "measure": (
            "tools/call",
            t.CallToolResult(content=[text], structured_content=structured),
        ),
        "tools/list": (
            "tools/list",
            t.ListToolsResult(tools=[tool_], ttl_ms=60_000, cache_scope="public"),
        ),
    }


def peer_type(version: str, method: str) -> Any:
    """The result type the runtime reshapes a ``method`` answer to for a peer of ``version``."""
    binding = importlib.import_module("mcpgen.generated").load(version, "methods").BINDING
    return next(m.result for m in binding.methods if m.name == method and m.kind == "request")


def per_call(fn: Callable[[], Any], loops: int, repeat: int) -> float:
    """Best of ``repeat``, µs per call of ``fn`` over ``loops`` calls."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter_ns()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter_ns() - started) / loops / 1e3)
    return best


def micro(peers: Sequence[str], loops: int, repeat: int) -> dict[str, Any]:
    """µs per ``reshape()`` of each 2026-07-28 result to each peer's result type."""
    types = importlib.import_module("mcpgen.generated.v2026_07_28.types")
    support = importlib.import_module("mcpgen.generated._support")
    with_source = "source" in inspect.signature(support.reshape).parameters
    heading(
        f"reshape() alone, best of {repeat} × {loops}, µs per call: a 2026-07-28 result as "
        "builtins (resultType included) made the peer's result type"
    )
    note(
        "as called: reshape(plain, peer_type"
        + (", source=type(result))" if with_source else ") (this reshape takes no source)")
    )
    note("no source: reshape(plain, peer_type); floor: the value already in the peer's shape")
    rows: list[list[object]] = []
    figures: dict[str, Any] = {}
    for key, (method, value) in results().items():
        plain = msgspec.to_builtins(value)
        for peer in peers:
            if peer == OWN:
                continue
            target = peer_type(peer, method)
            ready = msgspec.to_builtins(types.reshape(plain, target))
            source: dict[str, Any] = {"source": type(value)} if with_source else {}
            called = per_call(lambda: types.reshape(plain, target, **source), loops, repeat)
            bare = per_call(lambda: types.reshape(plain, target), loops, repeat)
            floor = per_call(lambda: types.reshape(ready, target), loops, repeat)
            rows.append([key, peer, called, bare, floor, f"{called / floor:.2f}×"])
            figures[f"{key} → {peer}"] = {
                "as_called_us": round(called, 2),
                "no_source_us": round(bare, 2),
                "floor_us": round(floor, 2),
            }
    print(table(["result", "peer", "as called", "no source", "floor", "as called / floor"], rows))
    return {"source_passed": with_source, "us_per_call": figures}


# -- the report ----------------------------------------------------------------------------------


def measure(args: argparse.Namespace) -> dict[str, Any]:
    start = load()
    for peer in args.peers:
        for name in args.tools:
            serve(peer, name, 20)  # imports, plans, caches: untimed
    heading(
        f"tools/call of a 2026-07-28 App, Server.serve on an in-memory loopback, in process: "
        f"server CPU µs per call over {args.calls} calls, median of {args.rounds} interleaved "
        "rounds (a legacy peer's handshake included, one frame in 1,000s)"
    )
    cpu: dict[str, dict[str, list[float]]] = {n: {p: [] for p in args.peers} for n in args.tools}
    for i in range(args.rounds):
        progress(f"round {i + 1}/{args.rounds}")
        for name in args.tools:
            for peer in alternate(args.peers, i):
                cpu[name][peer].append(serve(peer, name, args.calls))
    medians = {n: {p: statistics.median(v) for p, v in c.items()} for n, c in cpu.items()}
    rows: list[list[object]] = []
    ratios: dict[str, dict[str, float]] = {}
    for name, by_peer in medians.items():
        own = by_peer.get(OWN)
        for peer, us in by_peer.items():
            r = us / own if own else 0.0
            ratios.setdefault(name, {})[peer] = round(r, 3)
            low, high = min(cpu[name][peer]), max(cpu[name][peer])
            rows.append([name, peer, us, low, high, f"{r:.2f}×" if own else ""])
    print(table(["tool", "peer", "CPU µs/call", "min", "max", f"/ {OWN}"], rows))
    goals: dict[str, Any] = {}
    for name in args.tools:
        r = ratios[name].get(OLDEST)
        if r is not None and OWN in ratios[name]:
            goals[name] = {"goal": GOAL_RATIO, "ratio": r, "met": r <= GOAL_RATIO}
            note(
                f"goal: {name} to a {OLDEST} peer ≤ {GOAL_RATIO}× the CPU of a {OWN} peer → "
                f"{r:.2f}×, {verdict(r <= GOAL_RATIO)}"
            )
    payload: dict[str, Any] = {"calls": args.calls, "rounds": args.rounds}
    payload |= {"cpu_us_per_call": cpu, "median_cpu_us_per_call": medians, "ratios": ratios}
    if args.instructions:
        payload["instructions_per_call"] = counts = report_instructions(args)
        payload["instruction_ratios"] = {
            name: {p: round(v / by[OWN], 3) for p, v in by.items()}
            for name, by in counts.items()
            if OWN in by
        }
    payload["goals"] = goals
    if args.micro_loops:
        payload["reshape_alone"] = micro(args.peers, args.micro_loops, args.micro_repeat)
    return emit(NAME, payload | {"load_average": load_note(start)})


def report_instructions(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    heading(
        f"the same under valgrind --tool=cachegrind: instructions per call = (run of {args.n2} "
        f"- run of {args.n1}) / {args.n2 - args.n1}"
    )
    counts: dict[str, dict[str, float]] = {}
    rows: list[list[object]] = []
    for name in args.tools:
        for peer in args.peers:
            progress(f"cachegrind: {name} to {peer}")
            ir = counts.setdefault(name, {})[peer] = instructions(peer, name, args.n1, args.n2)
        own = counts[name].get(OWN)
        for peer, ir in counts[name].items():
            rows.append([name, peer, f"{ir:,.0f}", f"{ir / own:.2f}×" if own else ""])
    print(table(["tool", "peer", "instructions/call", f"/ {OWN}"], rows))
    return counts


def versions(text: str) -> list[str]:
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    if chosen == ["all"]:
        return list(PEERS)
    unknown = [v for v in chosen if v not in PEERS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"versions are {', '.join(PEERS)} (or all)")
    return chosen


def names(text: str) -> list[str]:
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    if not chosen or any(v not in TOOLS for v in chosen):
        raise argparse.ArgumentTypeError(f"tools are {', '.join(TOOLS)}")
    return chosen


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--calls", type=int, default=2000, help="calls per measured run (2000)")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    peers = f"peer versions, comma-separated, or all ({OWN},{OLDEST})"
    p.add_argument("--peers", type=versions, default=list(DEFAULT_PEERS), help=peers)
    tools = "tools called: echo (a text block), measure (structured content) (both)"
    p.add_argument("--tools", type=names, default=list(TOOLS), help=tools)
    p.add_argument("--instructions", action="store_true", help="also count them (valgrind)")
    p.add_argument("--n1", type=int, default=200, help="calls in the shorter cachegrind run")
    p.add_argument("--n2", type=int, default=1000, help="calls in the longer cachegrind run")
    p.add_argument(
        "--micro-loops", type=int, default=20000, help="reshape() calls per timing (0: skip)"
    )
    p.add_argument("--micro-repeat", type=int, default=5, help="timings, best kept (5)")
    p.add_argument("--child", nargs=3, metavar=("PEER", "TOOL", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        peer, name, n = args.child[0], args.child[1], int(args.child[2])
        serve(peer, name, n)
        return {}
    if args.calls < 1 or args.rounds < 1:
        raise BenchError("--calls and --rounds must be positive")
    if args.instructions and (args.n2 <= args.n1 or args.n1 < 1):
        raise BenchError("--n2 must exceed --n1, and both be positive")
    return measure(args)


if __name__ == "__main__":
    main()
