"""Unions msgspec cannot decode natively, decided at run time by a decision tree the
generator planned: by JSON kind, by a discriminator's value, by key presence, by trial.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import msgspec

from ._decoding import MISSING, UNDECLARED, dec_hook, depth, kind_of, missing_tag, nested, tag_of

#: The types of parsed JSON; anything else reaching the hook was decoded already.
_PARSED = frozenset({dict, list, str, int, float, bool, type(None)})


class UnionType(abc.ABC):
    """Stands, at run time, for a union msgspec cannot decode natively.

    Type checkers see the real union (the generated module defines the alias under
    ``TYPE_CHECKING``); msgspec sees this class, calls :func:`dec_hook`, and gets back an
    instance of one member (members are registered as virtual subclasses).
    """

    #: Decision tree: ``("pick", type, tag field or None)``, ``("kind", {kind: node})``,
    #: ``("value", key, {value: node}, default)``, ``("key", ((key, node), ...), default)``,
    #: ``("first", (node, ...))``.
    __strategy__: ClassVar[tuple[Any, ...]] = ()

    @classmethod
    def __mcpgen_decode__(cls, obj: Any) -> Any:
        if type(obj) not in _PARSED:  # decided already, keeping undeclared keys
            return obj
        return _run(cls.__strategy__, obj)


def register_union(marker: Any, members: tuple[type, ...], strategy: tuple[Any, ...]) -> None:
    """Attach ``strategy`` to a union marker and register its members' classes."""
    marker.__strategy__ = _tags_required(strategy)
    for member in members:
        marker.register(member)


def _tags_required(node: tuple[Any, ...]) -> tuple[Any, ...]:
    """``node`` with each pick naming the tag field of a tagged Struct (else None): msgspec
    decodes a tagged Struct asked for by itself from an object without its tag (and would
    write the tag on encode, a key the value did not have), but the schema requires it."""
    op = node[0]
    if op == "pick":
        return ("pick", node[1], tag_of(node[1]))
    if op == "kind":
        return ("kind", {k: _tags_required(n) for k, n in node[1].items()})
    if op == "value":
        default = None if node[3] is None else _tags_required(node[3])
        return ("value", node[1], {k: _tags_required(n) for k, n in node[2].items()}, default)
    if op == "key":
        default = None if node[2] is None else _tags_required(node[2])
        return ("key", tuple((k, _tags_required(n)) for k, n in node[1]), default)
    return ("first", tuple(_tags_required(n) for n in node[1]))


def _run(node: tuple[Any, ...], obj: Any) -> Any:
    while True:
        op = node[0]
        if op == "pick":
            tag = node[2]
            if tag is not None and type(obj) is dict and tag not in obj:
                raise ValueError(missing_tag(tag))
            return nested(msgspec.convert, obj, node[1], dec_hook=dec_hook)
        if op == "kind":
            kind = kind_of(obj)
            nxt = node[1].get(kind)
            if nxt is None:
                expected = " | ".join(node[1])
                raise ValueError(f"Expected `{expected}`, got `{kind}`")
            node = nxt
            continue
        if op in ("value", "key") and type(obj) is not dict:
            raise ValueError(f"Expected `object`, got `{kind_of(obj)}`")
        if op == "value":
            _, name, cases, default = node
            value = obj.get(name, MISSING)
            nxt = cases.get(value) if value is not MISSING and _hashable(value) else None
            if nxt is None:
                nxt = default
            if nxt is None:
                if value is MISSING:
                    raise ValueError(f"Object missing required field `{name}`")
                raise ValueError(f"Invalid value {value!r} - at `$.{name}`")
            node = nxt
        elif op == "key":
            _, cases, default = node
            for name, nxt in cases:
                if name in obj:
                    node = nxt
                    break
            else:
                node = default
        else:  # "first": by trial
            return _trial(node[1], obj)


def _trial(options: tuple[Any, ...], obj: Any) -> Any:
    """The first member that validates ``obj``. Generated Structs refuse keys they do not
    declare, so a member of optional keys alone no longer accepts anything; when no member
    validates but one refused only a key it does not declare, that refusal is raised, and
    the decode keeps the key (``_undeclared.py`` picks the member declaring most keys).
    Otherwise the error that got deepest is raised."""
    error: ValueError | None = None
    undeclared: ValueError | None = None
    for option in options:
        try:
            return _run(option, obj)
        except ValueError as exc:
            text = str(exc)
            if undeclared is None and text.startswith(UNDECLARED):
                undeclared = exc
            if error is None or depth(text) > depth(str(error)):
                error = exc
    assert error is not None
    raise undeclared or error


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))
