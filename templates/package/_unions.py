"""Unions msgspec cannot decode natively, decided at run time by a decision tree the
generator planned: by JSON kind, by a discriminator's value, by key presence, by trial.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import msgspec

from ._decoding import MISSING, dec_hook, depth, kind_of, nested


class UnionType(abc.ABC):
    """Stands, at run time, for a union msgspec cannot decode natively.

    Type checkers see the real union (the generated module defines the alias under
    ``TYPE_CHECKING``); msgspec sees this class, calls :func:`dec_hook`, and gets back an
    instance of one member (members are registered as virtual subclasses).
    """

    #: Decision tree: ``("pick", type)``, ``("kind", {kind: node})``,
    #: ``("value", key, {value: node}, default)``, ``("key", ((key, node), ...), default)``,
    #: ``("first", (node, ...))``.
    __strategy__: ClassVar[tuple[Any, ...]] = ()

    @classmethod
    def __mcpgen_decode__(cls, obj: Any) -> Any:
        return _run(cls.__strategy__, obj)


def register_union(marker: Any, members: tuple[type, ...], strategy: tuple[Any, ...]) -> None:
    """Attach ``strategy`` to a union marker and register its members' classes."""
    marker.__strategy__ = strategy
    for member in members:
        marker.register(member)


def _run(node: tuple[Any, ...], obj: Any) -> Any:
    while True:
        op = node[0]
        if op == "pick":
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
    """The first member that validates ``obj`` and declares every key it has (msgspec
    ignores undeclared keys, so a member of optional keys alone would accept anything).
    Failing that, the member that validates and declares most of its keys (a newer peer
    may send keys nobody declares yet); else the error that got deepest."""
    error: ValueError | None = None
    fallback, fallback_keys = MISSING, -1
    for option in options:
        try:
            value = _run(option, obj)
        except ValueError as exc:
            if error is None or depth(str(exc)) > depth(str(error)):
                error = exc
            continue
        declared = _declared_keys(type(value))
        if declared is None or type(obj) is not dict:
            return value
        known = sum(1 for k in obj if k in declared)
        if known == len(obj):
            return value
        if known > fallback_keys:
            fallback, fallback_keys = value, known
    if fallback is not MISSING:
        return fallback
    assert error is not None
    raise error


def _declared_keys(cls: type) -> frozenset[str] | None:
    """The wire keys a Struct class declares (None: it keeps every key, or is no Struct)."""
    keys = _declared.get(cls, MISSING)
    if keys is MISSING:
        keys = None
        if issubclass(cls, msgspec.Struct):
            tag = cls.__struct_config__.tag_field
            keys = frozenset((*cls.__struct_encode_fields__, *((tag,) if tag else ())))
        _declared[cls] = keys
    return keys


#: The declared keys of each Struct class a trial has met.
_declared: dict[type, frozenset[str] | None] = {}


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))
