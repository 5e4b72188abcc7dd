"""What a gateway costs: ``tools/call`` over Streamable HTTP (uvicorn, wrk) to an echo server
directly, through ``mcpgen proxy`` and through FastMCP's proxy, each proxy in front of the
same stdio echo server, in one run (see docs/performance.md).

Per call it reports the proxy process's CPU, its upstream's (every process the proxy
started) and the sum, from ``/proc/<pid>/task/*/schedstat``; in both eras (2025-11-25
sessions, 2026-07-28 stateless requests: FastMCP speaks each to its upstream as its client
spoke it, ``mcpgen proxy`` speaks what the upstream speaks best). The goal: the whole
mcpgen path (proxy and upstream) costs less CPU per call than FastMCP's proxy alone.

FastMCP is installed from PyPI, pinned, into a venv of its own under ``.cache/peers`` (it
needs a release of the official SDK our tests do not pin); the first run makes it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import ROOT, SERVERS, BenchError, Cell, Process, alternate, cpu_seconds, emit
from .harness import heading, load, load_note, lua_script, medians, note, progress, python
from .harness import table, verdict, wrk
from .http_servers import free_port
from .peers import CALL, MODERN_HEADERS, PATH, TEXT, legacy_headers, modern_call, open_session
from .peers import post

NAME = "proxy_calls"
FASTMCP = "fastmcp==4.2.3"
FASTMCP_VENV = ROOT / ".cache" / "peers" / "fastmcp-4.2.3"
INSTALL_TIMEOUT = 900
#: The upstream both proxies start: mcpgen's echo server on the generated stubs, over stdio.
UPSTREAM = ("ours.py", "--transport", "stdio")
GOAL = 1.0
"""The whole mcpgen path (proxy + upstream) over FastMCP's proxy alone, in CPU per call: < 1."""


def fastmcp_python() -> Path:
    """The interpreter of a venv holding FastMCP (made on first use)."""
    python_path = FASTMCP_VENV / "bin" / "python"
    stamp = FASTMCP_VENV / ".installed"
    FASTMCP_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(FASTMCP_VENV.parent / "fastmcp.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            progress(f"installing {FASTMCP} into {FASTMCP_VENV} (once)")
            subprocess.run([sys.executable, "-m", "venv", str(FASTMCP_VENV)], check=True)
            subprocess.run(
                [str(python_path), "-m", "pip", "install", "--quiet", FASTMCP],
                check=True,
                timeout=INSTALL_TIMEOUT,
            )
            stamp.write_text(FASTMCP)
    return python_path


@dataclass(frozen=True)
class Setup:
    """One way of serving the echo tool on HTTP."""

    key: str
    label: str
    words: tuple[str, ...]  # the command, ``{port}`` for the port

    def command(self, port: int) -> list[str]:
        return [w.replace("{port}", str(port)) for w in self.words]

    def shown(self) -> str:
        return " ".join(self.words).replace(sys.executable, "python").replace(str(ROOT) + "/", "")


def setups() -> list[Setup]:
    upstream = python(str(SERVERS / UPSTREAM[0]), *UPSTREAM[1:])
    direct = python(str(SERVERS / "ours.py"), "--transport", "http", "--port", "{port}")
    ours = python("-m", "mcpgen", "proxy", "--transport", "http", "--port", "{port}")
    ours += ["--client-rate", "1000000", "--client-in-flight", "100000", "--", *upstream]
    fast = [str(fastmcp_python()), str(SERVERS / "fastmcp_proxy.py"), "--port", "{port}"]
    return [
        Setup("direct", "the echo server itself (HTTP), no proxy", tuple(direct)),
        Setup("mcpgen-proxy", "mcpgen proxy → the echo server (stdio)", tuple(ours)),
        Setup("fastmcp-proxy", f"FastMCP {FASTMCP.split('==')[1]} create_proxy → the echo"
              " server (stdio)", (*fast, "--", *upstream)),
    ]  # fmt: skip


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from ``/proc/<pid>/task/*/children``)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{parent}/task").iterdir():
                with contextlib.suppress(OSError):
                    kids = [int(k) for k in (task / "children").read_text().split()]
                    found += kids
                    todo += kids
    return found


def cpu_of(pids: Sequence[int]) -> dict[int, float]:
    out: dict[int, float] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            out[pid] = cpu_seconds(pid)
    return out


@dataclass(frozen=True)
class Sample:
    """One timed wrk run: the rate and latency, and CPU per call of the proxy (or the
    server, direct), of its upstream processes, and of both."""

    requests_per_s: float
    p50_us: float
    proxy_cpu_us: float
    upstream_cpu_us: float
    whole_cpu_us: float


def timed(script: Path, server: Process, connections: int, seconds: int) -> Sample:
    before = cpu_of(descendants(server.pid))
    cell: Cell = wrk(script, server, PATH, connections, seconds)
    after = cpu_of(descendants(server.pid))
    upstream = sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
    upstream_us = upstream / cell.requests * 1e6
    whole = cell.server_cpu_us + upstream_us
    return Sample(cell.requests_per_s, cell.p50_us, cell.server_cpu_us, upstream_us, whole)


@contextlib.contextmanager
def serving(chosen: Sequence[Setup]) -> Iterator[dict[str, Process]]:
    servers: dict[str, Process] = {}
    try:
        for setup in chosen:
            port = free_port()
            servers[setup.key] = Process(setup.command(port), setup.key).listen(port)
        yield servers
    finally:
        for key, server in servers.items():
            if said := server.stop().strip():
                progress(f"{key} said on exit:\n{said[-1500:]}")


def prepare(legacy: bool, key: str, server: Process, check: int, tmp: Path) -> Path:
    """Check a server's answers in the era (``check`` calls); write its wrk script."""
    if legacy:
        headers, body, template = legacy_headers(open_session(server)), b"", CALL
        for i in range(1, check + 1):
            post(server, CALL % (i, i), headers, f"echo {i}")
    else:
        headers, body, template = MODERN_HEADERS, modern_call(1), b""
        for i in range(1, check + 1):
            post(server, modern_call(i, f"check {i} ✓"), headers, f"check {i} ✓")
        post(server, body, headers, TEXT)
    note(f"{key}: {check} answers OK")
    script = tmp / f"{key}-{'legacy' if legacy else 'modern'}.lua"
    script.write_text(lua_script(headers, body, template, check))
    return script


FIELDS = ("requests_per_s", "p50_us", "proxy_cpu_us", "upstream_cpu_us", "whole_cpu_us")


def run_era(legacy: bool, chosen: Sequence[Setup], args: argparse.Namespace) -> dict[str, Any]:
    era = "legacy (2025-11-25 session)" if legacy else "modern (stateless 2026-07-28)"
    keys = [s.key for s in chosen]
    samples: dict[tuple[str, int], list[Sample]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp, serving(chosen) as servers:
        heading(f"{era}: every server's answers checked before timing")
        scripts = {k: prepare(legacy, k, servers[k], args.check, Path(tmp)) for k in keys}
        for i in range(args.rounds):
            for j, c in enumerate(args.concurrency):
                for key in alternate(keys, i + j):
                    progress(f"{era} round {i + 1}/{args.rounds}: {key}, c={c}")
                    if args.warmup > 0:
                        wrk(scripts[key], servers[key], PATH, c, args.warmup)
                    samples[(key, c)].append(timed(scripts[key], servers[key], c, args.duration))
    heading(
        f"{era}: tools/call over Streamable HTTP (uvicorn), wrk -t1; {args.duration} s per cell"
        f" after {args.warmup} s, median of {args.rounds} interleaved rounds"
    )
    for setup in chosen:
        note(f"{setup.key}: {setup.label}: `{setup.shown()}`")
    note("CPU µs per call: the process serving HTTP (proxy), what it started (upstream), both")
    per = {f"{k}@c{c}": medians(samples[(k, c)], FIELDS) for c in args.concurrency for k in keys}
    rows = [
        [c, k, round(m["requests_per_s"]), m["p50_us"], m["proxy_cpu_us"],
         m["upstream_cpu_us"], m["whole_cpu_us"]]
        for c in args.concurrency for k in keys
        for m in [per[f"{k}@c{c}"]]
    ]  # fmt: skip
    columns = ["conc", "server", "req/s", "p50 µs", "proxy CPU", "upstream CPU", "whole CPU"]
    print(table(columns, rows))
    ratios: dict[str, dict[str, float]] = {}
    for c in args.concurrency:
        direct, ours, fast = (per[f"{k}@c{c}"] for k in ("direct", "mcpgen-proxy", "fastmcp-proxy"))
        rounds = [
            o.whole_cpu_us / f.proxy_cpu_us
            for o, f in zip(samples[("mcpgen-proxy", c)], samples[("fastmcp-proxy", c)])
        ]
        r = ratios[f"c{c}"] = {
            "mcpgen_whole_over_fastmcp_proxy": round(ours["whole_cpu_us"] / fast["proxy_cpu_us"], 3),
            "per_round_median": round(statistics.median(rounds), 3),
            "mcpgen_proxy_over_fastmcp_proxy": round(ours["proxy_cpu_us"] / fast["proxy_cpu_us"], 3),
            "mcpgen_added_cpu_us": round(ours["whole_cpu_us"] - direct["whole_cpu_us"], 1),
            "direct_server_cpu_us": round(direct["whole_cpu_us"], 1),
        }  # fmt: skip
        note(
            f"c={c}: mcpgen proxy + upstream / FastMCP's proxy alone, CPU per call:"
            f" {r['mcpgen_whole_over_fastmcp_proxy']:.2f}× (per round: {r['per_round_median']:.2f}×);"
            f" the mcpgen proxy alone {r['mcpgen_proxy_over_fastmcp_proxy']:.2f}× FastMCP's;"
            f" with its upstream it costs {r['mcpgen_added_cpu_us']:.0f} µs per call more than the"
            f" {r['direct_server_cpu_us']:.0f} µs of the server served directly"
        )  # fmt: skip
    met = all(r["mcpgen_whole_over_fastmcp_proxy"] < GOAL for r in ratios.values())
    note(f"goal: the whole mcpgen path < FastMCP's proxy alone in CPU per call → {verdict(met)}")
    return {"results": per, "ratios": ratios, "goal": {"below": GOAL, "met": met}}


def main(argv: Sequence[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench proxy_calls", description=__doc__)
    p.add_argument("--duration", type=int, default=5, help="seconds per timed cell (5)")
    p.add_argument("--warmup", type=int, default=1, help="seconds of load before each cell (1)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    p.add_argument("--check", type=int, default=3, help="answers checked per server first (3)")
    p.add_argument(
        "--concurrency",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 8],
        help="wrk connections per cell, comma-separated (1,8)",
    )
    p.add_argument("--era", choices=["both", "legacy", "modern"], default="both")
    args = p.parse_args(list(argv))
    if args.duration < 1 or args.rounds < 1 or min(args.concurrency) < 1:
        raise BenchError("--duration, --rounds and --concurrency must be positive")
    chosen = setups()
    started = load()
    result: dict[str, Any] = {"duration_s": args.duration, "rounds": args.rounds}
    result |= {"concurrency": args.concurrency, "fastmcp": FASTMCP}
    result["servers"] = {s.key: s.shown() for s in chosen}
    for era in ("legacy", "modern"):
        if args.era in ("both", era):
            result[era] = run_era(era == "legacy", chosen, args)
    result["load_average"] = load_note(started)
    return emit(NAME, result)
