"""``tools/call`` round trips, cold start and idle memory over stdio (see docs/performance.md)."""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from . import BENCHMARKS, peers
from .harness import BenchError, Process, alternate, clean_env, cpu_seconds, emit, heading, load
from .harness import load_note, medians, memory, note, progress, python, ratio, table, tool
from .harness import verdict
from .peers import CALL, INITIALIZE, INITIALIZED, LEGACY, Peer, Reply, rate_row
from .profiles import connection_us, session_us, summary, under_profile

NAME = "stdio_calls"
GOAL_SPEEDUP, GOAL_COLD_MS, GOAL_RSS_MIB = 5.0, 150.0, 30.0
"""Ours ≥ 5× the SDK's calls/s; a cold start under 150 ms; idle VmRSS under 30 MiB."""
FLOOR = "python -I -c pass (spawn → exit)"

reply_decoder = msgspec.json.Decoder(Reply)


def spawn(peer: Peer, *extra: str) -> Process:
    return Process(peer.command("stdio", *extra), peer.key, pipes=True)


def handshake(server: Process) -> int:
    """``initialize`` (its answer checked) and ``initialized``; returns spawn → answer, ns."""
    os.write(server.fd_in, INITIALIZE + b"\n")
    line = server.read_line()
    elapsed = time.perf_counter_ns() - server.started_ns
    result = reply_decoder.decode(line).result
    if result is None or result.protocolVersion != LEGACY:
        raise BenchError(f"{server.label}: bad initialize answer {line[:300]!r}")
    os.write(server.fd_in, INITIALIZED + b"\n")
    return elapsed


def calls(server: Process, first: int, n: int) -> tuple[list[int], int]:
    """``n`` calls, one in flight: each round trip's ns and the total; answers checked after."""
    lines = [CALL % (i, i) + b"\n" for i in range(first, first + n)]
    latencies, answers = [0] * n, [b""] * n
    write, fd, read_line, clock = os.write, server.fd_in, server.read_line, time.perf_counter_ns
    started = clock()
    for k in range(n):
        t = clock()
        write(fd, lines[k])
        answers[k] = read_line()
        latencies[k] = clock() - t
    total = clock() - started
    for i, line in enumerate(answers, first):
        r = reply_decoder.decode(line)
        content = r.result.content if r.result else []
        if r.id != i or [c.get("text") for c in content] != [f"echo {i}"]:
            raise BenchError(f"{server.label}: wrong answer to call {i}: {line[:300]!r}")
    return latencies, total


def percentile(sorted_ns: Sequence[int], q: float) -> float:
    """Nearest-rank percentile of sorted nanosecond samples, in µs."""
    return sorted_ns[max(1, math.ceil(q / 100 * len(sorted_ns))) - 1] / 1e3


def throughput_round(peer: Peer, n: int, warmup: int) -> dict[str, float]:
    with spawn(peer) as server:
        handshake(server)
        calls(server, 1, warmup)
        cpu = cpu_seconds(server.pid)
        latencies, total = calls(server, 1 + warmup, n)
        cpu = cpu_seconds(server.pid) - cpu
    latencies.sort()
    figures = {"calls_per_s": n / (total / 1e9), "p50_us": percentile(latencies, 50)}
    return figures | {"p99_us": percentile(latencies, 99), "server_cpu_us": cpu / n * 1e6}


def cold_spawn(peer: Peer, idle_calls: int, settle: float) -> dict[str, float]:
    """Spawn → ``initialize`` answer, the server's CPU then, and its memory once idle."""
    with spawn(peer) as server:
        cold = {"ms": handshake(server) / 1e6, "cpu_ms": cpu_seconds(server.pid) * 1e3}
        calls(server, 1, idle_calls)
        time.sleep(settle)
        return cold | memory(server.pid)


def interpreter_floor() -> dict[str, float]:
    """Spawn → exit of ``python -I -c pass``: under every cold start."""
    started = time.perf_counter()
    subprocess.run(python("-c", "pass"), env=clean_env(), check=True)
    return {"ms": (time.perf_counter() - started) * 1e3}


INSTRUCTIONS = re.compile(r"==\d+==\s+I\s+refs:\s+([\d,]+)")


def instructions(peer: Peer, n: int) -> int:
    """Instructions (cachegrind) of one server's whole life: spawn, handshake, ``n`` calls
    one at a time, stdin closed."""
    grind = [tool("valgrind"), "--tool=cachegrind", "--cache-sim=no"]
    grind.append("--cachegrind-out-file=/dev/null")
    server = Process([*grind, *peer.command("stdio")], peer.key, pipes=True)
    try:
        handshake(server)
        calls(server, 1, n)
    finally:
        said = server.stop()
    found = INSTRUCTIONS.search(said)
    if found is None:
        raise BenchError(f"{peer.key}: cachegrind printed no total\n{said[-2000:]}")
    return int(found[1].replace(",", ""))


def per_call_instructions(args: argparse.Namespace) -> dict[str, Any]:
    """Instructions per call of each server: (a run of n2 calls - a run of n1) / (n2 - n1),
    the two runs side by side. Counts, unlike seconds, do not move with the machine's load."""
    chosen, n1, n2 = peers.selected(args), args.n1, args.n2
    if n2 <= n1 or n1 < 1:
        raise BenchError("--n2 must exceed --n1, and both be positive")
    heading(
        f"stdio tools/call, instructions per call under cachegrind: (run of {n2} - run of {n1}) / {n2 - n1}"
    )
    progress("one untimed spawn of each server (writes .pyc caches)")
    for peer in chosen:
        with spawn(peer) as server:
            handshake(server)
            calls(server, 1, 5)
    per_call: dict[str, float] = {}
    spread: dict[str, list[int]] = {}
    for peer in chosen:
        for i in range(args.pairs):
            progress(f"{peer.key}: two cachegrind runs ({i + 1} of {args.pairs})")
            with ThreadPoolExecutor(2) as pool:
                short, long = pool.map(lambda n: instructions(peer, n), (n1, n2))
            spread.setdefault(peer.key, []).append(round((long - short) / (n2 - n1)))
        per_call[peer.key] = round(statistics.median(spread[peer.key]))
    rows = [
        [k, f"{v:,}", f"{min(spread[k]):,}", f"{max(spread[k]):,}"] for k, v in per_call.items()
    ]
    print(table(["server", "instructions per call", "min", "max"], rows))
    note("each pair of runs has its own hash seed (python -I): the median of --pairs pairs")
    ratios: dict[str, float] = {}
    for top, bottom in (("sdk", "ours"), ("ours", "bare"), ("ours-app", "ours")):
        if top in per_call and bottom in per_call:
            ratios[f"{top}_over_{bottom}"] = r = round(per_call[top] / per_call[bottom], 2)
            note(f"{top} / {bottom}: {r:.2f}× the instructions per call")
    payload = {"n1": n1, "n2": n2, "instructions_per_call": per_call, "pairs": spread}
    return emit(NAME, payload | {"ratios": ratios})


def measure(args: argparse.Namespace) -> dict[str, Any]:
    chosen, started_load = peers.selected(args), load()
    progress("one untimed spawn of each server (writes .pyc caches)")
    for peer in chosen:
        with spawn(peer) as server:
            handshake(server)
            calls(server, 1, 5)
    rounds: dict[str, list[dict[str, float]]] = defaultdict(list)
    for i in range(args.rounds):
        for peer in alternate(chosen, i):
            progress(f"round {i + 1}/{args.rounds}: {peer.key}, {args.calls} calls")
            rounds[peer.key].append(throughput_round(peer, args.calls, args.warmup))
    spawns: dict[str, list[dict[str, float]]] = defaultdict(list)
    for i in range(args.spawns):
        progress(f"cold start and idle memory {i + 1}/{args.spawns}")
        for peer in alternate(chosen, i):
            spawns[peer.key].append(cold_spawn(peer, args.idle_calls, args.settle))
        spawns[FLOOR].append(interpreter_floor())

    throughput = report_calls(chosen, rounds, args)
    start = report_start(chosen, spawns, args)
    result = throughput | start | {"goals": throughput["goals"] | start["goals"]}
    if peers.wanted(list(rounds)):
        cells = {"stdio": rounds}
        result["registry_acceptance"] = peers.acceptance("stdio", cells, "calls_per_s", "cpu")
    result["load_average"] = load_note(started_load)
    missed = any(goal["met"] is False for goal in result["goals"].values())
    if args.profile or (missed and not args.no_profile):
        note("profiling our server" + (" (a goal was missed; --no-profile skips)" * missed))
        result["profile"] = profile(args)
    return emit(NAME, result)


def report_calls(
    chosen: Sequence[Peer], rounds: dict[str, list[dict[str, float]]], args: argparse.Namespace
) -> dict[str, Any]:
    heading(
        f"tools/call over stdio: {args.calls} calls after {args.warmup} untimed, one in "
        f"flight, median of {args.rounds} interleaved rounds"
    )
    for peer in chosen:
        note(f"{peer.key}: `{peer.shown('stdio')}` ({peer.label})")
    fields = ("calls_per_s", "p50_us", "p99_us", "server_cpu_us")
    per = {p.key: medians(rounds[p.key], fields) for p in chosen}
    rows = [[k, *rate_row(m, fields)] for k, m in per.items()]
    columns = "calls/s|min|max|p50 µs|p99 µs|server CPU µs/call"
    print(table(["server", *columns.split("|")], rows))
    speedups: dict[str, float] = {}
    cpu_ratios: dict[str, float] = {}
    for peer in [k for k in ("sdk", "bare") if k in per and "ours" in per]:
        ours, theirs = per["ours"], per[peer]
        speedups[peer] = round(ours["calls_per_s"] / theirs["calls_per_s"], 3)
        cpu_ratios[peer] = round(theirs["server_cpu_us"] / ours["server_cpu_us"], 3)
        note(
            f"ours / {peer}: calls/s {speedups[peer]:.2f}×, p50 "
            f"{ratio(ours['p50_us'], theirs['p50_us'])}; server CPU per call {peer} / ours "
            f"{cpu_ratios[peer]:.2f}×"
        )
    met = speedups["sdk"] >= GOAL_SPEEDUP if "sdk" in speedups else None
    if met is not None:
        note(f"goal: ours ≥ {GOAL_SPEEDUP:.0f}× the SDK's calls/s → {verdict(met)}")
    return {
        "commands": {p.key: p.shown("stdio") for p in chosen},
        "calls": args.calls,
        "rounds": args.rounds,
        "throughput": per,
        "ratio_calls_per_s_ours_over": speedups,
        "ratio_server_cpu_per_call_over_ours": cpu_ratios,
        "goals": {"speedup": {"goal": GOAL_SPEEDUP, "met": met}},
    }


def report_start(
    chosen: Sequence[Peer], spawns: dict[str, list[dict[str, float]]], args: argparse.Namespace
) -> dict[str, Any]:
    keys, fields = [p.key for p in chosen], ("VmRSS", "VmHWM", "RssAnon", "RssFile")
    cold = {k: medians(spawns[k], ("ms", "cpu_ms")) for k in keys}
    cold[FLOOR] = medians(spawns[FLOOR], ("ms",))
    heading(f"cold start, spawn → initialize answer, median of {args.spawns} interleaved spawns")
    rows = [[k, c["ms"], c["min"], c["max"], c.get("cpu_ms", "")] for k, c in cold.items()]
    print(table(["server", "median ms", "min", "max", "server CPU ms"], rows))
    mem = {k: {f: v for f, v in medians(spawns[k], fields).items() if f in fields} for k in keys}
    heading(f"idle memory after initialize and {args.idle_calls} calls, MiB (/proc/<pid>/status)")
    print(table(["server", *fields], [[k, *mem[k].values()] for k in keys]))
    goals: dict[str, Any] = {}
    if "ours" in keys:
        for peer in (k for k in ("sdk", "bare") if k in keys):
            start = ratio(cold["ours"]["ms"], cold[peer]["ms"])
            rss = ratio(mem["ours"]["VmRSS"], mem[peer]["VmRSS"], "smaller", "larger")
            note(f"ours / {peer}: cold start {start}, VmRSS {rss}")
        ms, mib = cold["ours"]["ms"], mem["ours"]["VmRSS"]
        goals = {"cold_start": {"goal_ms": GOAL_COLD_MS, "met": ms <= GOAL_COLD_MS}}
        goals["idle_rss"] = {"goal_mib": GOAL_RSS_MIB, "met": mib <= GOAL_RSS_MIB}
        note(
            f"goals: ours' cold start ≤ {GOAL_COLD_MS:.0f} ms → {ms:.1f} ms, "
            f"{verdict(goals['cold_start']['met'])}; idle VmRSS ≤ {GOAL_RSS_MIB:.0f} MiB → "
            f"{mib:.1f} MiB, {verdict(goals['idle_rss']['met'])}"
        )
    return {"cold_start_ms": cold, "idle_memory_mib": mem, "goals": goals}


def profile(args: argparse.Namespace) -> dict[str, Any]:
    """Our runtime in process (Connection, then a loopback), then a cProfile over real pipes."""
    n = args.profile_calls
    progress("profile: our runtime in process")
    inside = {"connection": connection_us(n), "runtime": session_us(n)}
    heading(f"our server in process, no pipes: best of 5 × {n} calls, µs per call")
    note(f"Connection alone (frame → event; result → frame): {inside['connection']:.2f}")
    note(f"the whole runtime, Server.serve on an in-memory loopback: {inside['runtime']:.2f}")
    progress("profile: cProfile of our server under load")
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        out = Path(tmp) / "ours.prof"
        with spawn(peers.PEERS["ours"], "--profile", str(out)) as server:
            handshake(server)
            calls(server, 1, args.warmup)
            _, total = under_profile(server.pid, out, lambda: calls(server, 1 + args.warmup, n))
        rate = n / (total / 1e9)
        heading(f"our server under cProfile: {n} calls after {args.warmup} ({rate:.0f} calls/s)")
        figures = summary(out, n, "call")
    return {"in_process_us_per_call": {k: round(v, 2) for k, v in inside.items()}} | {
        "cprofile": figures | {"calls_per_s_profiled": round(rate, 1)}
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--calls", type=int, default=3000, help="measured calls per round (3000)")
    p.add_argument("--warmup", type=int, default=300, help="untimed calls first (300)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    p.add_argument("--spawns", type=int, default=10, help="cold-start spawns per server (10)")
    p.add_argument("--idle-calls", type=int, default=20, help="calls before reading memory (20)")
    p.add_argument("--settle", type=float, default=0.1, help="seconds before reading it (0.1)")
    peers.add_options(p)
    p.add_argument("--profile", action="store_true", help="profile ours even if goals are met")
    p.add_argument("--no-profile", action="store_true", help="never profile ours")
    p.add_argument("--profile-calls", type=int, default=3000, help="calls profiled (3000)")
    p.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per call under cachegrind instead of timing (see --n1, --n2)",
    )
    p.add_argument("--n1", type=int, default=100, help="calls in the shorter counted run (100)")
    p.add_argument("--n2", type=int, default=600, help="calls in the longer counted run (600)")
    p.add_argument("--pairs", type=int, default=3, help="pairs of counted runs per server (3)")
    args = p.parse_args(argv)
    return per_call_instructions(args) if args.instructions else measure(args)
