"""Generating every pinned version: mcpgen's CLI against datamodel-codegen's, once per schema."""

from __future__ import annotations

import argparse
import pstats
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import BENCHMARKS
from .harness import Completed, alternate, datamodel_codegen, emit, heading, load, load_note
from .harness import medians, note, progress, ratio, run, table, tool, verdict

NAME = "generate_time"
GOAL_S = 5.0
PACKAGE = "benchgen"


def mcpgen(versions: Sequence[str], out: Path, jobs: int, profile: Path | None = None) -> Completed:
    """mcpgen's CLI; with ``profile``, under cProfile (written there)."""
    cprofile = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "mcpgen"]
    options = ["--version", ",".join(versions), "--package", PACKAGE, "--out", str(out)]
    command = cprofile if profile else [tool("mcpgen")]
    return run([*command, "generate", *options, "--jobs", str(jobs)])


def dcg(versions: Sequence[str], out: Path) -> dict[str, Completed]:
    from mcpgen.generator.pins import module_name, schema_dir

    out.mkdir(parents=True)
    return {
        v: datamodel_codegen(schema_dir() / v / "schema.json", out / f"{module_name(v)}.py")
        for v in versions
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from mcpgen.generator.pins import load_pins

    versions, started_load = load_pins().select(args.version), load()
    rounds: dict[str, list[dict[str, float]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.no_warmup:
            progress("warm-up (untimed): each tool once on one schema")
            mcpgen(versions[:1], tmp / "warm-mcpgen", args.jobs)
            dcg(versions[:1], tmp / "warm-dcg")
        for i in range(args.runs):
            progress(f"round {i + 1}/{args.runs}: both tools, {len(versions)} versions each")
            for key in alternate(["mcpgen", "dcg"], i):
                if key == "mcpgen":
                    done = {"all": mcpgen(versions, tmp / f"mcpgen-{i}", args.jobs)}
                else:
                    done = dcg(versions, tmp / f"dcg-{i}")
                    rounds["dcg per version"].append({v: d.seconds for v, d in done.items()})
                cpu = sum(d.cpu for d in done.values())
                rounds[key].append({"wall_s": sum(d.seconds for d in done.values()), "cpu_s": cpu})
        s = {k: medians(rounds[k], ("wall_s", "cpu_s")) for k in ("mcpgen", "dcg")}
        dcg_each = medians(rounds["dcg per version"], versions)
        fast, beats = s["mcpgen"]["wall_s"] < GOAL_S, s["mcpgen"]["wall_s"] < s["dcg"]["wall_s"]
        heading(f"generating {len(versions)} versions, median of {args.runs} interleaved runs")
        note(f"mcpgen: `mcpgen generate --version {args.version} --package {PACKAGE} --out <tmp>`")
        command = "datamodel-codegen --input schema/<v>/schema.json --input-file-type"
        note(f"datamodel-codegen: `{command}")
        note("  jsonschema --output-model-type msgspec.Struct --output <tmp>/<v>.py`, per version")
        names = {"mcpgen": "mcpgen (CLI)", "dcg": "datamodel-codegen (CLI, sum)"}
        rows = [
            [names[k], *(f"{x[f]:.2f}" for f in ("wall_s", "min", "max", "cpu_s"))]
            for k, x in s.items()
        ]
        print(table(["tool", "wall median s", "min", "max", "CPU median s"], rows))
        wall, cpu = (ratio(s["mcpgen"][f], s["dcg"][f]) for f in ("wall_s", "cpu_s"))
        note(f"wall, mcpgen / datamodel-codegen: {wall}")
        note(f"CPU (user + system, workers included): {cpu}")
        note(
            f"goals: mcpgen < {GOAL_S:.0f} s → {s['mcpgen']['wall_s']:.2f} s, {verdict(fast)}; "
            f"faster than datamodel-codegen → {verdict(beats)}"
        )
        each = ", ".join(f"{v} {dcg_each[v]:.2f}" for v in versions)
        note(f"datamodel-codegen per version, s: {each}")
        load_average = load_note(started_load)
        if args.profile or not (fast and beats):
            heading("cProfile of `mcpgen generate --jobs 1` (black in process), top 15 by own time")
            mcpgen(versions, tmp / "profiled", 1, tmp / "generate.prof")
            stats = pstats.Stats(str(tmp / "generate.prof")).strip_dirs()
            stats.sort_stats("tottime").print_stats(15)
    result: dict[str, Any] = {
        "versions": versions,
        "runs": args.runs,
        "jobs": args.jobs,
        "seconds": s,
    }
    result["dcg_per_version_s"] = {v: dcg_each[v] for v in versions}
    result["ratio_mcpgen_over_dcg"] = round(s["mcpgen"]["wall_s"] / s["dcg"]["wall_s"], 4)
    result |= {"goal_s": GOAL_S, "goal_met": fast, "faster_than_dcg": beats}
    return emit(NAME, result | {"load_average": load_average})


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--runs", type=int, default=3, help="timed runs per tool (3)")
    p.add_argument("--version", default="all", help="versions to generate (all)")
    p.add_argument("--jobs", type=int, default=2, help="mcpgen --jobs (2, the CLI's default)")
    p.add_argument("--no-warmup", action="store_true", help="no untimed run of each tool first")
    p.add_argument("--profile", action="store_true", help="cProfile the CLI even if goals are met")
    return measure(p.parse_args(argv))
