"""The long run of the fuzz suite (``tests/support/fuzzing.py``) against ``examples/everything``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import BENCHMARKS
from .harness import emit, load, load_note, note, table

# The fuzz engine lives with the tests, which import it from tests/ as ``support``.
TESTS = str(Path(__file__).resolve().parents[1] / "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from support.fuzz_report import KINDS, Tally  # noqa: E402
from support.fuzzing import run  # noqa: E402

TRANSPORTS = ("stdio", "http", "uvicorn", "websocket", "sse")


def main(argv: Sequence[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench fuzz", description=BENCHMARKS["fuzz"])
    p.add_argument("--cases", type=int, default=20_000, help="cases per transport (20,000)")
    transport = (
        "http: the ASGI app in process, then --uvicorn-cases over a real uvicorn; websocket"
        " and sse: the stdio cases over those transports of a real server"
    )
    p.add_argument("--transport", choices=[*TRANSPORTS, "all"], default="all", help=transport)
    p.add_argument("--seed", type=int, default=11)
    uvicorn_cases = "cases over a real uvicorn with --transport http or all (1,000)"
    p.add_argument("--uvicorn-cases", type=int, default=1_000, help=uvicorn_cases)
    p.add_argument("--budget", type=float, default=None, help="seconds per transport at most")
    args = p.parse_args(list(argv))
    start = load()
    chosen = {"all": TRANSPORTS, "http": ("http", "uvicorn")}.get(args.transport, (args.transport,))
    tallies: list[Tally] = []
    for transport in chosen:
        # real HTTP is slower: a smaller count unless it is the only transport asked for
        count = args.cases if transport == args.transport else args.uvicorn_cases
        count = args.cases if transport != "uvicorn" else count
        note(f"fuzzing {transport}: {count} cases, seed {args.seed}")
        tally = run(transport, count, args.seed, args.budget)
        print(tally.details(), flush=True)
        tallies.append(tally)
    rows = [[t.transport, t.cases, round(t.seconds, 1)] for t in tallies]
    for row, t in zip(rows, tallies):
        row += [round(t.cases / t.seconds if t.seconds else 0), *(t.counts[k] for k in KINDS)]
    print()
    print(table(["transport", "cases", "s", "cases/s", *KINDS], rows))
    failures = sum(t.failures for t in tallies)
    note(f"{failures} failures in {sum(t.cases for t in tallies)} cases")
    transports: dict[str, Any] = {}
    for t in tallies:
        classes = sorted(f"{f.kind}: {f.signature}" for f in t.classes.values())
        transports[t.transport] = {"cases": t.cases, "seconds": round(t.seconds, 2)}
        transports[t.transport] |= {k: t.counts[k] for k in KINDS} | {"classes": classes}
    result = {"seed": args.seed, "failures": failures, "transports": transports}
    return emit("fuzz", result | {"load": load_note(start)})
