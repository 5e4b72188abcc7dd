"""Upstream examples decoded and round-tripped by datamodel-codegen's msgspec output and ours."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from . import BENCHMARKS
from .harness import datamodel_codegen, emit, heading, note, progress, table

NAME = "dcg_baseline"
UNDECODABLE = "msgspec cannot decode the union"
"""datamodel-codegen's own warning that msgspec will reject a union it wrote."""
CLAIMED = {"decoded": 64, "round_tripped": 55}
"""The project's recorded figures for datamodel-codegen on 2026-07-28 (per example file)."""


@dataclass
class Score:
    """Outcome over a set of examples; failures grouped by a short reason."""

    examples: int = 0
    decoded: int = 0
    round_tripped: int = 0
    types: set[str] = field(default_factory=set)
    failed_types: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def fail(self, example: Path, reason: str) -> None:
        self.failed_types.add(example.parent.name)
        self.reasons[reason] += 1
        self.failures.append(f"{example.parent.name}/{example.name}: {reason}")

    def record(self) -> dict[str, Any]:
        figures = {"examples": self.examples, "decoded": self.decoded}
        figures |= {"round_tripped": self.round_tripped, "types": len(self.types)}
        ok = len(self.types - self.failed_types)
        return figures | {"types_fully_round_tripped": ok, "failure_reasons": dict(self.reasons)}


def reason_of(exc: Exception) -> str:
    """A short, groupable reason: the message without its JSON path and specifics."""
    text = str(exc).split(" - at `")[0]
    if "ForwardRef(" in text:
        text = "unsupported forward reference (recursive alias)"
    elif "must be tagged" in text:
        text = "untagged union of several Structs"
    return f"{type(exc).__name__}: {text[:70]}"


def score(
    examples: Sequence[Path],
    lookup: Callable[[str], Any],
    decode: Callable[[bytes, Any], Any],
    encode: Callable[[Any], bytes],
) -> Score:
    result = Score()
    for path in examples:
        result.examples += 1
        result.types.add(path.parent.name)
        if (tp := lookup(path.parent.name)) is None:
            result.fail(path, "no type of that name")
            continue
        data = path.read_bytes()
        try:
            value = decode(data, tp)
        except (msgspec.DecodeError, TypeError, ValueError) as exc:
            result.fail(path, "decode " + reason_of(exc))
            continue
        result.decoded += 1
        try:
            again = json.loads(encode(value))
        except (msgspec.EncodeError, TypeError, ValueError) as exc:
            result.fail(path, "encode " + reason_of(exc))
            continue
        if again == json.loads(data):
            result.round_tripped += 1
        else:
            result.fail(path, "re-encoded JSON differs from the original")
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from mcpgen.generated import VERSIONS
    from mcpgen.generator.pins import module_name, schema_dir

    examples = sorted((schema_dir() / args.version / "examples").rglob("*.json"))
    if not examples:
        raise SystemExit(f"no upstream examples for {args.version} (have: 2026-07-28, draft)")
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
        out = Path(tmp) / f"dcg_{module_name(args.version)}.py"
        progress(f"datamodel-codegen → {out.name}")
        warnings = datamodel_codegen(schema_dir() / args.version / "schema.json", out).stderr
        sys.path.insert(0, tmp)  # imported by name, so that msgspec resolves its annotations
        module = importlib.import_module(out.stem)
        sys.path.remove(tmp)

    def decode(data: bytes, tp: Any) -> Any:
        return msgspec.json.decode(data, type=tp)

    dcg = score(examples, vars(module).get, decode, msgspec.json.encode)
    types = importlib.import_module(f"mcpgen.generated.{VERSIONS[args.version]}.types")
    ours = score(examples, types.DEFINITIONS.get, types.decode, types.encode)
    heading(f"upstream examples of {args.version}: {len(examples)} files, {len(ours.types)} types")
    rows = [
        [label, *(f"{n}/{s.examples}" for n in (s.decoded, s.round_tripped))]
        + [f"{len(s.types - s.failed_types)}/{len(s.types)}"]
        for label, s in (("datamodel-codegen (msgspec.Struct)", dcg), ("mcpgen", ours))
    ]
    print(table(["bindings", "decoded", "round-tripped", "types fully round-tripped"], rows))
    claimed = args.version == "2026-07-28"
    if claimed:
        same = dcg.decoded == CLAIMED["decoded"] and dcg.round_tripped == CLAIMED["round_tripped"]
        recorded = f"{CLAIMED['decoded']} decoded, {CLAIMED['round_tripped']} round-tripped"
        note(f"the project's recorded figures ({recorded}): {'confirmed' if same else 'DIFFERENT'}")
    undecodable = warnings.count(UNDECODABLE)
    note(f"datamodel-codegen itself warned that msgspec cannot decode {undecodable} of its unions")
    for label, s in (("datamodel-codegen", dcg), ("mcpgen", ours)):
        if s.reasons:
            heading(f"{label}: failures by reason (example files)")
            print(table(["reason", "files"], [[r, n] for r, n in s.reasons.most_common()]))
        for failure in s.failures if args.verbose else ():
            note(failure)
    figures = {"dcg": dcg.record() | {"undecodable_union_warnings": undecodable}}
    figures |= {"mcpgen": ours.record(), "claimed_dcg": CLAIMED if claimed else None}
    return emit(NAME, {"version": args.version} | figures)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--version", default="2026-07-28", help="one with examples (2026-07-28)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failing example")
    return measure(p.parse_args(argv))
