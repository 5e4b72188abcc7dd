"""Figures and failure classes of a fuzz run (``tests/support/fuzzing.py``).

A failure class is an oracle (:data:`KINDS`) and a signature: for a crash or a logged
traceback, the exception type and the innermost frame of ours (runtime, examples, generated
code); otherwise what was wrong. Each class keeps its smallest case, to reproduce it by.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from support.fuzzing import Case

KINDS = ("crash", "hang", "5xx", "bad answer", "traceback", "missing answer", "wrong code")


_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\S+)')
_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Iteration|Group))(?::|$)")


def traceback_signature(text: str) -> str:
    """``ExcType in file:function`` of the last traceback in ``text`` (innermost frame of
    ours: runtime, examples, generated; else the innermost)."""
    block = text[text.rfind("Traceback (most recent call last)") :]
    frames = _FRAME.findall(block)
    exc = next(
        (m.group(1) for line in reversed(block.splitlines()) if (m := _EXC.match(line))), "?"
    )
    ours = [f for f in frames if any(p in f[0] for p in ("/runtime/", "/examples/", "/generated/"))]
    where = (ours or frames or [("?", "?")])[-1]
    return f"{exc} in {'/'.join(where[0].split('/')[-2:])}:{where[1]}"


# -- the tally ---------------------------------------------------------------------------


@dataclass
class Failure:
    kind: str
    signature: str
    count: int
    case: Case
    detail: str


class Tally:
    """Counts per oracle and failure classes (kind + signature), each with its smallest case."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.cases = 0
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.counts: Counter[str] = Counter()
        #: What the cases drew (``result``, ``error -32602``, HTTP ``400 -32600``, ...).
        self.outcomes: Counter[str] = Counter()
        self.classes: dict[tuple[str, str], Failure] = {}
        self.notes: list[str] = []

    def fail(self, kind: str, signature: str, case: Case, detail: str) -> None:
        self.counts[kind] += 1
        known = self.classes.get((kind, signature))
        if known is None:
            self.classes[(kind, signature)] = Failure(kind, signature, 1, case, detail)
            return
        known.count += 1
        if case.size() < known.case.size():
            known.case, known.detail = case, detail

    def finish(self) -> Tally:
        self.seconds = time.perf_counter() - self.started
        return self

    @property
    def failures(self) -> int:
        return sum(self.counts[k] for k in KINDS)

    def summary(self) -> str:
        rate = self.cases / self.seconds if self.seconds else 0.0
        figures = ", ".join(
            f"{k}{'es' if k == 'crash' else '' if k == '5xx' else 's'} {self.counts[k]}"
            for k in KINDS
        )
        return f"{self.cases} cases in {self.seconds:.1f} s ({rate:.0f} cases/s): {figures}"

    def details(self, detail_limit: int = 600) -> str:
        drawn = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common(14))
        lines = [f"{self.transport}: {self.summary()}", *self.notes, f"answers drawn: {drawn}"]
        order = sorted(self.classes.values(), key=lambda f: (KINDS.index(f.kind), -f.count))
        for failure in order:
            lines.append(f"[{failure.kind}] {failure.signature}: {failure.count}x; smallest:")
            lines.append(failure.case.show())
            lines.append("  server: " + failure.detail[:detail_limit].replace("\n", "\n    "))
        return "\n".join(lines)
