"""``tools/call`` over stdio: mcpgen's runtime vs the official SDK's low-level server, plus a
bare asyncio + msgspec line loop as the ceiling; then cold start and idle memory.

The servers are the scripts in ``bench/servers/`` (one ``echo`` tool each), spawned as
``python -I bench/servers/NAME.py`` with a minimal environment. The load generator is this
process: a tight synchronous loop over pre-encoded request lines with incrementing ids,
blocking ``os.write``/``os.read`` on the child's pipes, one request in flight, each round trip
timed with ``perf_counter_ns``. Every server gets the ``initialize`` / ``initialized``
handshake at 2025-11-25 first, then a warm-up, then the measured calls; every reply is
checked afterwards (id and echoed text). Servers alternate round by round and the report
gives medians, since the machine is noisy.

Cold start is spawn → ``initialize`` reply, after one untimed spawn of each server (``.pyc``
caches warm). Idle memory is ``VmRSS``/``VmHWM`` from ``/proc/<pid>/status`` after the
handshake and a few calls. ``--profile`` (automatic when a goal is missed) then breaks
mcpgen's server down: ``-X importtime`` (and what it imports beyond the bare loop), RSS and
time step by step, what narrowing ``versions`` buys, what the same-version fast path would
save (in process, per runtime layer, and end to end), and a steady-state cProfile under load.

``--app`` (or ``--peers``) adds the registry peers ``ours-app`` and ``sdk-mcpserver`` to the
same interleaved rounds and prints issue 12's acceptance ratios (``bench/_registry.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import math
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec

from . import BENCHMARKS
from . import _registry as registry
from ._cprofile import IDLE
from ._cprofile import report as profile_report
from ._util import (
    ROOT,
    BenchError,
    Stats,
    clean_env,
    emit,
    heading,
    load,
    load_note,
    note,
    progress,
    python,
    ratio,
    table,
    verdict,
)
from .import_time import IMPORTTIME_LINE

NAME = "stdio_calls"
DESCRIPTION = BENCHMARKS[NAME]
SERVERS_DIR = Path(__file__).resolve().parent / "servers"
PROTOCOL_VERSION = "2025-11-25"
GOAL_SPEEDUP = 5.0
"""ours ≥ this × the SDK's calls/s."""
GOAL_COLD_MS = 150.0
GOAL_RSS_MIB = 30.0
DEADLINE_S = 600.0
"""A child still running after this long is killed (the driver's reads then fail)."""

INITIALIZE = (
    msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpgen-bench", "version": "0"},
            },
        }
    )
    + b"\n"
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"echo %d"}}}\n'
"""``CALL % (id, id)``: the server must answer with the text ``echo <id>``."""


@dataclass(frozen=True)
class ServerSpec:
    key: str
    label: str
    script: str
    args: tuple[str, ...] = ()

    def command(self, *python_flags: str) -> list[str]:
        return python(*python_flags, str(SERVERS_DIR / self.script), *self.args)

    def shown(self) -> str:
        return " ".join(["python -I", f"bench/servers/{self.script}", *self.args])


OURS = ServerSpec("ours", "mcpgen runtime (2025-11-25 stubs)", "ours.py")
SDK = ServerSpec("sdk", "SDK 2.3 low-level Server", "sdk.py")
BARE = ServerSpec("bare", "bare asyncio + msgspec", "bare.py")
SERVERS = (OURS, SDK, BARE)
OURS_APP = ServerSpec("ours-app", "mcpgen App + @app.tool (2025-11-25 stubs)", "ours_app.py")
SDK_MCPSERVER = ServerSpec(
    "sdk-mcpserver", "SDK 2.3 MCPServer + @server.tool()", "sdk_mcpserver.py"
)
PEERS = {s.key: s for s in (OURS, OURS_APP, SDK, SDK_MCPSERVER, BARE)}
"""Every server ``--peers`` can name (``SERVERS`` by default)."""
OURS_ONE_VERSION = ServerSpec(
    "ours-1v", "mcpgen, versions=[2025-11-25]", "ours.py", ("--versions", PROTOCOL_VERSION)
)
"""Diagnostic (profile section): the same server accepting only the version it is typed in."""
OURS_SAME_LOCAL = ServerSpec(
    "ours-same-local", "mcpgen, Server.local shared with Versions", "ours_same_local.py"
)
"""Diagnostic (profile section): ours with the ``version is self.local`` fast path working."""


# -- talking to a child ----------------------------------------------------------------------


class Child:
    """A spawned server; ``started_ns`` is taken just before the spawn."""

    def __init__(self, command: Sequence[str], label: str, deadline: float = DEADLINE_S) -> None:
        self.label = label
        self.errors: IO[bytes] = tempfile.TemporaryFile()
        self.expired = False
        self.stderr_text = ""
        self.started_ns = time.perf_counter_ns()
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            env=clean_env(),
            cwd=ROOT,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.fd_in = self.proc.stdin.fileno()
        self.fd_out = self.proc.stdout.fileno()
        self.buffer = b""
        self.watchdog = threading.Timer(deadline, self._expire)
        self.watchdog.daemon = True
        self.watchdog.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _expire(self) -> None:
        self.expired = True
        with contextlib.suppress(OSError):
            self.proc.kill()

    def send(self, data: bytes) -> None:
        os.write(self.fd_in, data)

    def read_line(self) -> bytes:
        buffer = self.buffer
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                self.buffer = buffer[end + 1 :]
                return buffer[:end]
            chunk = os.read(self.fd_out, 65536)
            if not chunk:
                why = "killed by the watchdog" if self.expired else "closed its stdout"
                raise BenchError(f"{self.label}: server {why}\n{self.stderr_tail()}")
            buffer += chunk

    def stderr_tail(self, lines: int = 15) -> str:
        self.errors.seek(0)
        text = self.errors.read().decode(errors="replace").strip()
        return "\n".join(text.splitlines()[-lines:])

    def stderr(self) -> str:
        """Everything the child wrote to stderr (also after ``close``)."""
        if self.errors.closed:
            return self.stderr_text
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")

    def handshake(self) -> int:
        """``initialize`` (checked) then ``initialized``; returns spawn → reply in ns."""
        self.send(INITIALIZE)
        reply = self.read_line()
        elapsed = time.perf_counter_ns() - self.started_ns
        result = msgspec.json.decode(reply).get("result") or {}
        if result.get("protocolVersion") != PROTOCOL_VERSION:
            raise BenchError(f"{self.label}: bad initialize reply {reply[:300]!r}")
        self.send(INITIALIZED)
        return elapsed

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait; then SIGTERM; then SIGKILL. Returns the exit status."""
        self.watchdog.cancel()
        proc = self.proc
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if not self.errors.closed:
            self.stderr_text = self.stderr()
            self.errors.close()
        return proc.returncode

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def spawned(spec: ServerSpec, *python_flags: str) -> Iterator[Child]:
    child = Child(spec.command(*python_flags), spec.label)
    try:
        yield child
    finally:
        child.close()


class _Content(msgspec.Struct):
    text: str = ""


class _Result(msgspec.Struct):
    content: list[_Content] = []


class _Reply(msgspec.Struct):
    id: int
    result: _Result | None = None
    error: Any = None


_reply = msgspec.json.Decoder(_Reply)


def check_replies(label: str, first_id: int, replies: Sequence[bytes]) -> None:
    for offset, line in enumerate(replies):
        rid = first_id + offset
        reply = _reply.decode(line)
        ok = (
            reply.id == rid
            and reply.result is not None
            and len(reply.result.content) == 1
            and reply.result.content[0].text == f"echo {rid}"
        )
        if not ok:
            raise BenchError(f"{label}: wrong reply to call {rid}: {line[:300]!r}")


def calls(child: Child, first_id: int, n: int) -> tuple[list[int], int]:
    """``n`` sequential ``tools/call`` round trips: per-call ns and the total ns."""
    lines = [CALL % (i, i) for i in range(first_id, first_id + n)]
    latencies = [0] * n
    replies = [b""] * n
    write, fd, read_line, clock = os.write, child.fd_in, child.read_line, time.perf_counter_ns
    started = clock()
    for k in range(n):
        t = clock()
        write(fd, lines[k])
        replies[k] = read_line()
        latencies[k] = clock() - t
    total = clock() - started
    check_replies(child.label, first_id, replies)
    return latencies, total


def cpu_seconds(pid: int) -> float:
    """CPU time a process's live threads have run so far, in seconds: the sum of
    ``/proc/<pid>/task/*/schedstat`` (nanosecond accounting, unlike ``/proc/<pid>/stat``'s
    10 ms ticks; threads that already exited are not counted)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1e9


def memory(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon and RssFile of a process, in MiB."""
    wanted = ("VmRSS", "VmHWM", "RssAnon", "RssFile")
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in wanted:
            out[key] = int(value.split()[0]) / 1024
    return out


def percentile(sorted_ns: Sequence[int], q: float) -> float:
    """Nearest-rank percentile of sorted samples, in µs."""
    rank = max(1, math.ceil(q / 100 * len(sorted_ns)))
    return sorted_ns[rank - 1] / 1e3


# -- 1. throughput ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    calls_per_s: float
    p50_us: float
    p99_us: float
    mean_us: float
    server_cpu_us: float
    """Server CPU (user + system, all threads) per call during the measured calls."""


def throughput_round(spec: ServerSpec, n: int, warmup: int) -> Round:
    with spawned(spec) as child:
        child.handshake()
        calls(child, 1, warmup)
        cpu = cpu_seconds(child.pid)
        latencies, total = calls(child, 1 + warmup, n)
        cpu = cpu_seconds(child.pid) - cpu
    latencies.sort()
    return Round(
        calls_per_s=n / (total / 1e9),
        p50_us=percentile(latencies, 50),
        p99_us=percentile(latencies, 99),
        mean_us=sum(latencies) / n / 1e3,
        server_cpu_us=cpu / n * 1e6,
    )


def median_of(rounds: Sequence[Round], attr: str) -> float:
    return Stats.of([getattr(r, attr) for r in rounds]).median


# -- 2 + 3. cold start and idle memory --------------------------------------------------------


@dataclass(frozen=True)
class Spawn:
    cold_ms: float
    cold_cpu_ms: float
    """The server's CPU time when its ``initialize`` reply had arrived."""
    memory: dict[str, float]


def cold_spawn(spec: ServerSpec, idle_calls: int, settle: float) -> Spawn:
    with spawned(spec) as child:
        cold = child.handshake()
        cpu = cpu_seconds(child.pid)
        calls(child, 1, idle_calls)
        time.sleep(settle)
        mem = memory(child.pid)
    return Spawn(cold / 1e6, cpu * 1e3, mem)


def interpreter_floor() -> float:
    """Spawn → exit of ``python -I -c pass`` in ms (the floor under every cold start)."""
    started = time.perf_counter_ns()
    subprocess.run(python("-c", "pass"), env=clean_env(), check=True, stdin=subprocess.DEVNULL)
    return (time.perf_counter_ns() - started) / 1e6


def pyc_present() -> dict[str, bool]:
    """Whether the compiled cache of each server's biggest module exists."""
    found: dict[str, bool] = {}
    for key, package, rel in (
        ("ours", "mcpgen", "generated/v2025_11_25/types.py"),
        ("sdk", "mcp_types", "_types.py"),
    ):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            found[key] = False
            continue
        source = Path(spec.origin).parent / rel
        found[key] = Path(importlib.util.cache_from_source(str(source))).exists()
    return found


# -- the report -------------------------------------------------------------------------------


def measure(args: argparse.Namespace) -> dict[str, Any]:
    servers = [s for s in registry.selected(args, PEERS) if s.key not in args.skip]
    started_load = load()

    progress("warm-up spawn of each server (untimed: writes .pyc caches)")
    for spec in servers:
        with spawned(spec) as child:
            child.handshake()
            calls(child, 1, 5)
    pyc = pyc_present()

    rounds: dict[str, list[Round]] = defaultdict(list)
    for i in range(args.rounds):
        order = servers if i % 2 == 0 else servers[::-1]
        for spec in order:
            progress(f"round {i + 1}/{args.rounds}: {spec.key}, {args.calls} calls")
            rounds[spec.key].append(throughput_round(spec, args.calls, args.warmup))

    spawns: dict[str, list[Spawn]] = defaultdict(list)
    floor: list[float] = []
    for i in range(args.spawns):
        progress(f"cold start + idle memory {i + 1}/{args.spawns}")
        order = servers if i % 2 == 0 else servers[::-1]
        for spec in order:
            spawns[spec.key].append(cold_spawn(spec, args.idle_calls, args.settle))
        floor.append(interpreter_floor())

    result = report(servers, rounds, spawns, floor, args)
    result["pyc_warm"] = pyc
    if registry.wanted(list(rounds)):

        def per_round(key: str) -> tuple[list[float], list[float]]:
            return [r.calls_per_s for r in rounds[key]], [r.server_cpu_us for r in rounds[key]]

        result["registry_acceptance"] = registry.acceptance("stdio", {"stdio": per_round}, "cpu")
    result["load_average"] = load_note(started_load)

    missed = not all(
        result["goals"][k]["met"] is not False for k in ("speedup", "cold_start", "idle_rss")
    )
    if args.profile or (missed and not args.no_profile):
        if missed:
            note("a goal was missed: profiling mcpgen's server (--no-profile to skip)")
        result["profile"] = profile(args)
    return emit(NAME, result)


def report(
    servers: Sequence[ServerSpec],
    rounds: dict[str, list[Round]],
    spawns: dict[str, list[Spawn]],
    floor: Sequence[float],
    args: argparse.Namespace,
) -> dict[str, Any]:
    keys = [s.key for s in servers]
    heading(
        f"tools/call round trips over stdio: {args.calls} calls after {args.warmup} warm-up, "
        f"one in flight, median of {args.rounds} interleaved rounds"
    )
    for spec in servers:
        note(f"{spec.key}: `{spec.shown()}`")
    note("calls/s = calls / wall of the loop; latency = write → reply line read, in µs")
    note("server CPU = CPU time of the server process (all its threads) per measured call")
    rows: list[list[object]] = []
    per_server: dict[str, dict[str, Any]] = {}
    for spec in servers:
        rs = rounds[spec.key]
        rate = Stats.of([r.calls_per_s for r in rs])
        summary = {
            "calls_per_s": round(rate.median, 1),
            "calls_per_s_min": round(rate.low, 1),
            "calls_per_s_max": round(rate.high, 1),
            "p50_us": round(median_of(rs, "p50_us"), 1),
            "p99_us": round(median_of(rs, "p99_us"), 1),
            "mean_us": round(median_of(rs, "mean_us"), 1),
            "server_cpu_us_per_call": round(median_of(rs, "server_cpu_us"), 1),
            "rounds": [r.calls_per_s for r in rs],
        }
        per_server[spec.key] = summary
        rows.append(
            [
                spec.key,
                spec.label,
                round(rate.median),
                round(rate.low),
                round(rate.high),
                summary["p50_us"],
                summary["p99_us"],
                summary["server_cpu_us_per_call"],
            ]
        )
    print(
        table(
            ["server", "what", "calls/s", "min", "max", "p50 µs", "p99 µs", "server CPU µs/call"],
            rows,
        )
    )
    speedups: dict[str, float] = {}
    if "ours" in keys:
        ours_rate = per_server["ours"]["calls_per_s"]
        for peer in ("sdk", "bare"):
            if peer in keys:
                speedups[peer] = round(ours_rate / per_server[peer]["calls_per_s"], 3)
                note(
                    f"calls/s, ours / {peer}: {speedups[peer]:.2f}×   "
                    f"(p50 latency ours / {peer}: "
                    f"{ratio(per_server['ours']['p50_us'], per_server[peer]['p50_us'])})"
                )
    cpu_ratios: dict[str, float] = {}
    if "ours" in keys:
        ours_cpu = per_server["ours"]["server_cpu_us_per_call"]
        for peer in ("sdk", "bare"):
            if peer in keys and ours_cpu > 0:
                cpu_ratios[peer] = round(per_server[peer]["server_cpu_us_per_call"] / ours_cpu, 3)
                note(
                    f"server CPU per call, {peer} / ours: {cpu_ratios[peer]:.2f}× "
                    "(less sensitive to a busy machine than calls/s)"
                )
    speed_ok = speedups["sdk"] >= GOAL_SPEEDUP if "sdk" in speedups else None
    if speed_ok is not None:
        note(
            f"goal: ours ≥ {GOAL_SPEEDUP:.0f}× the SDK's calls/s → {speedups['sdk']:.2f}×, "
            f"{verdict(speed_ok)}"
        )

    heading(
        f"cold start: spawn → initialize reply, median of {args.spawns} interleaved spawns "
        "(.pyc caches warm)"
    )
    cold = {k: Stats.of([s.cold_ms / 1e3 for s in spawns[k]]) for k in keys}
    floor_stats = Stats.of([f / 1e3 for f in floor])
    ms = {k: cold[k].median * 1e3 for k in keys}
    cold_cpu = {k: Stats.of([s.cold_cpu_ms for s in spawns[k]]).median for k in keys}
    rows = [[k, ms[k], cold[k].low * 1e3, cold[k].high * 1e3, cold_cpu[k]] for k in keys]
    rows.append(
        [
            "python -I -c pass (spawn → exit)",
            floor_stats.median * 1e3,
            floor_stats.low * 1e3,
            floor_stats.high * 1e3,
            "",
        ]
    )
    print(table(["server", "median ms", "min", "max", "server CPU ms (median)"], rows))
    note("server CPU = the child's CPU time when its reply arrived (steadier on a busy machine)")
    note("every child pays the floor (interpreter + site, incl. the editable-install finder)")
    for peer in ("sdk", "bare"):
        if "ours" in keys and peer in keys:
            note(f"cold start, ours / {peer}: {ratio(ms['ours'], ms[peer])}")
    cold_ok = ms["ours"] <= GOAL_COLD_MS if "ours" in keys else None
    if cold_ok is not None:
        note(f"goal: ours ≤ {GOAL_COLD_MS:.0f} ms → {ms['ours']:.1f} ms, {verdict(cold_ok)}")

    heading(
        f"idle memory after initialize + {args.idle_calls} calls, median of {args.spawns} "
        "spawns (/proc/<pid>/status, MiB)"
    )
    mem: dict[str, dict[str, float]] = {}
    for k in keys:
        mem[k] = {
            field_: round(Stats.of([s.memory.get(field_, 0.0) for s in spawns[k]]).median, 2)
            for field_ in ("VmRSS", "VmHWM", "RssAnon", "RssFile")
        }
    print(
        table(
            ["server", "VmRSS", "VmHWM", "RssAnon", "RssFile"],
            [[k, *(mem[k][f] for f in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))] for k in keys],
        )
    )
    for peer in ("sdk", "bare"):
        if "ours" in keys and peer in keys:
            note(f"VmRSS, ours / {peer}: {mem['ours']['VmRSS'] / mem[peer]['VmRSS']:.2f}×")
    rss_ok = mem["ours"]["VmRSS"] <= GOAL_RSS_MIB if "ours" in keys else None
    if rss_ok is not None:
        note(
            f"goal: ours ≤ {GOAL_RSS_MIB:.0f} MiB → {mem['ours']['VmRSS']:.1f} MiB, "
            f"{verdict(rss_ok)}"
        )

    return {
        "commands": {s.key: s.shown() for s in servers},
        "calls": args.calls,
        "warmup": args.warmup,
        "rounds": args.rounds,
        "spawns": args.spawns,
        "throughput": per_server,
        "ratio_calls_per_s_ours_over": speedups,
        "ratio_server_cpu_per_call_over_ours": cpu_ratios,
        "cold_start_ms": {k: cold[k].ms() for k in keys} | {"python_floor": floor_stats.ms()},
        "cold_start_ms_median": {k: round(ms[k], 1) for k in keys},
        "cold_start_cpu_ms_median": {k: round(cold_cpu[k], 1) for k in keys},
        "idle_memory_mib": mem,
        "goals": {
            "speedup": {"goal": GOAL_SPEEDUP, "met": speed_ok},
            "cold_start": {"goal_ms": GOAL_COLD_MS, "met": cold_ok},
            "idle_rss": {"goal_mib": GOAL_RSS_MIB, "met": rss_ok},
        },
    }


# -- the profile of ours ----------------------------------------------------------------------

HEAVY = (
    "datamodel_code_generator",
    "jinja2",
    "black",
    "pydantic",
    "mcpgen.generator",
    "httpx",
    "uvicorn",
    "anyio",
    "mcp",
    "mcp_types",
)
"""Packages a stdio server written with mcpgen should not need to import."""


TOP_LEVEL = "(top level: the script, or later, e.g. Server())"


@dataclass(frozen=True)
class Imported:
    """One line of ``-X importtime`` (after ``site``): the module and who imported it."""

    name: str
    self_us: int
    cumulative_us: int
    parent: str | None


def import_tree(stderr: str) -> list[Imported]:
    """The program's imports (interpreter start-up left out), each with its importer
    (``None``: imported by the script itself or by code running later, e.g. ``Server()``)."""
    rows: list[tuple[str, int, int, int]] = []
    for line in stderr.splitlines():
        m = IMPORTTIME_LINE.match(line)
        if not m:
            continue
        level = (len(m.group(3)) - 1) // 2
        if m.group(4) == "site" and level == 0:
            rows = []
        else:
            rows.append((m.group(4), int(m.group(1)), int(m.group(2)), level))
    out: list[Imported] = []
    for i, (name, self_us, cum_us, level) in enumerate(rows):
        # a module's line comes after those of the modules it imported, one level deeper
        parent = next((r[0] for r in rows[i + 1 :] if r[3] < level), None)
        out.append(Imported(name, self_us, cum_us, parent))
    return out


def importtime(
    spec: ServerSpec, runs: int
) -> tuple[dict[str, float], dict[str, float], dict[str, str | None]]:
    """Median self and cumulative ms per module, and each module's importer, over ``runs``
    spawns of ``spec`` under ``-X importtime`` (handshake and a few calls included)."""
    self_us: dict[str, list[int]] = defaultdict(list)
    cum_us: dict[str, list[int]] = defaultdict(list)
    parents: dict[str, str | None] = {}
    for _ in range(runs):
        with spawned(spec, "-X", "importtime") as child:
            child.handshake()
            calls(child, 1, 3)
            child.close()
            stderr = child.stderr()
        for row in import_tree(stderr):
            self_us[row.name].append(row.self_us)
            cum_us[row.name].append(row.cumulative_us)
            parents.setdefault(row.name, row.parent)
    med_self = {n: Stats.of(v).median / 1e3 for n, v in self_us.items()}
    med_cum = {n: Stats.of(v).median / 1e3 for n, v in cum_us.items()}
    return med_self, med_cum, parents


def _package(name: str) -> str:
    """``mcpgen.generated.v2025_11_25.types`` → ``mcpgen.generated.v2025_11_25``;
    ``mcpgen.runtime.x`` → ``mcpgen.runtime``; else the top-level package."""
    parts = name.split(".")
    if name.startswith("mcpgen.generated.") and len(parts) >= 3:
        return ".".join(parts[:3])
    if name.startswith("mcpgen.") and len(parts) >= 2:
        return ".".join(parts[:2])
    return parts[0]


def _owner(name: str, parents: dict[str, str | None]) -> str:
    """The nearest mcpgen or msgspec module at or above ``name`` in the import tree."""
    node: str | None = name
    while node is not None:
        if node.startswith(("mcpgen", "msgspec")):
            return node
        node = parents.get(node)
    return TOP_LEVEL


def import_profile(runs: int, top: int) -> dict[str, Any]:
    """``-X importtime`` of ours and of the bare loop: what ours imports, and what it imports
    beyond the bare loop (the cold-start gap), attributed to the mcpgen module responsible."""
    ours_self, ours_cum, parents = importtime(OURS, runs)
    bare_self, _, _ = importtime(BARE, runs)
    total = sum(ours_self.values())
    bare_total = sum(bare_self.values())

    heading(
        f"ours, where start-up goes: -X importtime (median of {runs} spawns, handshake "
        f"included), {len(ours_self)} modules"
    )
    note(
        f"sum of self times: ours {total:.1f} ms, bare loop {bare_total:.1f} ms "
        "(-X importtime inflates both; read the shares)"
    )
    ranked = sorted(ours_self.items(), key=lambda kv: kv[1], reverse=True)
    print(
        table(
            ["module", "self ms", "cumulative ms", "imported by"],
            [[n, s, ours_cum[n], parents.get(n) or TOP_LEVEL] for n, s in ranked[:top]],
        )
    )

    groups: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for name, s in ours_self.items():
        groups[_package(name)] += s
        counts[_package(name)] += 1
    heading("ours, import self time grouped by package")
    ranked_groups = sorted(groups.items(), key=lambda kv: kv[1], reverse=True)
    print(
        table(
            ["package", "modules", "self ms", "share"],
            [[g, counts[g], s, f"{s / total:.0%}"] for g, s in ranked_groups[:top]],
        )
    )

    extra = {n: s for n, s in ours_self.items() if n not in bare_self}
    by_owner: dict[str, list[str]] = defaultdict(list)
    for name in extra:
        by_owner[_owner(name, parents)].append(name)
    owner_ms = {o: sum(extra[n] for n in names) for o, names in by_owner.items()}
    heading(
        f"ours beyond the bare loop: {len(extra)} more modules, {sum(extra.values()):.1f} ms "
        "self, by the mcpgen/msgspec module that imports them"
    )
    rows: list[list[object]] = []
    for owner, ms in sorted(owner_ms.items(), key=lambda kv: kv[1], reverse=True)[:top]:
        pulled = sorted(
            (n for n in by_owner[owner] if n != owner), key=lambda n: extra[n], reverse=True
        )
        shown = ", ".join(f"{n} {extra[n]:.1f}" for n in pulled[:5])
        more = f" +{len(pulled) - 5} more" if len(pulled) > 5 else ""
        rows.append([owner, f"{extra.get(owner, 0.0):.1f}", f"{ms:.1f}", shown + more])
    print(table(["module", "own ms", "with what it pulls in, ms", "pulls in (self ms)"], rows))

    heavy = sorted({h for h in HEAVY for n in ours_self if n == h or n.startswith(h + ".")})
    versions = sorted(
        {
            _package(n)
            for n in ours_self
            if n.startswith(("mcpgen.generated.v", "mcpgen.generated.d"))
        }
    )
    others = [v for v in versions if not v.endswith("v2025_11_25")]
    note(f"heavy packages imported: {', '.join(heavy) if heavy else 'none'}")
    note(f"generated versions imported: {', '.join(v.rsplit('.', 1)[1] for v in versions)}")
    if others:
        note(
            f"{len(others)} versions beside 2025-11-25 are imported "
            f"({sum(groups[v] for v in others):.1f} ms self) although the client asks for "
            "2025-11-25: Server() accepts every generated version by default "
            "(Versions.around → load(v, 'methods') → that version's types)"
        )
    return {
        "runs": runs,
        "modules": len(ours_self),
        "modules_bare": len(bare_self),
        "self_total_ms": round(total, 1),
        "self_total_ms_bare": round(bare_total, 1),
        "top_self_ms": {n: round(s, 2) for n, s in ranked[:top]},
        "groups_self_ms": {g: round(s, 2) for g, s in ranked_groups[:top]},
        "beyond_bare_ms_by_owner": {o: round(ms, 2) for o, ms in owner_ms.items()},
        "heavy_imported": heavy,
        "generated_versions_imported": versions,
    }


RSS_STEPS = """
import json, sys, time, importlib.util
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
steps = [("interpreter (python -I)", rss(), len(sys.modules), 0.0)]
def step(label, code):
    t = time.perf_counter()
    exec(code, globals())
    steps.append((label, rss(), len(sys.modules), time.perf_counter() - t))
step("+ import asyncio", "import asyncio")
step("+ import msgspec", "import msgspec")
step("+ import mcpgen.runtime", "import mcpgen.runtime")
step("+ import generated v2025_11_25 types", "import mcpgen.generated.v2025_11_25.types")
step("+ its methods, server stubs", "import mcpgen.generated.v2025_11_25.server")
step("+ the echo handlers (bench/servers/ours.py)", '''
spec = importlib.util.spec_from_file_location("ours", sys.argv[1])
ours = importlib.util.module_from_spec(spec); spec.loader.exec_module(ours)''')
step("+ Server(Echo()), default versions", "server = ours.build([])")
step("+ event loop", "loop = asyncio.new_event_loop()")
print(json.dumps(steps))
"""
"""A fresh interpreter loads what ``ours.py`` loads, step by step: VmRSS, modules, time."""


def rss_profile(runs: int) -> dict[str, Any]:
    """VmRSS and time of each step of what ours loads, in a fresh interpreter."""
    rss: dict[str, list[float]] = defaultdict(list)
    seconds: dict[str, list[float]] = defaultdict(list)
    modules: dict[str, int] = {}
    order: list[str] = []
    for _ in range(runs):
        done = subprocess.run(
            python("-c", RSS_STEPS, str(SERVERS_DIR / OURS.script)),
            env=clean_env(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            raise BenchError(f"RSS steps failed:\n{done.stderr[-2000:]}")
        for label, mib, count, took in json.loads(done.stdout):
            if label not in rss:
                order.append(label)
            rss[label].append(mib)
            seconds[label].append(took)
            modules[label] = count
    heading(f"ours, memory and time step by step (fresh interpreter, median of {runs})")
    rows: list[list[object]] = []
    previous = 0.0
    out: dict[str, dict[str, float]] = {}
    for label in order:
        m, s = Stats.of(rss[label]).median, Stats.of(seconds[label]).median
        out[label] = {"VmRSS_mib": round(m, 2), "ms": round(s * 1e3, 2)}
        delta = f"{m - previous:+.1f}" if previous else ""
        rows.append([label, f"{m:.1f}", delta, modules[label], f"{s * 1e3:.1f}"])
        previous = m
    print(table(["step", "VmRSS MiB", "delta", "modules loaded", "step ms"], rows))
    return {"steps": out, "modules": modules}


def versions_profile(spawns: int, idle_calls: int, settle: float) -> dict[str, Any]:
    """Cold start and idle RSS of ours with every version (default) vs only 2025-11-25."""
    cold: dict[str, list[float]] = defaultdict(list)
    rss: dict[str, list[float]] = defaultdict(list)
    for i in range(spawns):
        for spec in (OURS, OURS_ONE_VERSION) if i % 2 == 0 else (OURS_ONE_VERSION, OURS):
            s = cold_spawn(spec, idle_calls, settle)
            cold[spec.key].append(s.cold_ms)
            rss[spec.key].append(s.memory["VmRSS"])
    heading(f"ours, what narrowing the accepted versions buys (median of {spawns} spawns)")
    note(f"ours-1v: `{OURS_ONE_VERSION.shown()}` → Server(..., versions=['2025-11-25'])")
    out: dict[str, Any] = {}
    rows: list[list[object]] = []
    for key in (OURS.key, OURS_ONE_VERSION.key):
        c, r = Stats.of(cold[key]).median, Stats.of(rss[key]).median
        out[key] = {"cold_start_ms": round(c, 1), "VmRSS_mib": round(r, 2)}
        rows.append([key, c, r])
    print(table(["server", "cold start ms", "VmRSS MiB"], rows))
    return out


def _load_ours() -> Any:
    """``bench/servers/ours.py`` as a module of this process (its handlers and ``build``)."""
    spec = importlib.util.spec_from_file_location("_bench_ours", SERVERS_DIR / OURS.script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def connection_us(ours: Any, same_local: bool, n: int, repeat: int = 5) -> float:
    """Best-of-``repeat`` µs per ``tools/call`` through ours' sans-IO ``Connection`` alone
    (frame in → IncomingRequest; result → frame out): no pipes, no event loop, no noise
    from the scheduler. ``same_local`` shares ``Server.local`` with its ``Versions``."""
    server = ours.build([])
    if same_local:
        server.local = server.versions[PROTOCOL_VERSION]
    conn = server.connection()
    conn.receive(INITIALIZE.strip())
    conn.receive(INITIALIZED.strip())
    result = ours.t.CallToolResult(content=[ours.t.TextContent(text="echo")])
    frames = [CALL % (i, i) for i in range(1, n + 1)]
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter_ns()
        for frame in frames:
            event = conn.receive(frame)[0]
            conn.result(event.id, result, event.spec.name)
        best = min(best, (time.perf_counter_ns() - started) / n / 1e3)
    return best


class _Loopback:
    """An in-memory transport: hands out ``frames`` one loop iteration apart (one request
    in flight, as over stdio) and counts what is sent back."""

    def __init__(self, frames: Sequence[bytes]) -> None:
        self.frames = iter(frames)
        self.sent = 0

    async def receive(self) -> bytes | None:
        await asyncio.sleep(0)
        return next(self.frames, None)

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        self.sent += 1

    async def close(self) -> None:
        return None


def session_us(ours: Any, same_local: bool, n: int, repeat: int = 5) -> float:
    """Best-of-``repeat`` µs per ``tools/call`` through ours' whole runtime in process
    (``Server.serve`` on a loopback transport: Session, tasks, dispatch, the handler,
    Connection); one idle loop iteration per call (the loopback's) is included."""
    best = math.inf
    for _ in range(repeat):
        server = ours.build([])
        if same_local:
            server.local = server.versions[PROTOCOL_VERSION]
        frames = [INITIALIZE.strip(), INITIALIZED.strip()]
        frames += [CALL % (i, i) for i in range(1, n + 1)]
        transport = _Loopback(frames)

        async def serve() -> int:
            started = time.perf_counter_ns()
            await server.serve(transport)
            return time.perf_counter_ns() - started

        elapsed = asyncio.run(serve())
        if transport.sent != n + 1:
            raise BenchError(f"loopback: {transport.sent} replies to {n + 1} requests")
        best = min(best, elapsed / n / 1e3)
    return best


def idle_iteration_us(n: int, repeat: int = 5) -> float:
    """µs per bare ``await asyncio.sleep(0)`` (the loopback's own cost per call)."""

    async def spin() -> int:
        started = time.perf_counter_ns()
        for _ in range(n):
            await asyncio.sleep(0)
        return time.perf_counter_ns() - started

    return min(asyncio.run(spin()) for _ in range(repeat)) / n / 1e3


def reshaping_profile(rounds: int, n: int, warmup: int) -> dict[str, Any]:
    """What the broken same-version fast path costs: in the Connection alone (CPU, no
    noise) and end to end (ours vs ours_same_local.py, interleaved rounds)."""
    ours = _load_ours()
    probe = ours.build([])
    shared = probe.local is probe.versions[PROTOCOL_VERSION]
    micro = {flag: connection_us(ours, flag, n) for flag in (False, True)}
    whole = {flag: session_us(ours, flag, n) for flag in (False, True)}
    idle = idle_iteration_us(n)
    results: dict[str, list[Round]] = defaultdict(list)
    for i in range(rounds):
        for spec in (OURS, OURS_SAME_LOCAL) if i % 2 == 0 else (OURS_SAME_LOCAL, OURS):
            results[spec.key].append(throughput_round(spec, n, warmup))

    heading("ours, the same-version fast path (connection.py: `version is self.local`)")
    note(
        f"Server.local is Server.versions['{PROTOCOL_VERSION}']: {shared} → "
        + (
            "params and results pass straight through"
            if shared
            else "every request's params and every result are re-shaped (decode, "
            "to_builtins, convert) for the very version the handlers are typed in"
        )
    )
    note(f"in process, no pipes, best of 5 × {n} calls (CPU-bound, little noise), µs per call:")
    print(
        table(
            ["layer", "as is", "Server.local shared", "difference"],
            [
                [
                    "Connection alone (frame → event; result → frame)",
                    f"{micro[False]:.1f}",
                    f"{micro[True]:.1f}",
                    f"{micro[False] - micro[True]:.1f}",
                ],
                [
                    "whole runtime: Server.serve on a loopback transport",
                    f"{whole[False]:.1f}",
                    f"{whole[True]:.1f}",
                    f"{whole[False] - whole[True]:.1f}",
                ],
                ["  of which the loopback's idle loop iteration", f"{idle:.1f}", "", ""],
            ],
        )
    )
    note(
        f"end to end, {n} calls, median of {rounds} interleaved rounds; ours-same-local: "
        f"`{OURS_SAME_LOCAL.shown()}`"
    )
    out: dict[str, Any] = {
        "local_is_negotiated": shared,
        "connection_us_per_call": {
            "as_is": round(micro[False], 2),
            "shared": round(micro[True], 2),
        },
        "runtime_us_per_call": {"as_is": round(whole[False], 2), "shared": round(whole[True], 2)},
        "loopback_idle_us_per_call": round(idle, 2),
    }
    rows: list[list[object]] = []
    for spec in (OURS, OURS_SAME_LOCAL):
        rs = results[spec.key]
        rate, cpu = median_of(rs, "calls_per_s"), median_of(rs, "server_cpu_us")
        out[spec.key] = {
            "calls_per_s": round(rate, 1),
            "p50_us": round(median_of(rs, "p50_us"), 1),
            "server_cpu_us_per_call": round(cpu, 1),
        }
        rows.append([spec.key, round(rate), out[spec.key]["p50_us"], round(cpu, 1)])
    print(table(["server", "calls/s", "p50 µs", "server CPU µs/call"], rows))
    gain = out[OURS_SAME_LOCAL.key]["calls_per_s"] / out[OURS.key]["calls_per_s"]
    note(f"calls/s, same-local / ours: {gain:.2f}× (wall: noisy; trust the in-process figures)")
    out["gain"] = round(gain, 3)
    return out


def _category(filename: str, func: str) -> str:
    if filename == "~":
        if "poll" in func:
            return IDLE
        return func
    if "/runtime/" in filename:
        return "mcpgen.runtime." + Path(filename).stem
    if "/generated/" in filename:
        return "mcpgen.generated." + Path(filename).stem
    if "/asyncio/" in filename:
        return "asyncio." + Path(filename).stem
    if "bench/servers" in filename:
        return "the echo handler (bench/servers/ours.py)"
    if filename == "<string>":
        return "dataclass __init__ (<string>: the runtime's event objects)"
    if filename.endswith("_weakrefset.py"):
        return "asyncio task registry (_weakrefset.py)"
    return Path(filename).name


def _family(category: str) -> str:
    if category.startswith(("mcpgen.runtime", "dataclass __init__")):
        return "mcpgen.runtime"
    if category.startswith("mcpgen.generated"):
        return "generated (_support, types)"
    if category.startswith("the echo handler"):
        return "echo handler"
    if "posix.read" in category or "posix.write" in category:
        return "pipe syscalls (os.read/os.write)"
    if "msgspec" in category:
        return "msgspec"
    if (
        category.startswith("asyncio")
        or category in ("selectors.py", "events.py")
        or ("_contextvars" in category or "_asyncio" in category)
    ):
        return "asyncio (loop, streams, tasks)"
    return "other"


def cpu_profile(n: int, warmup: int, top: int) -> dict[str, Any]:
    """cProfile (wall-clock timer) of ours, steady state: on after the warm-up, for ``n``."""
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        out = Path(tmp) / "ours.prof"
        command = python(str(SERVERS_DIR / "profiled.py"), str(out), *OURS.args)
        with contextlib.closing(Child(command, "ours under cProfile")) as child:
            child.handshake()
            calls(child, 1, warmup)
            os.kill(child.pid, signal.SIGUSR1)
            time.sleep(0.05)
            latencies, total = calls(child, 1 + warmup, n)
        if not out.exists():
            raise BenchError("cProfile wrote no profile (did the server exit cleanly?)")
        figures = profile_report(
            out,
            n,
            "call",
            top,
            f"ours under cProfile, steady state: {n} calls after {warmup} warm-up "
            f"({n / (total / 1e9):.0f} calls/s with the profiler on)",
            _category,
            _family,
        )
    return {
        "calls": n,
        "calls_per_s_profiled": round(n / (total / 1e9), 1),
        "p50_us_profiled": round(sorted(latencies)[n // 2] / 1e3, 1),
        **figures,
    }


def profile(args: argparse.Namespace) -> dict[str, Any]:
    progress("profile: -X importtime of ours and of the bare loop")
    imports = import_profile(args.profile_runs, args.top)
    progress("profile: memory and time step by step")
    rss = rss_profile(args.profile_runs)
    progress("profile: default versions vs versions=[2025-11-25]")
    narrowed = versions_profile(args.spawns, args.idle_calls, args.settle)
    progress("profile: the same-version fast path")
    reshaping = reshaping_profile(max(args.rounds, 5), args.calls, args.warmup)
    progress("profile: cProfile of ours under load")
    cpu = cpu_profile(args.profile_calls, args.warmup, args.top)
    return {
        "imports": imports,
        "rss_steps": rss,
        "versions": narrowed,
        "same_version_fast_path": reshaping,
        "cprofile": cpu,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench stdio_calls", description=DESCRIPTION)
    p.add_argument("--calls", type=int, default=3000, help="measured calls per round (3000)")
    p.add_argument("--warmup", type=int, default=300, help="untimed calls first (300)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per server (3)")
    p.add_argument("--spawns", type=int, default=10, help="cold-start/RSS spawns per server (10)")
    p.add_argument(
        "--idle-calls", type=int, default=20, help="calls before reading idle memory (20)"
    )
    p.add_argument(
        "--settle",
        type=float,
        default=0.1,
        help="seconds to wait before reading idle memory (0.1)",
    )
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[key for key in PEERS if key != OURS.key],
        help="leave out a peer (repeatable)",
    )
    registry.add_options(p)
    p.add_argument(
        "--profile", action="store_true", help="profile ours even when the goals are met"
    )
    p.add_argument(
        "--no-profile", action="store_true", help="do not profile ours when a goal is missed"
    )
    p.add_argument("--profile-runs", type=int, default=5, help="runs of each profile step (5)")
    p.add_argument("--profile-calls", type=int, default=3000, help="calls under cProfile (3000)")
    p.add_argument("--top", type=int, default=20, help="rows of the profile tables (20)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return measure(parser().parse_args(argv))


if __name__ == "__main__":
    main()
