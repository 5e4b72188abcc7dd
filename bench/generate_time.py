"""Wall time of generating every pinned version: mcpgen's CLI vs datamodel-codegen's CLI.

Both tools run as fresh processes into fresh temporary directories (cold: no existing
output), interleaved round by round, after one untimed warm-up each (``.pyc`` caches).
datamodel-codegen runs once per schema, sequentially; its total is the sum. Then mcpgen's
pipeline functions are timed one by one in a child process (``bench._phases``) to show where
the time goes; ``--profile`` adds a cProfile of that child (also automatic on a missed goal).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import BENCHMARKS, _dcg
from ._cprofile import top_functions
from ._util import (
    ROOT,
    Completed,
    Stats,
    emit,
    heading,
    load,
    load_note,
    note,
    progress,
    ratio,
    run,
    table,
    tool,
    verdict,
)

NAME = "generate_time"
DESCRIPTION = BENCHMARKS[NAME]
GOAL_S = 5.0
PACKAGE = "benchgen"


def mcpgen_command(versions: Sequence[str], out: Path, jobs: int) -> list[str]:
    return [
        tool("mcpgen"),
        "generate",
        "--version",
        ",".join(versions),
        "--package",
        PACKAGE,
        "--out",
        str(out),
        "--jobs",
        str(jobs),
    ]


@dataclass
class Samples:
    """Wall and CPU seconds of repeated runs of one tool."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, done: Sequence[Completed]) -> None:
        self.wall.append(sum(d.seconds for d in done))
        self.cpu.append(sum(d.cpu for d in done))


def run_mcpgen(versions: Sequence[str], out: Path, jobs: int) -> Completed:
    return run(mcpgen_command(versions, out, jobs))


def run_dcg(versions: Sequence[str], out: Path) -> dict[str, Completed]:
    """The CLI once per schema, one after the other."""
    from mcpgen.generator.pins import module_name

    out.mkdir(parents=True)
    return {v: _dcg.generate(v, out / f"{module_name(v)}.py") for v in versions}


def compare(
    versions: Sequence[str], tmp: Path, args: argparse.Namespace
) -> tuple[Samples, Samples, dict[str, list[float]]]:
    """Interleaved rounds of both tools; returns mcpgen, dcg, and dcg's per-version walls."""
    if not args.no_warmup:
        progress("warm-up (untimed): each tool once on the smallest schema")
        run_mcpgen(versions[:1], tmp / "warm-mcpgen", args.jobs)
        run_dcg(versions[:1], tmp / "warm-dcg")
    ours, theirs = Samples(), Samples()
    per_version: dict[str, list[float]] = defaultdict(list)
    for i in range(args.runs):
        progress(f"round {i + 1}/{args.runs}: both tools, {len(versions)} versions each")
        for step in ("mcpgen", "dcg") if i % 2 == 0 else ("dcg", "mcpgen"):
            if step == "mcpgen":
                ours.add([run_mcpgen(versions, tmp / f"mcpgen-{i}", args.jobs)])
            else:
                per = run_dcg(versions, tmp / f"dcg-{i}")
                theirs.add(list(per.values()))
                for v, done in per.items():
                    per_version[v].append(done.seconds)
    return ours, theirs, per_version


def run_phases(out: Path, jobs: int, profile: Path | None = None) -> dict[str, Any]:
    """One ``bench._phases`` child (not ``-I``: it must find ``bench`` from the checkout)."""
    cmd = [
        sys.executable,
        "-s",
        "-E",
        "-m",
        "bench._phases",
        "--out",
        str(out),
        "--jobs",
        str(jobs),
    ]
    if profile is not None:
        cmd += ["--profile", str(profile)]
    done = run(cmd, cwd=ROOT)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = done.seconds
    result["cpu"] = done.cpu
    return result


def print_profile(path: Path, top: int) -> list[str]:
    """Top functions by cumulative and by own time; returns the own-time lines."""
    title = "cProfile of the pipeline (jobs=1, black in-process), top {top} by {key}"
    top_functions(path, top, "cumulative", title.format(top=top, key="cumulative"))
    return top_functions(path, top, "tottime", title.format(top=top, key="tottime"))


def report_compare(
    versions: Sequence[str],
    ours: Samples,
    theirs: Samples,
    per_version: dict[str, list[float]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    wall, wall_dcg = Stats.of(ours.wall), Stats.of(theirs.wall)
    cpu, cpu_dcg = Stats.of(ours.cpu), Stats.of(theirs.cpu)
    fast_enough, beats_dcg = wall.median < GOAL_S, wall.median < wall_dcg.median
    heading(
        f"generating {len(versions)} versions into a fresh dir, median of {args.runs} interleaved runs"
    )
    note(f"mcpgen: `{' '.join(mcpgen_command(['all'], Path('<tmp>'), args.jobs))}`")
    note(
        "datamodel-codegen: `datamodel-codegen --input schema/<v>/schema.json --input-file-type"
        " jsonschema --output-model-type msgspec.Struct --output <tmp>/<v>.py`, per version, in turn"
    )
    note("CPU = user + system of the process and its workers (less noisy than wall)")
    rows = [
        ["mcpgen (CLI)", wall, cpu],
        ["datamodel-codegen (CLI, sum)", wall_dcg, cpu_dcg],
    ]
    print(
        table(
            ["tool", "wall median s", "min", "max", "CPU median s"],
            [[n, *(f"{x:.2f}" for x in (w.median, w.low, w.high, c.median))] for n, w, c in rows],
        )
    )
    note(f"wall, mcpgen / datamodel-codegen: {ratio(wall.median, wall_dcg.median)}")
    note(f"CPU,  mcpgen / datamodel-codegen: {ratio(cpu.median, cpu_dcg.median)}")
    note(f"goal: mcpgen < {GOAL_S:.0f} s wall → {wall.median:.2f} s, {verdict(fast_enough)}")
    note(f"goal: faster than datamodel-codegen → {verdict(beats_dcg)}")

    heading("datamodel-codegen per version (median wall s)")
    print(
        table(
            ["version", "s"],
            [[v, f"{Stats.of(per_version[v]).median:.2f}"] for v in versions],
        )
    )
    return {
        "mcpgen_s": _s(wall),
        "mcpgen_cpu_s": _s(cpu),
        "dcg_cli_s": _s(wall_dcg),
        "dcg_cli_cpu_s": _s(cpu_dcg),
        "dcg_per_version_s": {v: round(Stats.of(per_version[v]).median, 3) for v in versions},
        "ratio_mcpgen_over_dcg": round(wall.median / wall_dcg.median, 4),
        "ratio_cpu_mcpgen_over_dcg": round(cpu.median / cpu_dcg.median, 4),
        "goal_s": GOAL_S,
        "goal_met": fast_enough,
        "faster_than_dcg": beats_dcg,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from mcpgen.generator.pins import load_pins

    versions = load_pins().select(args.version)
    started_load = load()
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp_name:
        tmp = Path(tmp_name)
        ours, theirs, per_version = compare(versions, tmp, args)
        phase_runs: list[dict[str, Any]] = []
        if args.version == "all":
            for i in range(args.phase_runs):
                progress(f"phase breakdown {i + 1}/{args.phase_runs}")
                phase_runs.append(run_phases(tmp / f"phases-{i}", args.jobs))

        result = report_compare(versions, ours, theirs, per_version, args)
        result["load_average"] = load_note(started_load)
        phases = report_phases(phase_runs) if phase_runs else {}
        hot: list[str] = []
        if args.profile or not (result["goal_met"] and result["faster_than_dcg"]):
            progress("profiling the pipeline (jobs=1)")
            prof = tmp / "pipeline.prof"
            run_phases(tmp / "profiled", 1, prof)
            hot = print_profile(prof, args.top)[: args.top]

    return emit(
        NAME,
        {
            "versions": versions,
            "runs": args.runs,
            "jobs": args.jobs,
            **result,
            "phases_ms": phases,
            "profile_tottime_top": hot,
        },
    )


def _s(stats: Stats) -> dict[str, float]:
    return {
        "median": round(stats.median, 3),
        "min": round(stats.low, 3),
        "max": round(stats.high, 3),
        "n": stats.n,
    }


def report_phases(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Print the median of each phase over the child runs; returns phase → median ms."""
    samples: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        for name, s in r["phases"].items():
            samples[name].append(s)
        samples["in-process total"].append(r["total"])
        samples["process start-up + exit (wall − in-process)"].append(r["wall"] - r["total"])
        samples["process wall"].append(r["wall"])
        samples["process CPU (incl. black workers)"].append(r["cpu"])
    medians = {name: Stats.of(s).median for name, s in samples.items()}
    total = medians["process wall"]
    heading(
        f"mcpgen phases (pipeline functions called directly, fresh process, jobs={runs[0]['jobs']}), median of {len(runs)}"
    )
    sizes = runs[0]["black_input"]
    note(
        f"black input: {sizes.get('modules')} modules, {sizes.get('unique')} unique, {sizes.get('chars', 0) / 1e6:.2f} M chars"
    )
    rows = [[name, f"{m * 1e3:.0f}", f"{m / total:.0%}"] for name, m in medians.items()]
    print(table(["phase", "ms", "share of wall"], rows))

    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        for v, parts in r["per_version"].items():
            for k, s in parts.items():
                per[v][k].append(s)
    heading("mcpgen per version (median ms)")
    print(
        table(
            ["version", "read", "schema → IR", "render"],
            [
                [
                    v,
                    *(f"{Stats.of(per[v][k]).median * 1e3:.0f}" for k in ("read", "ir", "render")),
                ]
                for v in per
            ],
        )
    )
    return {name: round(m * 1e3, 1) for name, m in medians.items()}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench generate_time", description=DESCRIPTION)
    p.add_argument("--runs", type=int, default=3, help="timed runs per tool (default 3)")
    p.add_argument(
        "--phase-runs",
        type=int,
        default=3,
        help="runs of the phase breakdown (default 3)",
    )
    p.add_argument("--version", default="all", help="versions to generate (default all)")
    p.add_argument("--jobs", type=int, default=2, help="mcpgen --jobs (default 2, the CLI default)")
    p.add_argument(
        "--no-warmup",
        action="store_true",
        help="skip the untimed warm-up run of each tool",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the pipeline even when the goals are met",
    )
    p.add_argument("--top", type=int, default=20, help="rows of the profile")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return measure(parser().parse_args(argv))


if __name__ == "__main__":
    main()
