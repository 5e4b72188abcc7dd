"""Child-process body of ``generate_time``'s phase breakdown; prints one JSON object.

Runs mcpgen's pipeline functions one by one, the way ``pipeline.generate`` chains them, in a
fresh interpreter (so the imports are part of the cost, as in the CLI)::

    python -m bench._phases --out DIR [--version all] [--jobs 2] [--profile FILE]
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402 - the clock starts before anything else is imported
import cProfile  # noqa: E402
import json  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

PACKAGE = "benchgen"


def timed(
    phases: dict[str, float], name: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a function so the time spent inside it adds up under ``phases[name]``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def inner(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - t

        return inner

    return wrap


def pipeline(out: Path, version: str, jobs: int) -> dict[str, Any]:
    phases: dict[str, float] = {}
    per_version: dict[str, dict[str, float]] = {}

    t = time.perf_counter()
    from mcpgen.generator import emit
    from mcpgen.generator.fetch import read_schema
    from mcpgen.generator.pipeline import Inputs, build_ir, package_root, render_version

    phases["import generator"] = time.perf_counter() - t

    t = time.perf_counter()
    inputs = Inputs.load()
    versions = inputs.pins.select(version)
    phases["load pins/overrides/patches"] = time.perf_counter() - t

    rendered: dict[str, dict[str, str]] = {}
    for v in versions:
        t0 = time.perf_counter()
        data = read_schema(v, inputs.pins, inputs.schema_root)
        t1 = time.perf_counter()
        module = build_ir(v, inputs, data)
        t2 = time.perf_counter()
        rendered[v] = render_version(module, inputs)
        t3 = time.perf_counter()
        per_version[v] = {"read": t1 - t0, "ir": t2 - t1, "render": t3 - t2}
    for key, label in (
        ("read", "read schema (+sha256)"),
        ("ir", "schema → IR (+unions)"),
        ("render", "render (jinja2)"),
    ):
        phases[label] = sum(p[key] for p in per_version.values())

    sizes: dict[str, int] = {}
    original = emit.format_all

    def format_all(sources: dict[Path, str], jobs: int) -> dict[Path, str]:
        sizes["modules"] = len(sources)
        sizes["unique"] = len(set(sources.values()))
        sizes["chars"] = sum(len(s) for s in set(sources.values()))
        return timed(phases, "format (black)")(original)(sources, jobs)

    emit.format_all = format_all
    t = time.perf_counter()
    changed = emit.emit_package(package_root(PACKAGE, out), rendered, inputs.pins, False, jobs=jobs)
    phases["emit: index + write"] = time.perf_counter() - t - phases["format (black)"]
    emit.format_all = original
    return {
        "phases": phases,
        "per_version": per_version,
        "black_input": sizes,
        "files_written": len(changed),
        "jobs": jobs,
    }


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench._phases")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--version", default="all")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--profile", type=Path, help="write cProfile stats of the pipeline here")
    args = p.parse_args()
    if args.profile:
        profiler = cProfile.Profile()
        result = profiler.runcall(pipeline, args.out, args.version, args.jobs)
        profiler.dump_stats(str(args.profile))
    else:
        result = pipeline(args.out, args.version, args.jobs)
    result["total"] = time.perf_counter() - STARTED
    print(json.dumps(result))


if __name__ == "__main__":
    main()
