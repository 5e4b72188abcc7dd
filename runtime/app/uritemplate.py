"""RFC 6570 URI Templates for MCP resource templates: expansion, and matching back.

::

    t = UriTemplate("weather://{city}/current{?units}")
    t.expand({"city": "Zürich", "units": "metric"})  # 'weather://Z%C3%BCrich/current?units=metric'
    t.match("weather://Z%C3%BCrich/current?units=metric")  # {'city': 'Zürich', 'units': 'metric'}

Expansion is RFC 6570 to the letter, all four levels. Matching is its inverse, which RFC
6570 leaves undefined because it is ambiguous in general (``{x}{y}``). Its rules:

* Literal text must appear exactly, as written in the template or percent-encoded.
* Expressions are matched left to right, each once and never revisited: each is an
  atomic group of the one regex compiled per template, so no URI can make the engine
  backtrack, and work is linear in the URI's length.
* ``{x}`` takes one or more characters other than ``/ ? #`` and the first character of
  what may follow (the next literal, or the operator of a next optional expression):
  ``file:///{path}`` matches ``file:///a%2Fb`` (path ``a/b``), not ``file:///a/b``, and
  ``{name}.txt`` matches ``a.txt``, not ``a.b.txt``.
* ``{+x}`` and ``{#x}`` may take ``/`` and any reserved character, but not ``?`` (``#``)
  when the template writes one later. Followed by literal text, they extend to its next
  occurrence (``{+path}/here``), or to the end when that literal ends the template
  (``file:///{+path}.txt`` matches ``file:///v1.2/a.txt``); and so do ``{/x}``, ``{.x}``,
  ``{;x}`` and ``{?x}`` when their expansion may contain the literal's first character
  (``{/var,x}/here``). Otherwise they end where what follows can begin.
* ``{.x}`` takes labels, ``{/x}`` path segments, ``{x,y}`` comma-separated values: one
  per variable, in order (undefined ones are the trailing ones); an exploded variable
  takes all it can while leaving one to each later variable. Where a raw comma can be
  part of a value (``{x}``, ``{+x}``, ``{#x}``), the last variable takes what is left.
* ``{;x}``, ``{?x,y}`` and ``{&x}`` read parameters in any order, each optional, and ignore
  unknown ones; side by side (``{?x}{&y}``, ``{;x}{;y}``) they are read as one. A
  non-exploded variable given twice is no match.
* The template fixes each variable's type: an exploded variable (``{/id*}``, ``{?tag*}``)
  yields a ``list[str]``, any other a ``str`` (``{list}`` of ``a,b`` is the string
  ``"a,b"``), so a handler never receives a type its template did not declare. Exploded
  dicts (``{?keys*}``) expand but are not read back: their keys are unknown parameters.
* ``{x:3}`` matches at most 3 characters. Values are percent-decoded (UTF-8); a URI with a
  malformed escape (``%zz``, a lone ``%C3``) is no match, never a guess. Characters a
  client left unencoded (``notes://a b``) are passed through; ``+`` is a plus sign.
* ``{x}`` and ``{+x}`` side by side (``{x}{y}``) have no boundary: the first takes all,
  and the match fails.

So ``match(expand(v))`` is ``v`` (less undefined variables, prefixes applied) whenever
each variable has its declared type; no value's expansion holds what ends its expression
(the first character of the literal after ``{x}``, the literal after ``{+x}`` or
``{/x}``, ``.`` in ``{.x}``, ``,`` in a multi-variable ``{+x,y}``, ``?`` in ``{+x}``
before a ``{?y}``); the undefined variables of ``{x,y}``, ``{/x,y}`` and ``{.x,y}`` are
trailing; an exploded one that is not last has the later ones defined; a ``{x}`` or
``{+x}`` expansion is not empty (``file:///`` has no path); and a ``{?x}{&y}`` after a
value has an ``x`` (else the query begins with ``&``, which ends no value).
``tests/app/test_uritemplate.py`` checks this over generated templates and values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

from .uritemplate_syntax import Expression, Literal, Part, VarSpec, encode, parse, truncate

__all__ = ["UriTemplate", "Value"]

#: A variable's value: a string, a list, an associative array, or undefined (None).
Value = str | Sequence[str] | Mapping[str, str] | None


class UriTemplate:
    """An RFC 6570 URI template, parsed and compiled once; ``ValueError`` if malformed."""

    __slots__ = ("template", "variables", "exploded", "_parts", "_pattern", "_regions")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = parse(template)
        #: The names of the template's variables, in order of appearance.
        self.variables: tuple[str, ...] = tuple(
            spec.name for part in self._parts if isinstance(part, Expression) for spec in part.specs
        )
        #: The variables that match as lists (``{/path*}``), the others as strings.
        self.exploded: frozenset[str] = frozenset(
            spec.name
            for part in self._parts
            if isinstance(part, Expression)
            for spec in part.specs
            if spec.explode
        )
        self._pattern, self._regions = _compile(self._parts)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def expand(self, values: Mapping[str, Value]) -> str:
        """The URI for ``values``; missing and None variables are undefined (RFC 6570 2.3)."""
        return "".join(
            part.expanded if isinstance(part, Literal) else _expand(part, values)
            for part in self._parts
        )

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables of ``uri``, or None when this template does not produce it.

        Only defined variables are in the result; see the module docstring for the rules.
        """
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        variables: dict[str, str | list[str]] = {}
        for region in self._regions:
            if not region.read(found.group(region.group), variables):
                return None
        return variables


def _expand(expression: Expression, values: Mapping[str, Value]) -> str:
    """One expression's expansion: RFC 6570 appendix A."""
    op = expression.op
    pieces: list[str] = []
    for spec in expression.specs:
        value = values.get(spec.name)
        if value is None:
            continue
        if isinstance(value, str):
            if spec.prefix is not None:
                value = truncate(value, spec.prefix, op.allow_reserved)
            text = encode(value, op.allow_reserved)
            pieces.append(_named(spec.name, text, op.ifemp) if op.named else text)
            continue
        if spec.prefix is not None:
            raise ValueError(f"prefix modifier {{{spec.name}:{spec.prefix}}} on a composite value")
        pairs: list[tuple[str, str | None]]
        if isinstance(value, Mapping):
            pairs = [
                (encode(k, op.allow_reserved), encode(v, op.allow_reserved))
                for k, v in value.items()
            ]
        # Callers are not all type-checked: say what is wrong with any other value.
        elif isinstance(value, Sequence):  # pyright: ignore[reportUnnecessaryIsInstance]
            pairs = [(encode(item, op.allow_reserved), None) for item in value]
        else:
            raise TypeError(f"variable {spec.name!r}: {type(value).__name__} is not a value")
        if not pairs:
            continue  # an empty list or dict is undefined (RFC 6570 2.3)
        if not spec.explode:
            text = ",".join(k if v is None else f"{k},{v}" for k, v in pairs)
            pieces.append(_named(spec.name, text, op.ifemp) if op.named else text)
        elif op.named:
            pieces.extend(
                _named(spec.name, k, op.ifemp) if v is None else _named(k, v, op.ifemp)
                for k, v in pairs
            )
        else:
            pieces.extend(k if v is None else f"{k}={v}" for k, v in pairs)
    if not pieces:
        return ""
    return op.first + op.sep.join(pieces)


def _named(name: str, text: str, ifemp: str) -> str:
    return f"{name}={text}" if text else name + ifemp


# --- Matching -------------------------------------------------------------------------------

#: Characters a region never takes, by operator: they end it (RFC 3986 delimiters).
_BASE_STOPS = {"": "/?#", "+": "", "#": "", ".": "/?#", "/": "?#", ";": "/?#", "?": "#"}
_MALFORMED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _decode(text: str) -> str | None:
    """``text`` percent-decoded as UTF-8, or None for a malformed escape or invalid UTF-8."""
    if "%" not in text:
        return text
    if _MALFORMED_ESCAPE.search(text):
        return None
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeError:  # invalid UTF-8 bytes, or a lone surrogate in the URI itself
        return None


@dataclass
class _Region:
    """The text one expression (or one query: ``{?x}{&y}``) produced: one regex group."""

    kind: str  # the operator's character, "?" for any query
    specs: tuple[VarSpec, ...]
    prefixes: str  # the characters it can begin with ("" for {x} and {+x})
    first: str  # its first expression's prefix: the one that ends what comes before
    seps: str  # the characters between its parameters (named kinds)
    group: str = ""  # the name of its regex group
    by_name: dict[str, VarSpec] = field(default_factory=dict[str, VarSpec])

    def read(self, text: str, out: dict[str, str | list[str]]) -> bool:
        """Put the variables of ``text`` into ``out``; False when they cannot be read."""
        if self.kind in (";", "?"):
            return self._read_named(text, out)
        return self._read_positional(text, out)

    def _read_positional(self, text: str, out: dict[str, str | list[str]]) -> bool:
        if self.prefixes:
            if not text:
                return True  # every variable undefined
            text = text[1:]
        sep = self.kind if self.kind in (".", "/") else ","
        tokens = text.split(sep)
        # Where a raw "," can be part of a value ({x}, {+x}, {#x}), the last variable
        # takes whatever is left; "." and "/" always separate labels and segments.
        absorb = sep == ","
        last = len(self.specs) - 1
        i = 0
        for j, spec in enumerate(self.specs):
            if i == len(tokens):
                break
            if spec.explode:
                # As many as can be taken while each later variable still gets one.
                take = max(1, len(tokens) - i - (last - j))
                items = [_decode(token) for token in tokens[i : i + take]]
                if None in items:
                    return False
                out[spec.name] = [item for item in items if item is not None]
            else:
                take = len(tokens) - i if absorb and j == last else 1
                value = _decode(sep.join(tokens[i : i + take]))
                if value is None or (spec.prefix is not None and len(value) > spec.prefix):
                    return False
                out[spec.name] = value
            i += take
        return i == len(tokens)

    def _read_named(self, text: str, out: dict[str, str | list[str]]) -> bool:
        if not text:
            return True
        lists: dict[str, list[str]] = {}
        params = text[1:].split(self.seps) if len(self.seps) == 1 else re.split("[&?]", text[1:])
        for param in params:
            name, _, raw = param.partition("=")
            spec = self.by_name.get(name)
            if spec is None:
                continue  # an unknown parameter
            value = _decode(raw)
            if value is None:
                return False
            if spec.explode:
                lists.setdefault(name, []).append(value)
            elif name in out or (spec.prefix is not None and len(value) > spec.prefix):
                return False
            else:
                out[name] = value
        out.update(lists)
        return True


def _class(excluded: str) -> str:
    """A character class of every character but ``excluded``."""
    if not excluded:
        return r"[\s\S]"
    return "[^" + "".join(re.escape(c) for c in sorted(set(excluded))) + "]"


def _atomic(body: str, group: str) -> str:
    """``body`` as an atomic group (capture ``group``): a lookahead finds its match, and
    the backreference consumes it, so nothing later can make the engine retry it. Python
    3.10 has no ``(?>...)``; this is its classic equivalent. (Named: ``\\100`` would be
    an octal escape, not the hundredth group.)"""
    return f"(?=(?P<{group}>{body}))(?P={group})"


def _literal_pattern(literal: Literal) -> str:
    if literal.raw == literal.expanded:
        return re.escape(literal.raw)
    # The longer (expanded) form first: with an atomic group, the first that matches wins.
    return f"(?:{re.escape(literal.expanded)}|{re.escape(literal.raw)})"


def _regions(parts: tuple[Part, ...]) -> list[Literal | _Region]:
    """The parts as regex units. Side by side, named expressions of one kind (``{;x}{;y}``,
    ``{?x}{&y}``) are one region, read as a whole: each may be absent, so where one ends
    cannot be told, and needs not be since parameters are read by name."""
    units: list[Literal | _Region] = []
    for part in parts:
        if isinstance(part, Literal):
            units.append(part)
            continue
        kind = "?" if part.op.char in ("?", "&") else part.op.char
        previous = units[-1] if units else None
        if kind in (";", "?") and isinstance(previous, _Region) and previous.kind == kind:
            previous.specs += part.specs
            previous.prefixes = "".join(sorted(set(previous.prefixes + part.op.first)))
            previous.seps = "".join(sorted(set(previous.seps + part.op.first)))
            continue
        units.append(_Region(kind, part.specs, part.op.first, part.op.first, part.op.sep))
    return units


def _compile(parts: tuple[Part, ...]) -> tuple[re.Pattern[str], tuple[_Region, ...]]:
    """One regex for the whole template, each region an atomic group; and the regions.

    Built from the end, so that what may follow each unit is known when it is reached:
    ``stops``, the characters that can begin it (an optional expression may be empty, so
    what follows it counts too; ``{x}`` and ``{+x}`` may begin with anything, so nothing
    after them counts; of a query ``{?x}{&y}`` only ``?`` counts: ``&`` does not end
    ``{+p}`` in ``{+p}{?x}{&y}``), the literal right after it (and whether it ends the
    template), and whether the template writes a ``?`` or ``#`` later.
    """
    units = _regions(parts)
    pieces: list[str] = []
    stops = later = ""
    following: tuple[Literal, str] | None = None
    for index in range(len(units) - 1, -1, -1):
        unit = units[index]
        if isinstance(unit, Literal):
            body = _literal_pattern(unit)
            pieces.append(body if unit.raw == unit.expanded else _atomic(body, f"l{index}"))
            stops = unit.raw[0] + unit.expanded[0]
            following = (unit, body + (r"\Z" if index == len(units) - 1 else ""))
            later = "".join(c for c in "?#" if c in later or c in unit.raw)
            continue
        unit.group = f"r{index}"
        pieces.append(_atomic(_region_pattern(unit, stops, following, later), unit.group))
        stops = "".join(sorted(set(unit.first + stops))) if unit.prefixes else ""
        later = "".join(c for c in "?#" if c in later or c in unit.prefixes)
        following = None
    regions = tuple(unit for unit in units if isinstance(unit, _Region))
    for region in regions:
        region.by_name = {spec.name: spec for spec in region.specs}
    return re.compile("".join(reversed(pieces))), regions


def _region_pattern(
    region: _Region, stops: str, following: tuple[Literal, str] | None, later: str
) -> str:
    # A reserved value stops short of a query or fragment the template writes later.
    excluded = later if region.kind in ("+", "#") else _BASE_STOPS[region.kind]
    quantifier = "+" if region.kind in ("", "+") else "*"
    if following is not None and _holds(region.kind, following[0]):
        # Its expansion may hold the literal's first character ("/" in {+path}/here,
        # {/var,x}/here): take up to the literal's next occurrence (lazily, so the scan
        # ends there), or to the end if the literal ends the template ({+path}.txt).
        inner = f"{_class(excluded)}{quantifier}?(?={following[1]})"
    else:
        inner = _class(excluded + stops) + quantifier
    if not region.prefixes:
        return inner
    return f"(?:[{''.join(re.escape(c) for c in region.prefixes)}]{inner})?"


_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%"
#: What an expansion by each prefixed operator is written with: unreserved characters,
#: escapes, and the operator's separators. A literal starting with anything else ends it.
_WRITTEN = {".": _UNRESERVED + ",=", "/": _UNRESERVED + ",=/", ";": _UNRESERVED + ",=;"}
_WRITTEN["?"] = _UNRESERVED + ",=&"


def _holds(kind: str, literal: Literal) -> bool:
    """Whether an expansion of ``kind`` can hold the first character of ``literal``.
    Reserved expansions hold nearly anything; ``{x}`` is said to end at it regardless."""
    if kind in ("+", "#"):
        return True
    written = _WRITTEN.get(kind, "")
    return literal.raw[0] in written or literal.expanded[0] in written
