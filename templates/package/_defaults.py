"""Defaults a decode applied, left out again on encode: decode → encode adds no key.

A field with a default (a protocol default such as ``resultType`` absent meaning
``complete``, or the schema's own scalar ``default``) reads as that value when its key is
absent, so callers need not spell it, and a constructed value writes it. A decoded value
must write it only where the wire carried it. msgspec fills an absent field with the
default object itself, for a decode as for a construction, and cannot tell them apart
later; so each generated default is an object of its own (:func:`default_value`: equal to
the value, and never produced by decoding JSON, whatever type the field has: a string, a
``Literal``, a union), and after a decode or a conversion a walk finds the fields that
still hold their class's very default object: those were absent on the wire. Each such
value becomes an instance of a subclass (of the same name; cached per class and set of
absent fields) that omits exactly those fields when it is encoded, so ``isinstance``
still holds and the attributes still read the default (it is not ``==`` to a constructed
value, whose JSON has the key).

A field whose key the revision *requires* (``resultType`` in 2026-07-28) is the exception:
its default is ``written`` (:func:`default_value`), and a value that got it on decode writes
it on encode, for what a peer of that revision is sent must carry the key; settling leaves
such a field alone, and an open object sets the key when it decodes one without it.

Where a default cannot be an object of its own (``true``, a small integer, a one-letter
string are shared by every value equal to them), or where the value came from builtins
(:func:`~._support.convert`, whose input may hold a default object taken from a
constructed value), the parsed JSON says which keys were there: the walk follows it along
the decoded value. Open objects keep the keys they got and need no settling (``_open.py``).

The walk visits only the fields whose types may hold a class with a default (worked out
once per class, from its annotations): for most types, a decode pays one dictionary
look-up; for a result, one look-up and one identity check when its defaulted keys came.
:func:`~._support.reshape` builds values rather than decoding them, and is not settled.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec

from ._decoding import MISSING

#: ``id`` of every default made by :func:`default_value` that no decode can produce.
_OWN: set[int] = set()
#: ``id`` of every written default: encoded whether or not its key came.
_WRITTEN: set[int] = set()
#: The defaults made, kept alive so that their ``id`` stays theirs.
_KEPT: list[Any] = []


def default_value(value: Any, *, written: bool = False) -> Any:
    """``value`` as a field's default: an equal object of its own where the type allows one
    (a string of two or more characters, a float), else ``value`` itself.

    ``written``: the revision requires the key, so a value that got the default writes it.
    A written default that cannot be an object of its own (``true``, ``0``) is written for
    every field whose default is that same object."""
    own: Any = value
    if type(value) is str and len(value) > 1:
        own = value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    elif type(value) is float:
        own = float.__new__(float, value)
        if own is value:  # pragma: no cover - CPython makes a new float
            own = value
    if written:
        _WRITTEN.add(id(own))
    elif own is not value:
        _OWN.add(id(own))
    if own is not value or written:
        _KEPT.append(own)
    return own


def is_written(default: Any) -> bool:
    """Whether ``default`` (a field's default object) is written whether or not its key came."""
    return id(default) in _WRITTEN


class _Spec(NamedTuple):
    """What settling a value of one class looks at."""

    #: (attribute, wire name, default object, whether that object is the default's own)
    defaulted: tuple[tuple[str, str, Any, bool], ...]
    #: (attribute, wire name) of fields whose values may hold something to settle
    children: tuple[tuple[str, str], ...]
    #: open objects: whether keys they do not declare may hold something to settle
    extra: bool


#: Settling of each class met (None: nothing of it or under it to settle).
_specs: dict[type, _Spec | None] = {}
#: The classes met that have a default or may hold a class that has (union markers too).
_live: set[type] = set()
#: Settles a decoded value (given the parsed JSON it came from, or ``MISSING``): returns it.
Settle = Callable[[Any, Any], Any]
#: How a value decoded as a type is settled: whether the parsed JSON is needed, and how.
Settling = tuple[bool, Settle]
#: Per decoded type: how its values are settled, or None when none has a default.
settlings: dict[Any, Settling | None] = {}
#: Subclasses leaving fields out, per (class, absent attributes).
_absent: dict[tuple[type, frozenset[str]], type] = {}
#: Subclasses made, at most (all are forgotten when one more is).
MAX_CLASSES = 1024


def settling_of(tp: Any) -> Settling | None:
    """How a value decoded as ``tp`` is settled (worked out once per type), or None when
    it holds no field with a default. The parsed JSON is needed where some default is not
    an object of its own."""
    try:
        return settlings[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: not one of ours
        return None
    classes = _classes_in(tp)
    _analyse(classes)
    found: Settling | None = None
    if any(c in _live for c in classes):
        spec = _specs.get(tp) if isinstance(tp, type) else None
        settle = _settle if spec is None or spec.children or spec.extra else _leaf(tp, spec)
        found = (_raw_needed(classes), settle)
    settlings[tp] = found
    return found


def _settle(value: Any, raw: Any) -> Any:
    """``value`` with every Struct in it that got a default for an absent key made to
    leave that key out when encoded; ``raw``, the parsed JSON it was decoded from, says
    which keys were there (``MISSING``: the default objects of their own say it)."""
    _walk(value, raw)
    return value


def _leaf(cls: type, spec: _Spec) -> Settle:
    """``_settle`` for a class with defaults and nothing below them to settle (a result),
    returning at once when the value has every defaulted key (what a peer sends)."""
    checks = tuple((attrgetter(attr), default, wire) for attr, wire, default, _ in spec.defaulted)
    if len(checks) == 1:  # the usual one, resultType, without a loop
        ((get, default, wire),) = checks

        def settle_one(value: Any, raw: Any) -> Any:
            if value.__class__ is cls:
                if raw is MISSING:
                    if get(value) is not default:
                        return value
                elif type(raw) is dict and wire in raw:
                    return value
            _walk(value, raw)
            return value

        return settle_one

    def settle(value: Any, raw: Any) -> Any:
        if value.__class__ is cls:
            if raw is MISSING:
                for get, default, _ in checks:
                    if get(value) is default:
                        break
                else:
                    return value
            elif type(raw) is dict:
                for _, _, wire in checks:
                    if wire not in raw:
                        break
                else:
                    return value
        _walk(value, raw)
        return value

    return settle


def _walk(value: Any, raw: Any) -> None:
    cls = type(value)
    if cls is list:
        same = type(raw) is list and len(raw) == len(value)
        for i, item in enumerate(value):
            _walk(item, raw[i] if same else MISSING)
        return
    try:
        spec = _specs[cls]
    except KeyError:
        if cls is dict:  # a map: its values
            for k, item in value.items():
                _walk(item, raw.get(k, MISSING) if type(raw) is dict else MISSING)
            return
        if not isinstance(value, (msgspec.Struct, dict)):
            return
        _analyse([cls])
        spec = _specs.get(cls)
    if spec is None:
        return
    obj = raw if type(raw) is dict else None
    if isinstance(value, dict):  # an open object: declared keys that may hold more
        for _, wire in spec.children:
            if wire in value:
                _walk(dict.__getitem__(value, wire), obj.get(wire, MISSING) if obj else MISSING)
        if spec.extra:
            declared = {wire for _, wire in spec.children}
            for k, item in value.items():
                if k not in declared:
                    _walk(item, obj.get(k, MISSING) if obj else MISSING)
        return
    absent = None
    for attr, wire, default, own in spec.defaulted:
        if getattr(value, attr) is not default:
            continue
        if (wire not in obj) if obj is not None else own:
            absent = (absent or set()) | {attr}
    for attr, wire in spec.children:
        _walk(getattr(value, attr), obj.get(wire, MISSING) if obj is not None else MISSING)
    if absent:
        value.__class__ = _leaving_out(cls, frozenset(absent))


def _leaving_out(cls: type, absent: frozenset[str]) -> type:
    """The subclass of ``cls`` that omits the fields ``absent`` while they hold their
    default object, and writes every other field as ``cls`` does."""
    key = (cls, absent)
    sub = _absent.get(key)
    if sub is not None:
        return sub
    if len(_absent) >= MAX_CLASSES:
        _absent.clear()
    fields = msgspec.structs.fields(cls)  # type: ignore[arg-type]
    kept = [  # any other default is made a factory, which omit_defaults never omits
        (f.name, f.type, msgspec.field(default_factory=_constant(f.default), name=f.encode_name))
        for f in fields
        if f.name not in absent
        and f.default is not msgspec.NODEFAULT
        and f.default is not msgspec.UNSET
    ]
    sub = msgspec.defstruct(
        cls.__name__,
        kept,
        bases=(cls,),
        kw_only=True,
        omit_defaults=True,
        module=cls.__module__,
    )
    _specs[sub] = _specs.get(cls)
    _absent[key] = sub
    return sub


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


# -- which classes may hold something to settle -------------------------------------------------


def _classes_in(tp: Any) -> list[type]:
    """The classes an annotation names, at any depth of its containers and unions."""
    out: list[type] = []
    stack = [tp]
    while stack:
        t = stack.pop()
        origin = typing.get_origin(t)
        if origin is typing.Annotated:
            stack.append(typing.get_args(t)[0])
        elif origin is typing.Literal:
            continue
        elif origin is not None:
            stack.extend(typing.get_args(t))
        elif isinstance(t, types.UnionType):
            stack.extend(typing.get_args(t))
        elif isinstance(t, type) and (
            issubclass(t, (msgspec.Struct, dict)) or hasattr(t, "__strategy__")
        ):
            if t is not dict:
                out.append(t)
    return out


def _edges(cls: type) -> tuple[list[tuple[str, str, list[type]]], list[type]]:
    """Per field (attribute, wire name, classes its type names), and the classes a union
    marker's members or an open object's other keys name."""
    strategy = getattr(cls, "__strategy__", None)
    if strategy is not None:  # a union decided by the hook: the types it picks
        return [], [c for tp in _picked(strategy) for c in _classes_in(tp)]
    plan = getattr(cls, "__mcpgen_plan__", None)
    if plan is not None:  # an open object: its declared keys, and the type of the others
        shape = plan()
        fields = [
            (f.name, f.encode_name, _classes_in(f.type))
            for f in msgspec.structs.fields(shape.shape)
        ]
        return fields, _classes_in(shape.extra) if shape.extra is not None else []
    if issubclass(cls, msgspec.Struct):
        return [
            (f.name, f.encode_name, _classes_in(f.type)) for f in msgspec.structs.fields(cls)
        ], []
    return [], []


def _picked(node: Any) -> list[Any]:
    """Every type a decision tree picks."""
    op = node[0]
    if op == "pick":
        return [node[1]]
    if op == "kind":
        return [t for n in node[1].values() for t in _picked(n)]
    if op == "first":
        return [t for n in node[1] for t in _picked(n)]
    cases = node[2].values() if op == "value" else [n for _, n in node[1]]
    default = node[3] if op == "value" else node[2]
    return [t for n in [*cases, *([default] if default else [])] for t in _picked(n)]


def _own_defaults(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    if not issubclass(cls, msgspec.Struct) or hasattr(cls, "__strategy__"):
        return ()
    return tuple(
        (f.name, f.encode_name, f.default, id(f.default) in _OWN)
        for f in msgspec.structs.fields(cls)
        if f.default is not msgspec.NODEFAULT
        and f.default is not msgspec.UNSET
        and id(f.default) not in _WRITTEN
    )


def _analyse(start: list[type]) -> None:
    """Work out the spec of every class reachable from ``start`` not known yet."""
    graph: dict[type, tuple[list[tuple[str, str, list[type]]], list[type]]] = {}
    stack = [c for c in start if c not in _specs]
    while stack:
        cls = stack.pop()
        if cls in graph or cls in _specs:
            continue
        graph[cls] = fields, extra = _edges(cls)
        stack.extend(c for _, _, named in fields for c in named)
        stack.extend(extra)
    # a class is live if it has a default or reaches one that has: to a fixed point
    live = {c for c in graph if _own_defaults(c)}
    changed = True
    while changed:
        changed = False
        for cls, (fields, extra) in graph.items():
            named = [*extra, *(c for *_, cs in fields for c in cs)]
            if cls not in live and any(c in live or c in _live for c in named):
                live.add(cls)
                changed = True
    _live.update(live)
    for cls, (fields, extra) in graph.items():
        if cls not in live or hasattr(cls, "__strategy__"):  # a union marker is no value
            _specs[cls] = None
            continue
        _specs[cls] = _Spec(
            _own_defaults(cls),
            tuple((a, w) for a, w, named in fields if any(c in _live for c in named)),
            any(c in _live for c in extra),
        )


def _raw_needed(classes: list[type]) -> bool:
    """Whether any class reachable from ``classes`` has a default that is not its own."""
    seen: set[type] = set()
    stack = [c for c in classes if c in _live]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if any(not own for *_, own in _own_defaults(cls)):
            return True
        fields, extra = _edges(cls)
        stack.extend(c for _, _, named in fields for c in named if c in _live)
        stack.extend(c for c in extra if c in _live)
    return False
