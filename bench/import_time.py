"""Import cost of a generated ``types`` module against the SDK's ``mcp_types`` and ``mcp.types``."""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import BENCHMARKS
from .harness import alternate, emit, heading, load, load_note, medians, note, progress, python
from .harness import ratio, run, table, verdict

NAME = "import_time"
NEWEST = "2026-07-28"
GOAL_MS = 40.0
"""One version's types, msgspec included, import in under 40 ms."""
SDK_PEERS = ("mcp_types", "mcp.types")
IMPORTTIME_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


@dataclass
class Target:
    label: str
    module: str | None  # None: an interpreter that imports nothing
    kind: str  # "mcpgen", "SDK" or "context"
    samples: list[dict[str, float]] = field(default_factory=list)


def ours(version: str) -> str:
    from mcpgen.generated import VERSIONS

    return f"mcpgen.generated.{VERSIONS[version]}.types"


def warm(target: Target) -> bool:
    """One untimed import, so that ``.pyc`` files exist; whether the module's own does."""
    if target.module is None:
        return True
    code = f"import importlib.util, os, {target.module} as m\nf = m.__file__\n"
    code += "print(os.path.exists(importlib.util.cache_from_source(f)))"
    return run(python("-c", code)).stdout.strip() == "True"


def sample(target: Target) -> None:
    body = f"import {target.module}" if target.module else "pass"
    code = f"import time\nt = time.perf_counter()\n{body}\nprint(time.perf_counter() - t)"
    done = run(python("-c", code))
    target.samples.append({"import_ms": float(done.stdout) * 1e3, "wall_ms": done.seconds * 1e3})


def importtime(module: str, runs: int) -> list[tuple[str, float, float]]:
    """``-X importtime`` of ``module`` after start-up: (module, median self ms, cumulative ms)."""
    self_us: dict[str, list[int]] = defaultdict(list)
    cum_us: dict[str, list[int]] = defaultdict(list)
    for _ in range(runs):
        rows: list[tuple[str, int, int]] = []
        for line in run(python("-X", "importtime", "-c", f"import {module}")).stderr.splitlines():
            if m := IMPORTTIME_LINE.match(line):
                if m.group(4) == "site" and len(m.group(3)) <= 1:
                    rows = []  # everything so far was the interpreter's start-up
                else:
                    rows.append((m.group(4), int(m.group(1)), int(m.group(2))))
        for name, own, cumulative in rows:
            self_us[name].append(own)
            cum_us[name].append(cumulative)
    median = statistics.median
    out = [(n, median(v) / 1e3, median(cum_us[n]) / 1e3) for n, v in self_us.items()]
    return sorted(out, key=lambda r: r[1], reverse=True)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from mcpgen.generated import VERSIONS

    versions = list(VERSIONS) if args.all_versions else [NEWEST]
    targets = [
        Target("python -I, no import", None, "context"),
        Target("msgspec", "msgspec", "context"),
    ]
    targets += [Target(ours(v), ours(v), "mcpgen") for v in versions]
    targets += [Target(p, p, "SDK") for p in SDK_PEERS if p not in args.skip]
    started_load = load()
    progress("warming .pyc caches (one untimed import per target)")
    cached = {t.label: warm(t) for t in targets}
    for i in range(args.runs):
        progress(f"round {i + 1}/{args.runs}")
        for t in alternate(targets, i):
            sample(t)
    stats = {t.label: medians(t.samples, ("import_ms", "wall_ms")) for t in targets}
    heading(f"import in a fresh interpreter (python -I), median of {args.runs} interleaved runs")
    note(".pyc caches warmed first; ms = time around `import`, then the whole process's wall")
    rows = [
        [t.label, t.kind, *(stats[t.label][f] for f in ("import_ms", "min", "max", "wall_ms"))]
        for t in targets
    ]
    rows = [row + ["yes" if cached[row[0]] else "NO"] for row in rows]
    print(table(["target", "kind", "import ms", "min", "max", "process wall ms", "pyc"], rows))
    newest = ours(NEWEST)
    ours_ms = stats[newest]["import_ms"]
    ratios = {k: round(ours_ms / s["import_ms"], 4) for k, s in stats.items() if k in SDK_PEERS}
    for peer in ratios:
        note(f"{newest} / {peer}: {ratio(ours_ms, stats[peer]['import_ms'])}")
    ok = ours_ms < GOAL_MS
    note(f"goal: ours < {GOAL_MS:.0f} ms → {ours_ms:.1f} ms, {verdict(ok)}")
    load_average = load_note(started_load)
    breakdown = importtime(newest, args.importtime_runs) if args.importtime_runs else []
    if breakdown:
        heading(f"where ours goes: -X importtime, median of {args.importtime_runs}, top self time")
        note("(-X importtime adds its own overhead: read shares, not totals)")
        print(table(["module", "self ms", "cumulative ms"], [list(r) for r in breakdown[:8]]))
        cumulative = {name: c for name, _, c in breakdown}
        total, lib = cumulative.get(newest, 0.0), cumulative.get("msgspec", 0.0)
        note(f"msgspec's share of ours: {lib:.1f} of {total:.1f} ms ({lib / (total or 1):.0%})")
    result: dict[str, Any] = {"runs": args.runs, "pyc_warm": cached, "ms": stats, "ours": newest}
    result |= {"ratio_ours_over": ratios, "goal_ms": GOAL_MS, "goal_met": ok}
    top = [
        {"module": n, "self_ms": round(s, 2), "cumulative_ms": round(c, 2)}
        for n, s, c in breakdown[:8]
    ]
    return emit(NAME, result | {"load_average": load_average, "importtime_top": top})


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--runs", type=int, default=15, help="samples per target (15)")
    p.add_argument("--all-versions", action="store_true", help="every generated version's types")
    p.add_argument(
        "--skip", action="append", default=[], choices=SDK_PEERS, help="leave a peer out"
    )
    p.add_argument("--importtime-runs", type=int, default=5, help="-X importtime runs (5; 0: none)")
    return measure(p.parse_args(argv))
