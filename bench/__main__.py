"""``python -m bench [--list] [NAME [options]]``: list, run one, or run every benchmark."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import BENCHMARKS
from .harness import BenchError


def listing() -> str:
    width = max(len(n) for n in BENCHMARKS)
    return "\n".join(f"  {name.ljust(width)}  {what}" for name, what in BENCHMARKS.items())


def run_one(name: str, argv: Sequence[str]) -> None:
    module = importlib.import_module(f"{__package__}.{name}")
    print(f"\n##### {name}: {BENCHMARKS[name]}", flush=True)
    module.main(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", epilog="benchmarks:\n" + listing())
    p.description = "Run mcpgen's benchmarks (all of them without NAME); see docs/performance.md."
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.add_argument("name", nargs="?", help="one benchmark; options after it go to it")
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.list:
        print(listing())
        return 0
    if args.name is None:
        names = list(BENCHMARKS)
        print("running every benchmark:\n" + listing(), flush=True)
    else:
        name = args.name.replace("-", "_")
        if name not in BENCHMARKS:
            p.error(f"unknown benchmark {args.name!r}; have: {', '.join(BENCHMARKS)}")
        names = [name]
    try:
        for name in names:
            run_one(name, args.options if args.name else [])
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
