"""RFC 6570 URI Template syntax: parsing a template, and the percent-encoding it expands with.

:mod:`runtime.app.uritemplate` builds expansion and matching on what :func:`parse` returns: a
tuple of :class:`Literal` and :class:`Expression` parts, read once per template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

__all__ = [
    "OPERATORS",
    "Expression",
    "Literal",
    "Operator",
    "Part",
    "VarSpec",
    "encode",
    "parse",
    "truncate",
]

#: RFC 3986 reserved characters: gen-delims and sub-delims.
RESERVED = ":/?#[]@!$&'()*+,;="
#: Operators RFC 6570 sets aside for future extensions (section 2.2): an error today.
_FUTURE_OPERATORS = "=,!@|"
_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
_MAX_LENGTH = re.compile(r"[1-9][0-9]{0,3}")
_PCT_TRIPLET = re.compile(r"(%[0-9A-Fa-f]{2})")
#: One character of a value for the prefix modifier: in reserved expansion a
#: pct-encoded triplet counts as one, so a prefix never splits it (RFC 6570 2.4.1).
_RESERVED_CHAR = re.compile(r"%[0-9A-Fa-f]{2}|.", re.DOTALL)


@dataclass(frozen=True)
class Operator:
    """One row of RFC 6570's appendix A table: how an operator's expansion is written."""

    char: str
    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


OPERATORS: dict[str, Operator] = {
    op.char: op
    for op in (
        Operator("", "", ",", False, "", False),
        Operator("+", "", ",", False, "", True),
        Operator("#", "#", ",", False, "", True),
        Operator(".", ".", ".", False, "", False),
        Operator("/", "/", "/", False, "", False),
        Operator(";", ";", ";", True, "", False),
        Operator("?", "?", "&", True, "=", False),
        Operator("&", "&", "&", True, "=", False),
    )
}


@dataclass(frozen=True)
class VarSpec:
    """A variable of an expression: ``name``, ``name:prefix`` or ``name*``."""

    name: str
    prefix: int | None = None
    explode: bool = False


@dataclass(frozen=True)
class Expression:
    """``{op var, var, ...}``: ``position`` is where its ``{`` stands in the template."""

    op: Operator
    specs: tuple[VarSpec, ...]
    position: int


@dataclass(frozen=True)
class Literal:
    """Template text outside expressions, as written and as expanded (percent-encoded)."""

    raw: str
    expanded: str


Part = Literal | Expression


def encode(value: str, allow_reserved: bool) -> str:
    """Percent-encode ``value`` (UTF-8): unreserved characters stay, and with
    ``allow_reserved`` so do reserved characters and pct-encoded triplets (``+``, ``#``)."""
    if not allow_reserved:
        return quote(value, safe="")
    pieces = _PCT_TRIPLET.split(value)
    # split() with a capturing group puts the triplets at the odd indexes: kept as they are.
    return "".join(p if i % 2 else quote(p, safe=RESERVED) for i, p in enumerate(pieces))


def truncate(value: str, length: int, allow_reserved: bool) -> str:
    """The first ``length`` characters of ``value``: the prefix modifier ``{var:length}``."""
    if not allow_reserved or "%" not in value:
        return value[:length]
    return "".join(_RESERVED_CHAR.findall(value)[:length])


def parse(template: str) -> tuple[Part, ...]:
    """The parts of ``template``; ``ValueError`` naming the position of the first error."""
    parts: list[Part] = []
    names: set[str] = set()
    start = 0
    i = 0
    while i < len(template):
        char = template[i]
        if char == "}":
            raise _error(template, i, "'}' without an opening '{'")
        if char != "{":
            i += 1
            continue
        close = template.find("}", i + 1)
        reopen = template.find("{", i + 1, None if close < 0 else close)
        if close < 0 or reopen >= 0:
            raise _error(template, i, "unclosed '{'")
        if i > start:
            raw = template[start:i]
            parts.append(Literal(raw, encode(raw, allow_reserved=True)))
        expression = _parse_expression(template, i, close)
        for spec in expression.specs:
            if spec.name in names:
                raise _error(template, i, f"variable {spec.name!r} appears twice")
            names.add(spec.name)
        parts.append(expression)
        i = start = close + 1
    if start < len(template):
        raw = template[start:]
        parts.append(Literal(raw, encode(raw, allow_reserved=True)))
    return tuple(parts)


def _parse_expression(template: str, opening: int, close: int) -> Expression:
    """The expression between ``template[opening]`` (``{``) and ``template[close]`` (``}``)."""
    i = opening + 1
    if i == close:
        raise _error(template, opening, "empty expression '{}'")
    op = OPERATORS[""]
    char = template[i]
    if char in OPERATORS:
        op = OPERATORS[char]
        i += 1
    elif char in _FUTURE_OPERATORS:
        raise _error(template, i, f"operator {char!r} is reserved for future extensions")
    elif not _VARNAME.match(template, i, close):
        raise _error(template, i, f"{char!r} is neither an operator nor a variable name")
    specs: list[VarSpec] = []
    while True:
        name = _VARNAME.match(template, i, close)
        if name is None:
            found = repr(template[i]) if i < close else "nothing"
            raise _error(template, i, f"expected a variable name, found {found}")
        i = name.end()
        spec = VarSpec(name.group())
        if i < close and template[i] == "*":
            spec = VarSpec(spec.name, explode=True)
            i += 1
        elif i < close and template[i] == ":":
            length = _MAX_LENGTH.match(template, i + 1, close)
            if length is None:
                raise _error(template, i + 1, "a prefix length must be a number from 1 to 9999")
            spec = VarSpec(spec.name, prefix=int(length.group()))
            i = length.end()
        specs.append(spec)
        if i == close:
            return Expression(op, tuple(specs), opening)
        if template[i] != ",":
            raise _error(template, i, f"unexpected {template[i]!r} in an expression")
        i += 1


def _error(template: str, position: int, problem: str) -> ValueError:
    return ValueError(f"malformed URI template {template!r} at position {position}: {problem}")
