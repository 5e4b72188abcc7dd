"""``tools/call`` over Streamable HTTP under uvicorn, loaded by wrk (see docs/performance.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import re
import socket
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import BENCHMARKS, peers
from .harness import BenchError, Cell, Process, alternate, clean_env, cpu_seconds, emit
from .harness import heading, load, load_note
from .harness import lua_script, medians, memory, note, progress, table, tool, verdict, wrk
from .peers import CALL, MODERN_HEADERS, PATH, TEXT, Peer, legacy_headers, modern_call
from .peers import open_session, post, rate_row
from .profiles import asgi_app, drive, summary, under_profile

NAME = "http_calls"
GOAL_SPEEDUP = 3.0
"""Ours ≥ 3× the SDK's requests/s at every concurrency."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running(
    chosen: Sequence[Peer],
    args: argparse.Namespace,
    *extra: str,
    under: Sequence[str] = (),
    wait: float = 60.0,
) -> Iterator[dict[str, Process]]:
    """Every server up on its own port within ``wait`` seconds (its command prefixed by
    ``under``, what it runs under); all stopped on the way out."""
    servers: dict[str, Process] = {}
    try:
        for peer in chosen:
            port = free_port()
            command = peer.command("http", "--port", str(port), *uvicorn_args(args), *extra)
            servers[peer.key] = Process([*under, *command], peer.key).listen(port, wait)
        yield servers
    finally:
        for key, server in servers.items():
            if said := server.stop().strip():
                progress(f"{key} said on exit:\n{said}")


@dataclass
class Variant:
    """One era's comparison: servers, a wrk script per server, the cells and memory."""

    name: str
    chosen: Sequence[Peer]
    scripts: dict[str, Path] = field(default_factory=dict)
    cells: dict[tuple[str, int], list[Cell]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, dict[str, float]] = field(default_factory=dict)
    legacy: bool = False


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


def pinned(args: argparse.Namespace) -> list[str]:
    """``--one-core``: the command that runs a server or wrk on one core only (the first
    this process may use)."""
    if not args.one_core:
        return []
    return [tool("taskset"), "--cpu-list", str(min(os.sched_getaffinity(0)))]


def uvicorn_args(args: argparse.Namespace) -> list[str]:
    return [f"--{k}={getattr(args, k)}" for k in ("loop", "http") if getattr(args, k) != "auto"]


def uvicorn_stack(args: argparse.Namespace) -> dict[str, str]:
    """The event loop and HTTP parser uvicorn's ``auto`` picks here."""
    has = {name: importlib.util.find_spec(name) is not None for name in ("uvloop", "httptools")}
    loop = args.loop if args.loop != "auto" else ("uvloop" if has["uvloop"] else "asyncio")
    http = args.http if args.http != "auto" else ("httptools" if has["httptools"] else "h11")
    return {"loop": loop, "http": http}


def prepare(variant: Variant, key: str, server: Process, check: int, tmp: Path) -> None:
    """Check a server's answers (``check`` calls, then wrk's request); write its wrk script."""
    if variant.legacy:
        headers, body, template = legacy_headers(open_session(server)), b"", CALL
        for i in range(1, check + 1):
            post(server, CALL % (i, i), headers, f"echo {i}")
        note(f"{key}: a session ({headers['Mcp-Session-Id']}), then {check} answers OK")
    else:
        headers, body, template = MODERN_HEADERS, modern_call(1), b""
        for i in range(1, check + 1):
            post(server, modern_call(i, f"check {i} ✓"), headers, f"check {i} ✓")
        data, answer = post(server, body, headers, TEXT)
        framing = "content-length" if "content-length" in answer else "chunked"
        note(f"{key}: {check + 1} answers OK ({framing}); to wrk's request: {data.decode()}")
    variant.scripts[key] = tmp / f"{key}-{'legacy' if variant.legacy else 'modern'}.lua"
    variant.scripts[key].write_text(lua_script(headers, body, template, check))


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


#: Seconds wrk waits for an answer from a server under callgrind (the SDK's, at 32
#: connections, takes up to seconds).
SLOW = 120
SUMMARY = re.compile(rb"^summary: (\d+)$", re.MULTILINE)


class Grind:
    """One server under callgrind, and the dumps ``callgrind_control -d`` asks of it: each
    counts what the process did since the one before (``cg.PID.N``, N from 1)."""

    def __init__(self, folder: Path, server: Process) -> None:
        self.folder, self.server, self.dumps = folder, server, 0

    def dump(self) -> int:
        """Instructions since the last dump, once the server has finished what it was
        doing (its CPU time stops growing); a missing dump is an error, not a zero."""
        settle(self.server.pid)
        self.dumps += 1
        command = [tool("callgrind_control"), "-d", str(self.server.pid)]
        # (the servers' environment, so that vgdb looks where valgrind put its pipes)
        said = subprocess.run(command, capture_output=True, text=True, env=clean_env(), timeout=60)
        path = self.folder / f"cg.{self.server.pid}.{self.dumps}"
        found = SUMMARY.search(path.read_bytes()) if path.exists() else None
        if found is None:
            raise BenchError(f"{self.server.label}: no callgrind dump {path.name}\n{said.stdout}")
        return int(found[1])


def settle(pid: int, step: float = 0.2) -> None:
    """Wait until process ``pid`` uses no more CPU (at most a minute)."""
    before, deadline = cpu_seconds(pid), time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(step)
        now = cpu_seconds(pid)
        if now - before < step / 20:
            return
        before = now


def counted(variant: Variant, args: argparse.Namespace) -> dict[str, int]:
    """Instructions per request of each whole server process (uvicorn, the event loop and
    the app; not the kernel) under callgrind, loaded by wrk: after a warm-up, a run of
    ``--duration`` seconds and one of twice that, each between two dumps; the difference
    of the two runs' counts over the difference of their answered requests cancels what
    the requests still in flight when a run ends cost. One server at a time."""
    per: dict[str, int] = {}
    for peer in variant.chosen:
        with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
            folder = Path(tmp)
            grind = [
                tool("valgrind"),
                "-q",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg.%p",
            ]
            progress(f"{variant.name}: starting {peer.key} under callgrind")
            with running([peer], args, under=grind, wait=600.0) as servers:
                server = servers[peer.key]
                prepare(variant, peer.key, server, args.check, folder)
                script, counts = variant.scripts[peer.key], Grind(folder, server)
                for c in args.concurrency:
                    progress(f"{variant.name}: {peer.key}, c={c}, under callgrind")
                    wrk(script, server, PATH, c, max(args.warmup, 1), SLOW)
                    counts.dump()  # (the warm-up, and what came before it)
                    short = wrk(script, server, PATH, c, args.duration, SLOW)
                    i_short = counts.dump()
                    long = wrk(script, server, PATH, c, 2 * args.duration, SLOW)
                    i_long = counts.dump()
                    requests = long.requests - short.requests
                    if requests <= 0:
                        raise BenchError(f"{peer.key}, c={c}: the longer run answered no more")
                    per[f"{peer.key}@c{c}"] = round((i_long - i_short) / requests)
    return per


def count(args: argparse.Namespace) -> dict[str, Any]:
    """``--instructions``: each server's instructions per request at each concurrency, and
    their ratios (counts do not move with the machine's load, nor with what waking the
    client on another core costs the server's kernel time)."""
    variants = [Variant("modern (stateless 2026-07-28)", peers.selected(args))]
    if args.legacy:
        stateful = replace(peers.PEERS["sdk"], args=("--stateful",))
        variants.append(
            Variant("legacy (2025-11-25 session)", [peers.PEERS["ours"], stateful], legacy=True)
        )
    result: dict[str, Any] = {"duration_s": args.duration, "uvicorn": uvicorn_stack(args)}
    for variant in variants:
        per = counted(variant, args)
        heading(f"{variant.name}: instructions per request under callgrind (whole server process)")
        keys = [p.key for p in variant.chosen]
        rows = [[c, k, f"{per[f'{k}@c{c}']:,}"] for c in args.concurrency for k in keys]
        print(table(["conc", "server", "instructions per request"], rows))
        ratios: dict[str, float] = {}
        for c in args.concurrency:
            for top, bottom in (
                ("ours", "bare"),
                ("ours", "checked"),
                ("checked", "bare"),
                ("sdk", "ours"),
            ):
                a, b = per.get(f"{top}@c{c}"), per.get(f"{bottom}@c{c}")
                if a and b:
                    ratios[f"{top}_over_{bottom}@c{c}"] = r = round(a / b, 3)
                    note(f"c={c}: {top} / {bottom}: {r:.2f}× the instructions per request")
        result["legacy" if variant.legacy else "modern"] = {"per_request": per, "ratios": ratios}
    if args.legacy:
        for c in args.concurrency:
            stateless, session = result["modern"]["per_request"], result["legacy"]["per_request"]
            if f"ours@c{c}" in stateless:
                r = round(session[f"ours@c{c}"] / stateless[f"ours@c{c}"], 3)
                result["legacy"]["ratios"][f"session_over_stateless@c{c}"] = r
                note(f"c={c}: ours, a legacy session's request / a stateless one: {r:.2f}×")
    return emit(NAME, result | {"instructions": True})


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
    return count(args) if args.instructions else measure(args)
