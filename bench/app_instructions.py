"""Instructions and simulated cache misses per stateless ``tools/call`` of each ASGI app
(ours, the SDK's, the bare one), driven in process under ``valgrind --tool=cachegrind``.

Wall-clock timings on a shared machine swing by 2x between minutes; instruction counts do
not, so this is the figure to judge a change to the request path by. Each app serves the
request of ``http_calls`` through the same fake ASGI receive/send (``http_calls._drive``),
with a cache-evicting step before every request: under real load uvicorn, the kernel and
the load generator run between two requests and evict the caches, and a warm loop would
flatter every app. Each app runs twice, N1 and N2 requests, and a figure per request is the
difference divided by N2 - N1, which cancels start-up and imports. A null app (answers
without reading the request) is measured the same way and subtracted: what remains is each
app's own work, not the driver's or the eviction's. ``est. cycles`` = Ir + 10 (I1 + D1
misses) + 100 LL misses, cachegrind's simulated caches of this machine: a rough model, but
it ranks changes the way real runs under load do.

Needs valgrind (``apt-get install -y valgrind``). ``--child KEY N`` is the measured
process itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import BENCHMARKS
from ._util import ROOT, BenchError, emit, heading, load, load_note, note, progress, table
from .http_calls import TEXT, App, Message, Scope

NAME = "app_instructions"
DESCRIPTION = BENCHMARKS[NAME]
APPS = ("bare", "ours", "sdk")
#: Also measurable (``--apps``): the registry (``App``) and the SDK's ``MCPServer``.
MORE_APPS = ("ours-app", "sdk-mcpserver")
NULL = "null"
NULL_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"%s"}]}}' % (
    TEXT.encode()
)
#: Bytes written (one per cache line) before each request: more than the last-level cache.
EVICT_BYTES = 4 * 1024 * 1024
#: Longest a cachegrind child may take (the SDK's 400 requests take about a minute).
CHILD_TIMEOUT_S = 900
#: cachegrind's summary lines (spaces squeezed) → our names.
COUNTERS = {"I refs": "ir", "I1 misses": "i1", "D1 misses": "d1", "LL misses": "ll"}
_LINE = re.compile(r"==\d+==\s+(I\s+refs|I1\s+misses|D1\s+misses|LL\s+misses):\s+([\d,]+)")


def evictor() -> Callable[[], None]:
    """A step that replaces the caches' contents, as other processes would."""
    buffer = bytearray(EVICT_BYTES)
    lines = bytes(len(buffer[::64]))

    def evict() -> None:
        buffer[::64] = lines

    return evict


def null_of(bare: App) -> App:
    """The baseline: the bare app's lifespan, but requests answered without looking at
    them, so that what the driver and the ASGI calls cost is not counted as any app's."""

    async def null_app(
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await bare(scope, receive, send)
            return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": NULL_ANSWER})

    return null_app


def child(key: str, n: int) -> None:
    """The measured process: ``n`` requests of app ``key``, each after an eviction."""
    from .http_calls import _drive, app_of

    app = null_of(app_of("bare")) if key == NULL else app_of(key)
    asyncio.run(_drive(app, n, 1, between=evictor()))


def counted(key: str, n: int) -> dict[str, int]:
    """cachegrind's totals for one child run."""
    command = [
        shutil.which("valgrind") or "valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench.app_instructions",
        "--child",
        key,
        str(n),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=CHILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"cachegrind run of {key} ({n} requests) took over {CHILD_TIMEOUT_S} s")
    totals = {
        COUNTERS[" ".join(m.group(1).split())]: int(m.group(2).replace(",", ""))
        for m in _LINE.finditer(done.stderr)
    }
    if done.returncode != 0 or len(totals) != len(COUNTERS):
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        raise BenchError(f"cachegrind run failed (exit {done.returncode}): {key} {n}\n{tail}")
    return totals


def per_request(key: str, n1: int, n2: int) -> dict[str, float]:
    """The difference of two run lengths, per request (the two runs side by side)."""
    with ThreadPoolExecutor(2) as pool:
        short, long = pool.map(lambda n: counted(key, n), (n1, n2))
    return {k: (long[k] - short[k]) / (n2 - n1) for k in COUNTERS.values()}


def cycles(figures: dict[str, float]) -> float:
    return figures["ir"] + 10 * (figures["i1"] + figures["d1"]) + 100 * figures["ll"]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("valgrind") is None:
        raise BenchError("valgrind: not installed (hint: apt-get install -y valgrind)")
    start = load()
    heading(
        "stateless tools/call, each ASGI app in process under cachegrind, caches evicted "
        f"before every request; per request = (run of {args.n2} - run of {args.n1}) / "
        f"{args.n2 - args.n1}, minus a null app's (same driver and eviction)"
    )
    progress("the null app")
    base = per_request(NULL, args.n1, args.n2)
    results: dict[str, dict[str, float]] = {}
    for key in args.apps:
        progress(f"{key}: two cachegrind runs")
        raw = per_request(key, args.n1, args.n2)
        figures = {k: round(raw[k] - base[k], 1) or 0.0 for k in raw}  # no -0.0
        figures["cycles"] = round(cycles(figures))
        results[key] = figures
    rows = [
        [
            key,
            f"{f['ir']:,.0f}",
            f"{f['i1']:,.0f}",
            f"{f['d1']:,.0f}",
            f"{f['ll']:,.1f}",
            f"{f['cycles']:,.0f}",
        ]
        for key, f in results.items()
    ]
    print(
        table(["app", "instructions", "I1 misses", "D1 misses", "LL misses", "est. cycles"], rows)
    )
    ratios: dict[str, float] = {}
    if "ours" in results and "sdk" in results:
        ratios["sdk_over_ours_cycles"] = round(
            results["sdk"]["cycles"] / results["ours"]["cycles"], 2
        )
        note(
            f"the SDK's app costs {ratios['sdk_over_ours_cycles']}x ours in est. cycles per request"
        )
    if "ours" in results and "bare" in results:
        ratios["ours_over_bare_cycles"] = round(
            results["ours"]["cycles"] / results["bare"]["cycles"], 2
        )
        note(
            f"ours costs {ratios['ours_over_bare_cycles']}x the bare app (the floor: decode, echo, encode)"
        )
    return emit(
        NAME,
        {
            "n1": args.n1,
            "n2": args.n2,
            "per_request": results,
            "ratios": ratios,
            "load_average": load_note(start),
        },
    )


def app_list(text: str) -> list[str]:
    keys = [k for k in text.split(",") if k]
    unknown = [k for k in keys if k not in (*APPS, *MORE_APPS)]
    if not keys or unknown:
        raise argparse.ArgumentTypeError(f"unknown apps: {unknown or text!r}")
    return keys


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=DESCRIPTION)
    p.add_argument("--n1", type=int, default=100, help="requests in the shorter run (100)")
    p.add_argument("--n2", type=int, default=400, help="requests in the longer run (400)")
    p.add_argument(
        "--apps",
        type=app_list,
        default=list(APPS),
        help=f"comma-separated among {','.join((*APPS, *MORE_APPS))} (default: {','.join(APPS)})",
    )
    p.add_argument("--child", nargs=2, metavar=("KEY", "N"), help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return {}
    if args.n2 <= args.n1 or args.n1 < 1:
        raise BenchError("--n2 must exceed --n1, and both be positive")
    return measure(args)


if __name__ == "__main__":
    main()
