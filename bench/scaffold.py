"""From nothing to a first tool call: ``mcpgen new``, a venv, ``pip install``, the SDK client."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import BENCHMARKS
from .harness import ROOT, BenchError, emit, heading, load, load_note, note, progress, run, table
from .harness import verdict

NAME = "scaffold"
GOAL_S = 15.0
STEPS = ("mcpgen new", "venv", "pip install", "first tool call")


async def first_call(script: Path) -> Any:
    """Start the scaffolded server with the SDK client and call its example tool."""
    from mcp import Client, StdioServerParameters

    async with Client(StdioServerParameters(command=str(script)), mode="legacy") as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})
        return result.structured_content


def install_command(pip: Path, project: Path, wheels: Path | None) -> list[str]:
    """Install the project and its mcpgen: from ``wheels`` offline, else from this checkout."""
    if wheels is not None:
        offline = ["--no-index", "--find-links", str(wheels)]
        return [str(pip), "install", "-q", *offline, "-e", str(project)]
    return [str(pip), "install", "-q", "-e", str(ROOT), "-e", str(project)]


def once(workdir: Path, wheels: Path | None) -> dict[str, float]:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    made = run([sys.executable, "-m", "mcpgen", "new", "bench-server"], cwd=workdir)
    timings["mcpgen new"] = time.perf_counter() - started
    project = workdir / "bench-server"
    if not (project / "pyproject.toml").exists():
        raise BenchError(f"mcpgen new failed: {made.stderr[-500:]}")
    started = time.perf_counter()
    venv.create(workdir / "venv", with_pip=True)
    timings["venv"] = time.perf_counter() - started
    started = time.perf_counter()
    pip = workdir / "venv" / "bin" / "pip"
    installed = run(install_command(pip, project, wheels))
    timings["pip install"] = time.perf_counter() - started
    script = workdir / "venv" / "bin" / "bench-server"
    if not script.exists():
        raise BenchError(f"pip install failed: {installed.stderr[-500:]}")
    started = time.perf_counter()
    answer = asyncio.run(asyncio.wait_for(first_call(script), 60))
    timings["first tool call"] = time.perf_counter() - started
    if answer != {"result": 5}:
        raise BenchError(f"unexpected tool answer {answer!r}")
    timings["total"] = sum(timings.values())
    return timings


def main(argv: Sequence[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--runs", type=int, default=3, help="timed runs after the first (3)")
    p.add_argument("--wheels", type=Path, metavar="DIR", help="install from make dist's")
    args = p.parse_args(argv)
    wheels = args.wheels.resolve() if args.wheels else None
    if wheels is not None and not any(wheels.glob("mcpgen-*.whl")):
        raise BenchError(f"no mcpgen wheel in {wheels} (hint: make dist DIST={wheels})")
    start_load = load()
    heading("scaffold → install → first tool call")
    runs: list[dict[str, float]] = []
    for i in range(args.runs + 1):
        progress(f"run {i + 1} of {args.runs + 1}" + " (pip's cache may be cold)" * (i == 0))
        workdir = Path(tempfile.mkdtemp(prefix="mcpgen-scaffold-"))
        try:
            runs.append(once(workdir, wheels))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    first, timed = runs[0], runs[1:] or runs
    medians = {step: statistics.median(r[step] for r in timed) for step in (*STEPS, "total")}
    rows = [[step, f"{first[step]:.2f}", f"{medians[step]:.2f}"] for step in (*STEPS, "total")]
    print(table(["step", "first run, s", f"median of {len(timed)}, s"], rows))
    ok = medians["total"] < GOAL_S
    note(f"goal: under {GOAL_S:.0f} s from `mcpgen new` to the first tool call — {verdict(ok)}")
    source = "wheels" if wheels else "checkout"
    result = {"first": first, "median": medians, "mcpgen_from": source, "goal_s": GOAL_S, "met": ok}
    return emit(NAME, result | load_note(start_load))
