"""``tools/call`` over Streamable HTTP under uvicorn, loaded by wrk (see docs/performance.md)."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import BENCHMARKS, peers
from .harness import alternate, emit, heading, load, load_note, lua_script, medians, memory
from .harness import Process, note, progress, table, verdict, wrk
from .http_counts import count
from .http_servers import Variant, pinned, prepare, running, uvicorn_args
from .http_servers import uvicorn_stack
from .peers import MODERN_HEADERS, PATH, modern_call, rate_row
from .profiles import asgi_app, drive, summary, under_profile

NAME = "http_calls"
GOAL_SPEEDUP = 3.0
"""Ours ≥ 3× the SDK's requests/s at every concurrency."""


def measure_variant(
    variant: Variant, servers: dict[str, Process], args: argparse.Namespace
) -> None:
    keys, top, pin = [p.key for p in variant.chosen], max(args.concurrency), pinned(args)
    for key in keys:
        variant.rss[key] = {"before": memory(servers[key].pid)["VmRSS"]}
        if args.warmup_first > 0:
            progress(f"{variant.name}: warm-up of {key}, {args.warmup_first} s at c={top}")
            wrk(variant.scripts[key], servers[key], PATH, top, args.warmup_first, under=pin)
    for i in range(args.rounds):
        for j, c in enumerate(args.concurrency):
            for key in alternate(keys, i + j):
                progress(f"{variant.name} round {i + 1}/{args.rounds}: {key}, c={c}")
                if args.warmup > 0:
                    wrk(variant.scripts[key], servers[key], PATH, c, args.warmup, under=pin)
                cell = wrk(variant.scripts[key], servers[key], PATH, c, args.duration, under=pin)
                variant.cells[(key, c)].append(cell)
    for key in keys:
        after = memory(servers[key].pid)
        variant.rss[key] |= {"after": after["VmRSS"], "VmHWM": after["VmHWM"]}


def report_variant(variant: Variant, args: argparse.Namespace) -> dict[str, Any]:
    keys = [p.key for p in variant.chosen]
    heading(
        f"{variant.name}: tools/call over Streamable HTTP, uvicorn (1 worker), wrk -t1; "
        f"{args.duration} s per cell after {args.warmup} s, median of {args.rounds} "
        "interleaved rounds"
    )
    for peer in variant.chosen:
        note(f"{peer.key}: `{peer.shown('http', *uvicorn_args(args))}`")
    note("server CPU per request; busy = CPU / wall (1.0 = one core)")
    if args.one_core:
        note("--one-core: every server and wrk on the first core")
    fields = ("requests_per_s", "p50_us", "p99_us", "server_cpu_us", "server_busy", "wrk_busy")
    cells = [(c, k) for c in args.concurrency for k in keys]
    per = {f"{k}@c{c}": medians(variant.cells[(k, c)], fields) for c, k in cells}
    rows = [[c, k, *rate_row(per[f"{k}@c{c}"], fields)] for c, k in cells]
    columns = "req/s|min|max|p50 µs|p99 µs|server CPU µs/req|busy|wrk busy"
    print(table(["conc", "server", *columns.split("|")], rows))
    ratios: dict[str, dict[str, float]] = {}
    compared = args.concurrency if {"ours", "sdk"} <= set(keys) else []
    for c in compared:
        o, s, b = per[f"ours@c{c}"], per[f"sdk@c{c}"], per.get(f"bare@c{c}")
        r = ratios[f"c{c}"] = {
            "requests_per_s": round(o["requests_per_s"] / s["requests_per_s"], 3),
            "p50": round(o["p50_us"] / s["p50_us"], 3),
            "server_cpu_per_request": round(o["server_cpu_us"] / s["server_cpu_us"], 3),
        }
        text = f"c={c}: ours/SDK req/s {r['requests_per_s']:.2f}×, p50 {r['p50']:.2f}×, "
        text += f"server CPU per request {r['server_cpu_per_request']:.2f}×"
        if b:
            r["ours_over_bare"] = round(o["requests_per_s"] / b["requests_per_s"], 3)
            r["bare_over_sdk"] = round(b["requests_per_s"] / s["requests_per_s"], 3)
            text += f"; ours/bare req/s {r['ours_over_bare']:.2f}×, "
            text += f"bare/SDK {r['bare_over_sdk']:.2f}×"
        note(text)
    goal: dict[str, Any] = {}
    if ratios:
        met = all(r["requests_per_s"] >= GOAL_SPEEDUP for r in ratios.values())
        goal = {"goal": GOAL_SPEEDUP, "met": met}
        note(f"goal: ours ≥ {GOAL_SPEEDUP:g}× the SDK's req/s at each concurrency → {verdict(met)}")
    busiest = max(s["wrk_busy"] for s in per.values())
    note(f"wrk used at most {busiest:.0%} of a core" + (": it may be the limit" * (busiest > 0.5)))
    rss = [[k, *(round(x, 1) for x in v.values())] for k, v in variant.rss.items()]
    print(table(["server", "VmRSS MiB before load", "after", "VmHWM"], rss))
    out = {"servers": {p.key: p.shown("http") for p in variant.chosen}, "results": per}
    return out | {"ratio_ours_over_sdk": ratios, "goal": goal, "memory_mib": variant.rss}


def run_variant(variant: Variant, args: argparse.Namespace) -> dict[str, Any]:
    progress(f"{variant.name}: starting {', '.join(p.key for p in variant.chosen)}")
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        with running(variant.chosen, args, under=pinned(args)) as servers:
            heading(f"{variant.name}: every server's answers checked before timing")
            for key, server in servers.items():
                prepare(variant, key, server, args.check, Path(tmp))
            measure_variant(variant, servers, args)
    return report_variant(variant, args)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    started_load = load()
    result: dict[str, Any] = {"duration_s": args.duration, "rounds": args.rounds}
    result |= {"concurrency": args.concurrency, "uvicorn": uvicorn_stack(args)}
    modern = Variant("modern (stateless 2026-07-28)", peers.selected(args))
    result["modern"] = run_variant(modern, args)
    keys = [p.key for p in modern.chosen]
    if peers.wanted(keys):
        cells = {f"c{c}": {k: modern.cells[(k, c)] for k in keys} for c in args.concurrency}
        result["registry_acceptance"] = peers.acceptance("HTTP", cells, "requests_per_s", "rate")
    if args.legacy:
        stateful = replace(peers.PEERS["sdk"], args=("--stateful",))  # stateless has no sessions
        chosen = [peers.PEERS["ours"], stateful]
        legacy = Variant("legacy (2025-11-25 session)", chosen, legacy=True)
        result["legacy"] = run_variant(legacy, args)
    result["load_average"] = load_note(started_load)
    missed = result["modern"]["goal"].get("met") is False
    if args.profile or (missed and not args.no_profile):
        note("profiling our server" + (" (the goal was missed; --no-profile skips)" * missed))
        result["profile"] = profile(args, result["modern"]["results"])
    return emit(NAME, result)


def profile(args: argparse.Namespace, results: dict[str, Any]) -> dict[str, Any]:
    """Each app alone in process (uvicorn costs the rest), then a cProfile of ours under wrk."""
    keys, n = [p.key for p in peers.selected(args)], 2000
    progress("profile: the ASGI apps in process, without uvicorn")
    alone: dict[str, float] = {}
    rows: list[list[object]] = []
    for c in args.concurrency:
        for k in keys:
            us = alone[f"{k}@c{c}"] = min(asyncio.run(drive(asgi_app(k), n, c)) for _ in range(3))
            whole = results[f"{k}@c{c}"]["server_cpu_us"]
            rows.append([c, k, whole, round(us, 1), round(whole - us, 1)])
    heading(f"each app alone in process (fake ASGI receive/send), best of 3 × {n} calls")
    columns = "server CPU µs/req under wrk|app alone µs|the rest: uvicorn, loop, sockets"
    print(table(["conc", "app", *columns.split("|")], rows))
    progress("profile: cProfile of ours under wrk load")
    c, seconds = max(args.concurrency), args.profile_seconds
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        out, script = Path(tmp) / "ours.prof", Path(tmp) / "modern.lua"
        script.write_text(lua_script(MODERN_HEADERS, modern_call(1)))
        pin = pinned(args)
        with running([peers.PEERS["ours"]], args, "--profile", str(out), under=pin) as servers:
            server = servers["ours"]
            wrk(script, server, PATH, c, 2, under=pin)
            cell = under_profile(
                server.pid, out, lambda: wrk(script, server, PATH, c, seconds, under=pin)
            )
        rate = f"{cell.requests_per_s:.0f} req/s with the profiler on"
        heading(f"ours under cProfile: wrk -c{c} for {seconds} s ({rate})")
        figures = summary(out, cell.requests, "request")
    return {"app_alone_us": {k: round(v, 1) for k, v in alone.items()}, "cprofile": figures}


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--duration", type=int, default=10, help="whole seconds per timed cell (10)")
    p.add_argument("--warmup", type=int, default=2, help="untimed seconds before each cell (2)")
    p.add_argument(
        "--warmup-first", type=int, default=3, help="untimed seconds per server first (3)"
    )
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    p.add_argument("--concurrency", type=int_list, default=[1, 32], help="wrk connections (1,32)")
    p.add_argument("--check", type=int, default=20, help="answers checked per server (20)")
    p.add_argument("--legacy", action="store_true", help="also a 2025-11-25 session (ours, SDK)")
    peers.add_options(p)
    p.add_argument("--loop", default="auto", help="uvicorn --loop for every server (auto)")
    p.add_argument("--http", default="auto", help="uvicorn --http for every server (auto)")
    p.add_argument("--profile", action="store_true", help="profile ours even if the goal is met")
    p.add_argument("--no-profile", action="store_true", help="never profile ours")
    p.add_argument("--profile-seconds", type=int, default=10, help="seconds under cProfile (10)")
    p.add_argument(
        "--one-core",
        action="store_true",
        help="run every server and wrk on the first core (taskset): no waking of wrk on the"
        " other core is paid in the server's kernel time",
    )
    p.add_argument(
        "--instructions",
        action="store_true",
        help="count each server's instructions per request under callgrind instead of timing"
        " (one --duration cell per concurrency; needs valgrind)",
    )
    args = p.parse_args(argv)
    if args.instructions and args.one_core:
        p.error("--instructions counts what no core placement changes: drop --one-core")
    return emit(NAME, count(args)) if args.instructions else measure(args)
