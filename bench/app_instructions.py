"""Instructions and cache misses per ``tools/call`` of each ASGI app, under cachegrind (stateless
calls; ``ours-legacy``: the calls of one 2025-11-25 session)."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import BENCHMARKS
from .harness import ROOT, BenchError, emit, heading, load, load_note, note, progress, table, tool
from .peers import PEERS, TEXT
from .profiles import App, asgi_app, drive

NAME = "app_instructions"
NULL_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"%s"}]}}'
EVICT_BYTES = 4 * 1024 * 1024
"""Written (one byte per cache line) before each request: more than the last-level cache."""
CHILD_TIMEOUT_S = 900
"""The longest a cachegrind child may take (the SDK's 400 requests take about a minute)."""
COUNTERS = {"I refs": "ir", "I1 misses": "i1", "D1 misses": "d1", "LL misses": "ll"}
LINE = re.compile(r"==\d+==\s+(I\s+refs|I1\s+misses|D1\s+misses|LL\s+misses):\s+([\d,]+)")


def evictor() -> Callable[[], None]:
    """A step that replaces the caches' contents, as other processes would."""
    buffer = bytearray(EVICT_BYTES)
    lines = bytes(len(buffer[::64]))

    def evict() -> None:
        buffer[::64] = lines

    return evict


def null_of(bare: App) -> App:
    """The baseline: the bare app's lifespan, but requests answered without reading them."""

    async def null_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await bare(scope, receive, send)
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": NULL_ANSWER % TEXT.encode()})

    return null_app


def counted(key: str, n: int) -> dict[str, int]:
    """cachegrind's totals for ``n`` requests of app ``key`` (``null``), each after an eviction."""
    command = [tool("valgrind"), "--tool=cachegrind", "--cache-sim=yes"]
    command += ["--cachegrind-out-file=/dev/null", sys.executable, "-m", f"bench.{NAME}"]
    command += ["--child", key, str(n)]
    env = os.environ | {"PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"cachegrind run of {key} ({n} requests) took over {CHILD_TIMEOUT_S} s")
    found = LINE.finditer(done.stderr)
    totals = {COUNTERS[" ".join(m[1].split())]: int(m[2].replace(",", "")) for m in found}
    if done.returncode != 0 or len(totals) != len(COUNTERS):
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        raise BenchError(f"cachegrind run failed (exit {done.returncode}): {key} {n}\n{tail}")
    return totals


def per_request(key: str, n1: int, n2: int) -> dict[str, float]:
    """The difference of two run lengths (run side by side), per request."""
    with ThreadPoolExecutor(2) as pool:
        short, long = pool.map(lambda n: counted(key, n), (n1, n2))
    return {k: (long[k] - short[k]) / (n2 - n1) for k in COUNTERS.values()}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    start = load()
    heading(
        "tools/call (stateless; ours-legacy: in a 2025-11-25 session), each ASGI app in process under cachegrind, caches evicted "
        f"before every request; per request = (run of {args.n2} - run of {args.n1}) / "
        f"{args.n2 - args.n1}, minus a null app's (same driver and eviction)"
    )
    progress("the null app")
    base = per_request("null", args.n1, args.n2)
    results: dict[str, dict[str, float]] = {}
    for key in args.apps:
        progress(f"{key}: two cachegrind runs")
        raw = per_request(key, args.n1, args.n2)
        f = results[key] = {k: round(raw[k] - base[k], 1) or 0.0 for k in raw}  # no -0.0
        f["cycles"] = round(f["ir"] + 10 * (f["i1"] + f["d1"]) + 100 * f["ll"])
    rows = [[key, *(f"{f[k]:,.0f}" for k in ("ir", "i1", "d1"))] for key, f in results.items()]
    for row, f in zip(rows, results.values()):
        row += [f"{f['ll']:,.1f}", f"{f['cycles']:,.0f}"]
    columns = "instructions|I1 misses|D1 misses|LL misses|est. cycles"
    print(table(["app", *columns.split("|")], rows))
    note("est. cycles = instructions + 10 × (I1 + D1 misses) + 100 × LL misses")
    ratios: dict[str, float] = {}
    pairs = (("sdk", "ours"), ("ours", "bare"), ("ours-app", "ours"), ("ours-legacy", "ours"))
    for top, bottom in pairs:
        if top in results and bottom in results:
            r = round(results[top]["cycles"] / results[bottom]["cycles"], 2)
            ratios[f"{top}_over_{bottom}_cycles"] = r
            note(f"{top} / {bottom}: {r:.2f}× the est. cycles per request")
    payload = {"n1": args.n1, "n2": args.n2, "per_request": results, "ratios": ratios}
    return emit(NAME, payload | {"load_average": load_note(start)})


#: Apps beside the peers': ours serving one 2025-11-25 session's calls.
LEGACY_APPS = ("ours-legacy",)


def app_list(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    known = [*PEERS, *LEGACY_APPS]
    if not keys or set(keys) - set(known) or len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(f"distinct apps among {', '.join(known)}")
    return keys


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--n1", type=int, default=100, help="requests in the shorter run (100)")
    p.add_argument("--n2", type=int, default=400, help="requests in the longer run (400)")
    apps = "comma-separated (bare,ours,sdk; also checked, ours-app, ours-legacy, sdk-mcpserver)"
    default = ["bare", "ours", "ours-legacy", "sdk"]
    p.add_argument("--apps", type=app_list, default=default, help=apps)
    p.add_argument("--child", nargs=2, metavar=("KEY", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        key, n = args.child[0], int(args.child[1])
        headers: list[tuple[bytes, bytes]] = []
        if key == "null":
            app = null_of(asgi_app("bare"))
        elif key == "ours-app-auth":  # bench.auth_cost's protected app, one token
            from .auth_cost import child_app

            app, headers = child_app()
        else:
            app = asgi_app(key)
        legacy = key in LEGACY_APPS
        asyncio.run(drive(app, n, 1, between=evictor(), headers=headers, legacy=legacy))
        return {}
    if args.n2 <= args.n1 or args.n1 < 1:
        raise BenchError("--n2 must exceed --n1, and both be positive")
    return measure(args)


if __name__ == "__main__":
    main()
