"""Reading a profiled benchmark server's cProfile dump the same way in every benchmark:
own time grouped by module, then by family, per unit of work, and the top functions."""

from __future__ import annotations

import io
import pstats
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._util import heading, note, table

Raw = dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
"""pstats' own table: (file, line, function) → (calls, primitive calls, own s, cum s, callers)."""

IDLE = "waiting in epoll (idle)"


def raw_stats(path: Path) -> Raw:
    stats: Raw = getattr(pstats.Stats(str(path)), "stats")
    return stats


def calls_to(raw: Raw, func: str, file_suffix: str = "") -> int:
    """How often ``func`` (as pstats names it) in a file ending with ``file_suffix`` ran."""
    return sum(v[0] for (f, _, name), v in raw.items() if name == func and f.endswith(file_suffix))


def top_functions(path: Path, top: int, key: str, title: str) -> list[str]:
    """Print pstats' table of the ``top`` functions by ``key`` under ``title``; return its rows."""
    buffer = io.StringIO()
    pstats.Stats(str(path), stream=buffer).strip_dirs().sort_stats(key).print_stats(top)
    body = buffer.getvalue().split("\n")
    start = next(i for i, line in enumerate(body) if line.lstrip().startswith("ncalls"))
    heading(title)
    print("\n".join(body[start:]).rstrip())
    return [line.strip() for line in body[start + 1 :] if line.strip()]


def report(
    path: Path,
    n: int,
    unit: str,
    top: int,
    title: str,
    category: Callable[[str, str], str],
    family: Callable[[str], str],
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """Print the profile of ``n`` units of work (a ``unit``: "call", "request"); return its
    figures. ``category`` names a (file, function)'s group (``IDLE`` for the poll);
    ``family`` folds groups into a few families."""
    by_category: dict[str, float] = defaultdict(float)
    for (filename, _, func), (_, _, tottime, _, _) in raw_stats(path).items():
        by_category[category(filename, func)] += tottime
    busy = sum(v for k, v in by_category.items() if k != IDLE)

    heading(title)
    note("own time by module (builtins by name), share of the busy (non-epoll) time")
    note(f"busy: {busy / n * 1e6:.1f} µs per {unit} (profiler overhead included)")
    for line in notes:
        note(line)
    ranked = sorted(by_category.items(), key=lambda kv: kv[1], reverse=True)
    print(
        table(
            ["where", "own ms", "share of busy", f"µs per {unit}"],
            [
                [
                    k,
                    f"{v * 1e3:.1f}",
                    "" if k == IDLE else f"{v / busy:.0%}",
                    f"{v / n * 1e6:.1f}",
                ]
                for k, v in ranked[:top]
            ],
        )
    )
    families: dict[str, float] = defaultdict(float)
    for k, v in by_category.items():
        if k != IDLE:
            families[family(k)] += v
    note(
        f"busy time by family, µs per {unit}: "
        + ", ".join(
            f"{f} {v / n * 1e6:.1f} ({v / busy:.0%})"
            for f, v in sorted(families.items(), key=lambda kv: kv[1], reverse=True)
        )
    )
    tops = {
        key: top_functions(path, top, key, f"ours under cProfile, top {top} by {key}")
        for key in ("tottime", "cumulative")
    }
    return {
        f"busy_us_per_{unit}": round(busy / n * 1e6, 1),
        "own_ms": {k: round(v * 1e3, 2) for k, v in ranked[:top]},
        f"busy_us_per_{unit}_by_family": {f: round(v / n * 1e6, 2) for f, v in families.items()},
        "top_tottime": tops["tottime"],
        "top_cumulative": tops["cumulative"],
    }
