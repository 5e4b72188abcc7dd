"""Reference numbers: how many upstream examples datamodel-codegen's msgspec output handles.

datamodel-codegen's msgspec output for one version (default 2026-07-28, generated here with
the same CLI line as ``generate_time``) is imported, and every upstream example
``schema/<v>/examples/<TypeName>/*.json`` is decoded into the same-named type with
``msgspec.json.decode`` and re-encoded with ``msgspec.json.encode``. An example round-trips
when the re-encoded JSON value equals the original. mcpgen's own bindings
(``mcpgen.generated.<v>.types``: ``decode``/``encode``/``DEFINITIONS``) run on the same
examples, in the same run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from . import BENCHMARKS, _dcg
from ._util import emit, heading, note, progress, table

NAME = "dcg_baseline"
DESCRIPTION = BENCHMARKS[NAME]
CLAIMED = {"decoded": 64, "round_tripped": 55}
"""The project's recorded figures for datamodel-codegen on 2026-07-28 (per example file)."""

Decode = Callable[[bytes, Any], Any]
Encode = Callable[[Any], bytes]


@dataclass
class Score:
    """Outcome over a set of examples; failures grouped by a short reason."""

    examples: int = 0
    decoded: int = 0
    round_tripped: int = 0
    types_total: set[str] = field(default_factory=set)
    types_failed: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def fail(self, example: str, type_name: str, reason: str) -> None:
        self.types_failed.add(type_name)
        self.reasons[reason] += 1
        self.failures.append((example, reason))

    def types_ok(self) -> int:
        return len(self.types_total - self.types_failed)


def examples_of(version: str) -> list[Path]:
    from mcpgen.generator.pins import schema_dir

    return sorted((schema_dir() / version / "examples").rglob("*.json"))


def reason_of(exc: Exception) -> str:
    """A short, groupable reason: the message without its JSON path and specifics."""
    text = str(exc).split(" - at `")[0]
    if "ForwardRef(" in text:
        return f"{type(exc).__name__}: unsupported forward reference (recursive alias)"
    if "must be tagged" in text:
        return f"{type(exc).__name__}: untagged union of several Structs"
    return f"{type(exc).__name__}: {text[:70]}"


def difference(original: Any, again: Any, path: str = "$") -> str | None:
    """The first place two JSON values differ (``$.a.b: dropped``), or None if equal."""
    if isinstance(original, dict) and isinstance(again, dict):
        for k in original:
            if k not in again:
                return f"{path}.{k}: dropped"
            found = difference(original[k], again[k], f"{path}.{k}")
            if found:
                return found
        extra = [k for k in again if k not in original]
        return f"{path}.{extra[0]}: added" if extra else None
    if isinstance(original, list) and isinstance(again, list) and len(original) == len(again):
        for i, (a, b) in enumerate(zip(original, again)):
            found = difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if original == again else f"{path}: changed"


def score(
    examples: Sequence[Path],
    lookup: Callable[[str], Any],
    decode: Decode,
    encode: Encode,
) -> Score:
    result = Score()
    for path in examples:
        type_name, label = path.parent.name, f"{path.parent.name}/{path.name}"
        result.examples += 1
        result.types_total.add(type_name)
        tp = lookup(type_name)
        if tp is None:
            result.fail(label, type_name, "no type of that name")
            continue
        data = path.read_bytes()
        try:
            value = decode(data, tp)
        except (msgspec.DecodeError, TypeError, ValueError) as exc:
            result.fail(label, type_name, "decode " + reason_of(exc))
            continue
        result.decoded += 1
        try:
            again = json.loads(encode(value))
        except (msgspec.EncodeError, TypeError, ValueError) as exc:
            result.fail(label, type_name, "encode " + reason_of(exc))
            continue
        where = difference(json.loads(data), again)
        if where is None:
            result.round_tripped += 1
        else:
            result.fail(
                f"{label} ({where})",
                type_name,
                "re-encoded JSON differs from the original",
            )
    return result


def dcg_score(version: str, examples: Sequence[Path], tmp: Path) -> tuple[Score, int]:
    """Score of datamodel-codegen's output, and how many unions it warned msgspec can't decode."""
    from mcpgen.generator.pins import module_name

    out = tmp / f"dcg_{module_name(version)}.py"
    progress(f"datamodel-codegen → {out.name}")
    warnings = _dcg.generate(version, out).stderr.count(_dcg.UNDECODABLE_WARNING)
    module = _dcg.load(out, f"bench_dcg_{module_name(version)}")

    def lookup(name: str) -> Any:
        return getattr(module, name, None)

    def decode(data: bytes, tp: Any) -> Any:
        return msgspec.json.decode(data, type=tp)

    return score(examples, lookup, decode, msgspec.json.encode), warnings


def mcpgen_score(version: str, examples: Sequence[Path]) -> Score:
    from mcpgen.generated import VERSIONS

    types = importlib.import_module(f"mcpgen.generated.{VERSIONS[version]}.types")
    return score(examples, types.DEFINITIONS.get, types.decode, types.encode)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    examples = examples_of(args.version)
    if not examples:
        raise SystemExit(f"no upstream examples for {args.version} (have: 2026-07-28, draft)")
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        dcg, warnings = dcg_score(args.version, examples, Path(tmp))
    ours = mcpgen_score(args.version, examples)

    n_types = len(ours.types_total)
    heading(f"upstream examples of {args.version}: {len(examples)} files, {n_types} types")
    print(
        table(
            ["bindings", "decoded", "round-tripped", "types fully round-tripped"],
            [
                [
                    "datamodel-codegen (msgspec.Struct)",
                    f"{dcg.decoded}/{dcg.examples}",
                    f"{dcg.round_tripped}/{dcg.examples}",
                    f"{dcg.types_ok()}/{n_types}",
                ],
                [
                    "mcpgen",
                    f"{ours.decoded}/{ours.examples}",
                    f"{ours.round_tripped}/{ours.examples}",
                    f"{ours.types_ok()}/{n_types}",
                ],
            ],
        )
    )
    if args.version == "2026-07-28":
        same = dcg.decoded == CLAIMED["decoded"] and dcg.round_tripped == CLAIMED["round_tripped"]
        note(
            f"project's recorded dcg figures: {CLAIMED['decoded']} decoded, {CLAIMED['round_tripped']} "
            f"round-tripped → {'confirmed' if same else 'DIFFERENT'}"
        )
    note(f"datamodel-codegen itself warned that msgspec cannot decode {warnings} of its unions")

    for label, s in (("datamodel-codegen", dcg), ("mcpgen", ours)):
        if s.reasons:
            heading(f"{label}: failures by reason (example files)")
            print(table(["reason", "files"], [[r, n] for r, n in s.reasons.most_common()]))
        if args.verbose:
            for example, reason in s.failures:
                note(f"{example}: {reason}")

    def record(s: Score) -> dict[str, Any]:
        return {
            "examples": s.examples,
            "decoded": s.decoded,
            "round_tripped": s.round_tripped,
            "types": len(s.types_total),
            "types_fully_round_tripped": s.types_ok(),
            "failure_reasons": dict(s.reasons),
        }

    return emit(
        NAME,
        {
            "version": args.version,
            "dcg": record(dcg) | {"undecodable_union_warnings": warnings},
            "mcpgen": record(ours),
            "claimed_dcg": CLAIMED if args.version == "2026-07-28" else None,
        },
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench dcg_baseline", description=DESCRIPTION)
    p.add_argument(
        "--version",
        default="2026-07-28",
        help="a version with upstream examples (default 2026-07-28)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="list every failing example")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return measure(parser().parse_args(argv))


if __name__ == "__main__":
    main()
