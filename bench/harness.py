"""What every benchmark shares: child processes, wrk, CPU and memory, statistics, the report."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "bench" / "servers"
DEADLINE_S = 900.0  # a child still running after this long is killed


class BenchError(RuntimeError):
    """Something a benchmark depends on failed."""


def tool(name: str) -> str:
    """A console script: the venv's own, else one on ``PATH``."""
    local = Path(sys.executable).parent / name
    if found := str(local) if local.exists() else shutil.which(name):
        return found
    raise BenchError(f"{name}: not installed")


def clean_env() -> dict[str, str]:
    """A minimal environment for children: no ``PYTHON*`` variables, no user state."""
    env = {k: os.environ.get(k, d) for k, d in (("PATH", os.defpath), ("HOME", "/tmp"))}
    return env | {"LANG": "C.UTF-8"}


def python(*args: str) -> list[str]:
    """This interpreter, isolated (``-I``: no user site, no ``PYTHON*``, no script dir)."""
    return [sys.executable, "-I", *args]


@dataclass(frozen=True)
class Completed:
    seconds: float
    stdout: str
    stderr: str
    cpu: float  # user + system seconds of the child and its own children


def run(cmd: Sequence[str], cwd: Path | None = None) -> Completed:
    """Run ``cmd`` in a clean environment to the end; a non-zero exit is an error."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(list(cmd), cwd=cwd, env=clean_env(), capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise BenchError(f"exit {done.returncode}: {' '.join(cmd)}\n{tail}")
    return Completed(seconds, done.stdout, done.stderr, cpu)


def datamodel_codegen(schema: Path, output: Path) -> Completed:
    """datamodel-code-generator's CLI as the benchmarks compare with it: msgspec output."""
    command = [tool("datamodel-codegen"), "--input", str(schema), "--input-file-type", "jsonschema"]
    return run([*command, "--output-model-type", "msgspec.Struct", "--output", str(output)])


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_seconds(pid: int) -> float:
    """CPU time of a process's live threads, from ``/proc/<pid>/task/*/schedstat`` (ns)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
    return total / 1e9


def memory(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon and RssFile of a process, in MiB."""
    lines = (line.split() for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    wanted = ("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")
    return {w[0][:-1]: int(w[1]) / 1024 for w in lines if w and w[0] in wanted}


class Process:
    """A spawned server, talked to over its pipes (``pipes``) or over a port (``listen``)."""

    def __init__(
        self,
        command: Sequence[str],
        label: str,
        pipes: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.label, self.buffer, self.port = label, b"", 0
        self.errors: IO[bytes] = tempfile.TemporaryFile()
        self.started_ns = time.perf_counter_ns()
        pipe = subprocess.PIPE if pipes else None
        self.proc = subprocess.Popen(
            list(command), stdin=pipe or subprocess.DEVNULL, stdout=pipe or self.errors,
            stderr=self.errors, env=clean_env() | (env or {}), cwd=ROOT, bufsize=0,
        )  # fmt: skip
        self.pid = self.proc.pid
        self.fd_in = self.proc.stdin.fileno() if self.proc.stdin else -1
        self.watchdog = threading.Timer(DEADLINE_S, self.proc.kill)
        self.watchdog.daemon = True
        self.watchdog.start()

    def read_line(self) -> bytes:
        assert self.proc.stdout is not None
        while (end := self.buffer.find(b"\n")) < 0:
            if not (chunk := os.read(self.proc.stdout.fileno(), 65536)):
                raise BenchError(f"{self.label}: the server closed its stdout\n{self.output()}")
            self.buffer += chunk
        line, self.buffer = self.buffer[:end], self.buffer[end + 1 :]
        return line

    def listen(self, port: int, timeout: float = 60.0) -> Process:
        """Wait until the server accepts connections on ``port``."""
        self.port, deadline = port, time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check()
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return self
            time.sleep(0.05)
        raise BenchError(f"{self.label}: not listening after {timeout:.0f} s\n{self.output()}")

    def check(self) -> None:
        if self.proc.poll() is not None:
            raise BenchError(f"{self.label}: the server exited\n{self.output()}")

    def output(self, lines: int = 20) -> str:
        if self.errors.closed:
            return ""
        self.errors.seek(0)
        return "\n".join(self.errors.read().decode(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> str:
        """Close stdin (pipes) or send SIGTERM, then SIGKILL; returns what the server said."""
        self.watchdog.cancel()
        with contextlib.suppress(OSError):
            self.proc.stdin.close() if self.proc.stdin else self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        text = self.output(200)
        self.errors.close()
        return text

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- wrk ---------------------------------------------------------------------------------------

LUA_DONE = """done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('WRK {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,' ..
    '"p99_us":%d}\\n', s.requests, s.duration, e.connect + e.read + e.write + e.status +
    e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


def lua_script(headers: dict[str, str], body: bytes, template: bytes = b"", first: int = 0) -> str:
    """A wrk script POSTing ``body``, or ``template % (n, n)`` for n = first + 1, … (in Lua)."""
    quote = "[===[{}]===]".format
    lines = ['wrk.method = "POST"', f"wrk.body = {quote(body.decode())}"]
    lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    if template:
        lines += [f"local template, n = {quote(template.decode())}, {first}"]
        lines += ["request = function()", "  n = n + 1"]
        lines += ["  return wrk.format(nil, nil, nil, string.format(template, n, n))", "end"]
    return "\n".join(lines) + "\n" + LUA_DONE


@dataclass(frozen=True)
class Cell:
    """One timed wrk run against one server at one concurrency."""

    requests_per_s: float
    p50_us: float
    p99_us: float
    server_cpu_us: float  # the server's CPU (all its threads) per request
    server_busy: float  # its CPU / wall: 1.0 is one core
    wrk_busy: float
    requests: int


def wrk(
    script: Path,
    server: Process,
    path: str,
    connections: int,
    seconds: int,
    patience: int = 5,
    under: Sequence[str] = (),
) -> Cell:
    """One wrk run (one thread, its command prefixed by ``under``), each answer awaited up
    to ``patience`` seconds; server CPU from schedstat, wrk's from ``RUSAGE_CHILDREN``."""
    command = [*under, tool("wrk"), "-t1", f"-c{connections}", f"-d{seconds}s"]
    command += [f"--timeout={patience}s", "-s", str(script)]
    command.append(f"http://127.0.0.1:{server.port}{path}")
    cpu_server, cpu_wrk, started = cpu_seconds(server.pid), children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + patience + 60)
    wall = time.perf_counter() - started
    cpu_server, cpu_wrk = cpu_seconds(server.pid) - cpu_server, children_cpu() - cpu_wrk
    server.check()
    line = next((x for x in done.stdout.splitlines() if x.startswith("WRK ")), "")
    r = json.loads(line[4:] or "{}")
    if done.returncode != 0 or not r.get("requests") or r["errors"]:
        raise BenchError(f"{server.label}, -c{connections}: {done.stdout[-1500:]}{done.stderr}")
    n, rate = r["requests"], r["requests"] / (r["duration_us"] / 1e6)
    cpu = (cpu_server / n * 1e6, cpu_server / wall, cpu_wrk / wall)
    return Cell(rate, float(r["p50_us"]), float(r["p99_us"]), *cpu, n)


# -- statistics and reports ---------------------------------------------------------------------


def medians(samples: Sequence[Any], fields: Sequence[str]) -> dict[str, Any]:
    """Each field's median over samples (dicts or objects); the first field's min, max, rounds."""
    values = {f: values_of(samples, f) for f in fields}
    first = [round(x, 2) for x in values[fields[0]]]
    out = {f: round(statistics.median(v), 2) for f, v in values.items()}
    return out | {"min": min(first), "max": max(first), "rounds": first}


def values_of(samples: Sequence[Any], field: str) -> list[Any]:
    """A field (key or attribute) of every sample."""
    return [s[field] if isinstance(s, dict) else getattr(s, field) for s in samples]


def alternate(items: Sequence[Any], i: int) -> list[Any]:
    """Round ``i``'s order: it alternates so that drift hits every peer alike."""
    return list(items if i % 2 == 0 else items[::-1])


def ratio(ours: float, theirs: float, less: str = "faster", more: str = "slower") -> str:
    """``0.21× (4.8× faster)``: ours relative to a peer, for times (and sizes: less, more)."""
    if ours <= 0 or theirs <= 0:
        return "n/a"
    r = ours / theirs
    return f"{r:.2f}× ({1 / r:.1f}× {less})" if r < 1 else f"{r:.2f}× ({r:.1f}× {more})"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An aligned table; columns of numbers right-aligned, floats to one decimal."""
    text = [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(map(len, column)) for column in zip(headers, *text)]
    right = [all(isinstance(r[i], (int, float)) for r in rows) for i in range(len(widths))]

    def line(row: Sequence[str]) -> str:
        cells = (c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right))
        return "  ".join(cells).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, text)])


def heading(text: str) -> None:
    print(f"\n== {text}", flush=True)


def note(text: str) -> None:
    print(f"   {text}", flush=True)


def progress(text: str) -> None:
    """Progress goes to stderr; stdout stays the report."""
    print(f"   … {text}", file=sys.stderr, flush=True)


def load() -> float:
    return os.getloadavg()[0]


def load_note(start: float) -> dict[str, float]:
    """Print the 1-minute load at the start and the end; returns both for the JSON line."""
    end, cpus = load(), os.cpu_count() or 1
    note(f"load average (1 min): {start:.2f} at start, {end:.2f} at end, on {cpus} CPUs")
    if max(start, end) > cpus * 0.75:
        note("the machine was busy: trust ratios and CPU times more than wall times")
    return {"start": round(start, 2), "end": round(end, 2)}


def emit(bench: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Print the machine-readable line ``BENCH {...}`` and return the record."""
    machine = {"python": platform.python_version(), "cpus": os.cpu_count()}
    record = {"bench": bench, **payload, "machine": machine | {"platform": platform.platform()}}
    print("BENCH " + json.dumps(record, separators=(",", ":")), flush=True)
    return record
