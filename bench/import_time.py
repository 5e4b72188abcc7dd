"""Import cost of a generated ``types`` module (msgspec included) vs the official SDK's types.

Every sample is a fresh, isolated interpreter (``python -I -c``) that times its single
``import`` with ``perf_counter`` and prints it; the wall time of the whole process is
recorded too. Targets are interleaved round by round so machine noise hits all alike, and
each target is imported once, untimed, beforehand so its ``.pyc`` files exist.

Peers: ``mcp_types`` (the SDK's pydantic models) and ``mcp.types`` (the same objects, but
importing it first runs the SDK's ``mcp/__init__``). Context rows: an interpreter that
imports nothing, and ``msgspec`` alone.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import BENCHMARKS
from ._util import (
    Stats,
    emit,
    heading,
    load,
    load_note,
    note,
    progress,
    python,
    ratio,
    run,
    table,
    verdict,
)

NAME = "import_time"
DESCRIPTION = BENCHMARKS[NAME]
NEWEST = "2026-07-28"
#: The goal: one version's types, msgspec included, import in under 40 ms.
GOAL_MS = 40.0
SDK_PEERS = ("mcp_types", "mcp.types")
IMPORTTIME_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


@dataclass
class Target:
    label: str
    module: str | None  # None: an interpreter that imports nothing
    role: str  # "ours", "peer" or "context"
    version: str | None = None
    import_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)


def ours_module(version: str) -> str:
    from mcpgen.generated import VERSIONS

    return f"mcpgen.generated.{VERSIONS[version]}.types"


def child_code(module: str | None) -> str:
    body = f"import {module}" if module else "pass"
    return f"import time\nt = time.perf_counter()\n{body}\nprint(time.perf_counter() - t)"


def warm(target: Target) -> bool:
    """Import once, untimed, so ``.pyc`` files are written; True if the module's is present."""
    if target.module is None:
        return True
    code = (
        f"import importlib.util, os, {target.module} as m\n"
        "f = getattr(m, '__file__', None)\n"
        "print(bool(f) and os.path.exists(importlib.util.cache_from_source(f)))"
    )
    return run(python("-c", code)).stdout.strip() == "True"


def sample(target: Target) -> None:
    done = run(python("-c", child_code(target.module)))
    target.import_s.append(float(done.stdout.strip()))
    target.wall_s.append(done.seconds)


def after_startup(stderr: str) -> list[tuple[str, int, int]]:
    """(module, self µs, cumulative µs) of the imports made after ``site`` (the program's)."""
    rows: list[tuple[str, int, int]] = []
    for line in stderr.splitlines():
        m = IMPORTTIME_LINE.match(line)
        if not m:
            continue
        if m.group(4) == "site" and len(m.group(3)) <= 1:
            rows = []  # everything so far was interpreter start-up
        else:
            rows.append((m.group(4), int(m.group(1)), int(m.group(2))))
    return rows


def importtime_breakdown(module: str, runs: int) -> list[tuple[str, float, float]]:
    """``-X importtime`` of ``module``: (module, median self ms, median cumulative ms)."""
    self_us: dict[str, list[int]] = defaultdict(list)
    cum_us: dict[str, list[int]] = defaultdict(list)
    for _ in range(runs):
        stderr = run(python("-X", "importtime", "-c", f"import {module}")).stderr
        for name, self_time, cumulative in after_startup(stderr):
            self_us[name].append(self_time)
            cum_us[name].append(cumulative)
    rows = [
        (
            name,
            Stats.of(self_us[name]).median / 1e3,
            Stats.of(cum_us[name]).median / 1e3,
        )
        for name in self_us
    ]
    return sorted(rows, key=lambda r: r[1], reverse=True)


def targets_for(versions: Sequence[str], peers: Sequence[str]) -> list[Target]:
    targets = [
        Target("python -I, no import", None, "context"),
        Target("msgspec", "msgspec", "context"),
    ]
    targets += [Target(ours_module(v), ours_module(v), "ours", v) for v in versions]
    targets += [Target(p, p, "peer") for p in peers]
    return targets


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from mcpgen.generated import VERSIONS

    versions = list(VERSIONS) if args.all_versions else [NEWEST]
    peers = [p for p in SDK_PEERS if p not in args.skip]
    targets = targets_for(versions, peers)

    started_load = load()
    progress("warming .pyc caches (one untimed import per target)")
    cached = {t.label: warm(t) for t in targets}
    for i in range(args.runs):
        progress(f"round {i + 1}/{args.runs}")
        order = targets if i % 2 == 0 else targets[::-1]
        for t in order:
            sample(t)

    newest = next(t for t in targets if t.version == NEWEST)
    stats = {t.label: Stats.of(t.import_s) for t in targets}
    walls = {t.label: Stats.of(t.wall_s) for t in targets}

    heading(
        f"import cost in a fresh interpreter (python -I), median of {args.runs} interleaved runs"
    )
    note(".pyc caches warmed first by one untimed import per target; ms = time around `import`")
    rows: list[list[object]] = []
    for t in targets:
        s, w = stats[t.label], walls[t.label]
        role = {"ours": "mcpgen", "peer": "SDK", "context": "context"}[t.role]
        rows.append(
            [
                t.label,
                role,
                s.median * 1e3,
                s.low * 1e3,
                s.high * 1e3,
                w.median * 1e3,
                "yes" if cached[t.label] else "NO",
            ]
        )
    print(
        table(
            ["target", "kind", "import ms", "min", "max", "process wall ms", "pyc"],
            rows,
        )
    )

    ours_s = stats[newest.label].median
    heading("ratios (ours / peer, same run)")
    ratios: dict[str, float] = {}
    for p in peers:
        ratios[p] = round(ours_s / stats[p].median, 4)
        note(f"{newest.label} / {p}: {ratio(ours_s, stats[p].median)}")
    ok = ours_s * 1e3 < GOAL_MS
    note(f"goal: ours < {GOAL_MS:.0f} ms → {ours_s * 1e3:.1f} ms, {verdict(ok)}")
    load_average = load_note(started_load)

    breakdown: list[tuple[str, float, float]] = []
    if args.importtime_runs:
        breakdown = importtime_breakdown(newest.label, args.importtime_runs)
        heading(f"where ours goes: -X importtime, median of {args.importtime_runs}, top self time")
        note("(-X importtime adds its own overhead; use it for shares, not totals)")
        print(
            table(
                ["module", "self ms", "cumulative ms"],
                [list(r) for r in breakdown[: args.top]],
            )
        )
        cumulative = {name: c for name, _, c in breakdown}
        total, lib = cumulative.get(newest.label, 0.0), cumulative.get("msgspec", 0.0)
        if total:
            note(f"msgspec's share of ours: {lib:.1f} of {total:.1f} ms ({lib / total:.0%})")

    return emit(
        NAME,
        {
            "runs": args.runs,
            "pyc_warm": cached,
            "import": {label: s.ms() for label, s in stats.items()},
            "process_wall": {label: w.ms() for label, w in walls.items()},
            "ours": newest.label,
            "ratio_ours_over": ratios,
            "goal_ms": GOAL_MS,
            "goal_met": ok,
            "load_average": load_average,
            "importtime_top": [
                {"module": n, "self_ms": round(s, 2), "cumulative_ms": round(c, 2)}
                for n, s, c in breakdown[: args.top]
            ],
            "all_versions": {t.version: stats[t.label].ms() for t in targets if t.role == "ours"},
        },
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench import_time", description=DESCRIPTION)
    p.add_argument("--runs", type=int, default=15, help="samples per target (default 15)")
    p.add_argument(
        "--all-versions",
        action="store_true",
        help="every generated version, not just the newest",
    )
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=SDK_PEERS,
        help="leave out an SDK peer (repeatable)",
    )
    p.add_argument(
        "--importtime-runs",
        type=int,
        default=5,
        help="-X importtime runs for the breakdown (0: none)",
    )
    p.add_argument("--top", type=int, default=8, help="rows of the breakdown")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return measure(parser().parse_args(argv))


if __name__ == "__main__":
    main()
