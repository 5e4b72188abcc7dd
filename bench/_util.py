"""Shared helpers for the benchmarks: paths, subprocess timing, statistics and reporting.

Benchmarks never assert absolute timings; they measure mcpgen next to a peer in the same run
(interleaved, so machine noise hits both alike) and report medians and ratios.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
"""The mcpgen checkout."""

BIN = Path(sys.executable).parent
"""The venv's ``bin/`` (benchmarks run with the venv's interpreter)."""


class BenchError(RuntimeError):
    """A command a benchmark depends on failed."""


def tool(name: str) -> str:
    """Path of a console script: the venv's own first, else one on ``PATH``."""
    local = BIN / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise BenchError(f"{name}: not installed (hint: make setup)")
    return found


def clean_env() -> dict[str, str]:
    """A minimal environment for child processes: no ``PYTHON*`` variables, no user state."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
    }


@dataclass(frozen=True)
class Completed:
    """A finished child process, its wall time and the CPU time it (and its children) used."""

    seconds: float
    stdout: str
    stderr: str
    cpu: float = 0.0


def run(cmd: Sequence[str], *, cwd: Path | None = None) -> Completed:
    """Run ``cmd`` with a clean environment; wall time around the whole process.

    CPU time (user + system) comes from ``RUSAGE_CHILDREN`` deltas, so it counts the
    child's own worker processes too; it is less sensitive to a busy machine than wall time.
    """
    before = children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(
        list(cmd), cwd=cwd, env=clean_env(), capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    cpu = children_cpu() - before
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise BenchError(f"exit {proc.returncode}: {' '.join(cmd)}\n{tail}")
    return Completed(seconds, proc.stdout, proc.stderr, cpu)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def python(*args: str) -> list[str]:
    """A command line for this interpreter, isolated (``-I``: no site-user, env or cwd)."""
    return [sys.executable, "-I", *args]


@dataclass(frozen=True)
class Stats:
    """Summary of repeated samples, in seconds."""

    median: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def ms(self) -> dict[str, float]:
        """Milliseconds, rounded, for the JSON line."""
        return {
            "median_ms": round(self.median * 1e3, 2),
            "min_ms": round(self.low * 1e3, 2),
            "max_ms": round(self.high * 1e3, 2),
            "n": self.n,
        }


def ratio(ours: float, theirs: float) -> str:
    """``0.21× (4.8× faster)`` — ours relative to a peer."""
    if ours <= 0 or theirs <= 0:
        return "n/a"
    r = ours / theirs
    word = f"{1 / r:.1f}× faster" if r < 1 else f"{r:.1f}× slower"
    return f"{r:.2f}× ({word})"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table; numbers right-aligned."""
    cells = [[str(c) for c in headers]] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [
        all(isinstance(row[i], (int, float)) for row in rows) if rows else False
        for i in range(len(headers))
    ]

    def line(row: list[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def machine() -> dict[str, Any]:
    """Context for the JSON line: results only compare within one machine and run."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
    }


def load() -> float:
    """The 1-minute load average (other work on the machine skews wall times)."""
    return os.getloadavg()[0]


def load_note(start: float) -> dict[str, float]:
    """Print the load at the start and end of a benchmark; returns both for the JSON line."""
    end = load()
    note(f"load average (1 min): {start:.2f} at start, {end:.2f} at end, on {os.cpu_count()} CPUs")
    if max(start, end) > (os.cpu_count() or 1) * 0.75:
        note("the machine was busy: trust the ratios and CPU times more than absolute wall times")
    return {"start": round(start, 2), "end": round(end, 2)}


def emit(bench: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Print the machine-readable result line (``BENCH {...}``) and return the record."""
    record = {"bench": bench, **payload, "machine": machine()}
    print("BENCH " + json.dumps(record, separators=(",", ":")), flush=True)
    return record


def heading(text: str) -> None:
    print(f"\n== {text}", flush=True)


def note(text: str) -> None:
    print(f"   {text}", flush=True)


def progress(text: str) -> None:
    """Progress goes to stderr so stdout stays the report."""
    print(f"   … {text}", file=sys.stderr, flush=True)
