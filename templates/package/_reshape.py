"""Reshaping plans: what a value of one type must lose to become a value of another.

:func:`~._support.reshape` makes a value of one protocol version's type a value of another
version's: a newer result answered to an older peer holds keys the older version lacks
(2026-07-28's ``resultType`` and ``ttlMs``, newer optional fields at any depth). Left in,
the first such key makes the conversion fail, and the slow path of ``_undeclared.py``
walks the whole value along the target type to find them all. A plan, worked out once per
(source type, target type) from the two types alone and cached under them, knows every
place where a value of the source type may hold a key the target lacks: it drops those up
front, copying only the objects it changes, and does not visit the places where the two
types agree. The conversion that follows succeeds at its first try.

A plan is a function of the value (:data:`Step`), or None where there is nothing to drop.
It follows the value through structs, open objects, lists, dicts and unions (a union's
member decided on the value, by the same rules as the decode hook); where the source type
says nothing of the keys (``Any``, a ``dict``, an open object's other keys, a member only
a trial would tell) it keeps only what the target declares, as the slow path would. Where
the target's member would be decided by trial, it leaves the value as it is: if that
value holds keys to drop, the conversion fails and takes the slow path. A plan never
changes a result, it only spares the work of finding what to drop.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec.inspect as mi

from ._decoding import MISSING, kind_of
from ._undeclared import info_of, native_member

#: What a plan does to a value: returns it with the keys its target lacks dropped (the
#: value itself when there were none; a copy of each object that changed otherwise).
Step = Callable[[Any], Any]

#: (source, target) pairs whose plans are kept; all are forgotten when one more is made.
MAX_PLANS = 1024
#: Plans of the positions inside them (per pair of types met), likewise.
MAX_PARTS = 65536

#: The source of a value nothing is known of: every key may be one the target lacks.
_ANY = mi.AnyType()
#: Targets that declare keys, or hold values that do (below anything else: nothing to drop).
_CONTAINERS = (
    mi.StructType,
    mi.CustomType,
    mi.UnionType,
    mi.ListType,
    mi.SetType,
    mi.FrozenSetType,
    mi.VarTupleType,
    mi.DictType,
)
_ARRAYS = (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)


def plan(source: Any, target: Any) -> Step | None:
    """The plan that makes a value of type ``source`` (as builtins) fit ``target``, or None
    when there is nothing to drop (or ``source`` is no generated type: a plain ``dict``
    holds whatever it holds, and is better converted as it is)."""
    try:
        return plans[source, target]
    except KeyError:
        pass
    except TypeError:  # an unhashable type: not one of ours
        return None
    if len(plans) >= MAX_PLANS or len(_parts) >= MAX_PARTS:
        plans.clear()
        _parts.clear()
    # a class made to carry undeclared keys plans as its base: those keys take the slow path
    base = getattr(source, "__undeclared_base__", source)
    try:
        s, t = _bare(info_of(base)), _bare(info_of(target))
    except (TypeError, ValueError):  # not a type msgspec knows
        step = None
    else:
        step = _pair(s, t) if isinstance(s, (mi.StructType, mi.CustomType)) else None
    plans[source, target] = step
    return step


#: The plan of each (source, target) pair met, by the pair (``reshape`` looks here first).
plans: dict[tuple[Any, Any], Step | None] = {}


class _Part:
    """The plan of one (source, target) position, filled in once worked out: a recursive
    type meets its own part while it is being worked out."""

    __slots__ = ("step", "done", "types")

    def __init__(self, types: tuple[Any, Any]) -> None:
        self.step: Step | None = None
        self.done = False
        #: The two type descriptions, kept alive: parts of anonymous ones are keyed by id.
        self.types = types


_parts: dict[tuple[Any, Any], _Part] = {}


def _bare(info: Any) -> Any:
    while isinstance(info, mi.Metadata):
        info = info.type
    return info


def _key(info: Any) -> Any:
    """What identifies a type description: its class where it has one."""
    if isinstance(info, (mi.StructType, mi.CustomType)):
        return info.cls
    if isinstance(info, mi.AnyType):
        return Any
    return id(info)


def _pair(s: Any, t: Any) -> Step | None:
    """The plan of a value described by ``s`` that becomes a value described by ``t``."""
    s, t = _bare(s), _bare(t)
    if not isinstance(t, _CONTAINERS):
        return None  # a scalar, a literal, Any: nothing below it to drop
    key = (_key(s), _key(t))
    if key[0] is key[1] and isinstance(s, (mi.StructType, mi.CustomType)):
        return None  # a value of a type is a value of that very type
    part = _parts.get(key)
    if part is None:
        part = _parts[key] = _Part((s, t))
        part.step = _make(s, t)
        part.done = True
    elif not part.done:
        return _later(part)
    return part.step


def _later(part: _Part) -> Step:
    """A recursive position: its plan is looked up when the value gets there."""

    def step(raw: Any) -> Any:
        inner = part.step
        return raw if inner is None else inner(raw)

    return step


def _make(s: Any, t: Any) -> Step | None:
    if _is_union(s) or _is_union(t):
        return _union(s, t)
    if isinstance(t, mi.StructType):
        if isinstance(s, mi.StructType):
            return _struct(s, t)
        if _is_object(s):
            return _declared_only(s, t)
        return None
    if isinstance(t, mi.CustomType):  # an open object: every key kept, its values typed
        shape = _open_shape(t)
        if shape is None or not (isinstance(s, mi.StructType) or _is_object(s)):
            return None
        return _keyed(s, *shape)
    if isinstance(t, mi.DictType):
        if isinstance(s, mi.StructType) or _is_object(s):
            return _keyed(s, {}, t.value_type)
        return None
    if isinstance(t, _ARRAYS):
        if isinstance(s, _ARRAYS):
            item = _pair(s.item_type, t.item_type)
        elif isinstance(s, mi.AnyType):
            item = _pair(_ANY, t.item_type)
        else:
            return None
        return None if item is None else _each(item)
    return None


# -- objects -----------------------------------------------------------------------------------


def _struct(s: mi.StructType, t: mi.StructType) -> Step | None:
    """Struct to struct: the keys the source declares and the target does not, dropped;
    the values both declare, planned in turn."""
    fields = {f.encode_name: f.type for f in t.fields}
    kept = {*fields, t.tag_field}
    wires = [f.encode_name for f in s.fields] + ([s.tag_field] if s.tag_field else [])
    drop = tuple(w for w in wires if w not in kept)
    nested: list[tuple[str, Step]] = []
    for f in s.fields:
        if f.encode_name in fields:
            inner = _pair(f.type, fields[f.encode_name])
            if inner is not None:
                nested.append((f.encode_name, inner))
    if not drop and not nested:
        return None
    return _object(drop, tuple(nested))


def _object(drop: tuple[str, ...], nested: tuple[tuple[str, Step], ...]) -> Step:
    """Drops the keys ``drop`` of an object (one check when it holds none) and plans the
    values of ``nested``. The step's ``watched`` names every key it acts on, so that a
    caller can let an object holding none of them through without calling it."""
    dropped = frozenset(drop)
    watched = dropped | {wire for wire, _ in nested}

    def step(raw: Any) -> Any:
        if type(raw) is not dict:
            return raw
        out = raw if dropped.isdisjoint(raw) else {k: v for k, v in raw.items() if k not in dropped}
        for wire, inner in nested:
            value = out.get(wire, MISSING)
            if value is not MISSING:
                new = inner(value)
                if new is not value:
                    if out is raw:
                        out = raw.copy()
                    out[wire] = new
        return out

    step.watched = watched  # type: ignore[attr-defined]  # for _each_tagged
    return step


def _declared_only(s: Any, t: mi.StructType) -> Step:
    """A value of unknown keys (a dict, an open object, ``Any``) to a struct: the keys the
    target does not declare, whichever they are, dropped."""
    fields = {f.encode_name: f.type for f in t.fields}
    kept = frozenset(fields) | ({t.tag_field} if t.tag_field else frozenset())
    nested: list[tuple[str, Step]] = []
    for wire, tp in fields.items():
        source = _value_type(s, wire)
        inner = None if source is None else _pair(source, tp)
        if inner is not None:
            nested.append((wire, inner))
    within = _object((), tuple(nested)) if nested else None

    def step(raw: Any) -> Any:
        if type(raw) is not dict:
            return raw
        if not kept.issuperset(raw):
            raw = {k: v for k, v in raw.items() if k in kept}
        return raw if within is None else within(raw)

    return step


def _keyed(s: Any, declared: dict[str, Any], extra: Any) -> Step | None:
    """A value to an object that keeps every key (an open object, a dict): nothing dropped
    here, but the values typed by the target (``declared`` by key, else ``extra``; None:
    any JSON value) planned."""
    if isinstance(s, mi.StructType):  # its value holds its fields alone
        known = {f.encode_name: f.type for f in s.fields}
        other = None
    else:
        known = {w: _value_type(s, w) for w in [*_declared(s), *declared]}
        other = None if extra is None else _pair(_value_type(s, None) or _ANY, extra)
    nested: list[tuple[str, Step]] = []
    for wire, source in known.items():
        target = declared.get(wire, extra)
        inner = None if source is None or target is None else _pair(source, target)
        if inner is not None:
            nested.append((wire, inner))
    if not nested and other is None:
        return None
    within = _object((), tuple(nested)) if nested else None
    if other is None:
        return within
    rest, names = other, frozenset(known)

    def step(raw: Any) -> Any:
        if type(raw) is not dict:
            return raw
        out = raw if within is None else within(raw)
        changed: dict[str, Any] = {}
        for k, v in out.items():
            if k not in names:
                new = rest(v)
                if new is not v:
                    changed[k] = new
        if changed:
            out = {**out, **changed}
        return out

    return step


def _open_shape(t: mi.CustomType) -> tuple[dict[str, Any], Any] | None:
    """The declared keys of an open object (by wire name) and the type of its others."""
    make = getattr(t.cls, "__mcpgen_plan__", None)
    if make is None:
        return None
    shape = make()
    declared = {f.encode_name: f.type for f in info_of(shape.shape).fields}
    return declared, None if shape.extra is None else info_of(shape.extra)


def _declared(s: Any) -> list[str]:
    """The keys a source of unknown keys declares nonetheless (an open object's)."""
    if isinstance(s, mi.CustomType):
        shape = _open_shape(s)
        return [] if shape is None else list(shape[0])
    return []


def _value_type(s: Any, wire: str | None) -> Any:
    """What the source says of the value of key ``wire`` (None: of its other keys): a
    type description, or None when a value of the source cannot hold the key."""
    if isinstance(s, mi.StructType):
        return next((f.type for f in s.fields if f.encode_name == wire), None)
    if isinstance(s, mi.DictType):
        return s.value_type
    if isinstance(s, mi.CustomType):
        shape = _open_shape(s)
        if shape is None:
            return _ANY
        declared, extra = shape
        found = declared.get(wire) if wire is not None else None
        return found if found is not None else (extra if extra is not None else _ANY)
    return _ANY


def _is_object(info: Any) -> bool:
    """Whether a value of this description is an object whose keys it does not fix."""
    if isinstance(info, mi.CustomType):
        return _open_shape(info) is not None
    return isinstance(info, (mi.DictType, mi.AnyType))


# -- arrays ------------------------------------------------------------------------------------


def _each(inner: Step) -> Step:
    """Plans every item of an array (copied if one changes)."""
    tagged = getattr(inner, "tagged", None)
    if tagged is not None:
        return _each_tagged(*tagged)

    def step(raw: Any) -> Any:
        if type(raw) is not list:
            return raw
        out = None
        for i, value in enumerate(raw):
            new = inner(value)
            if new is not value:
                if out is None:
                    out = raw.copy()
                out[i] = new
        return raw if out is None else out

    return step


def _each_tagged(field: str, steps: dict[Any, Step]) -> Step:
    """:func:`_each` of a union decided by one tag field, the lookup done in the loop; an
    item holding none of the keys its member's plan watches is not passed to it."""
    watching = {tag: (inner, getattr(inner, "watched", None)) for tag, inner in steps.items()}
    # the keys any member's plan watches (None: some plan watches them all): an item
    # holding none of them needs no lookup
    sets: list[frozenset[str] | None] = [w for _, w in watching.values()]
    every = None if None in sets else frozenset().union(*(w for w in sets if w is not None))

    def step(raw: Any) -> Any:
        if type(raw) is not list:
            return raw
        if every is not None:
            for value in raw:
                if type(value) is dict and not every.isdisjoint(value):
                    break
            else:
                return raw  # the common case: no item holds anything to drop
        out = None
        for i, value in enumerate(raw):
            if type(value) is not dict:
                continue
            try:
                found = watching.get(value.get(field))
            except TypeError:  # an unhashable tag value
                continue
            if found is None:
                continue
            inner, watched = found
            if watched is not None and watched.isdisjoint(value):
                continue
            new = inner(value)
            if new is not value:
                if out is None:
                    out = raw.copy()
                out[i] = new
        return raw if out is None else out

    return step


# -- unions ------------------------------------------------------------------------------------


def _is_union(info: Any) -> bool:
    if isinstance(info, mi.UnionType):
        return True
    return isinstance(info, mi.CustomType) and bool(getattr(info.cls, "__strategy__", None))


def _union(s: Any, t: Any) -> Step | None:
    """Either side a union: the member each side takes is decided on the value, and the
    plan of that pair of members runs. None when no pair of members has anything to drop."""
    parts: dict[tuple[int, int], Step | None] = {}
    live = False
    for sm in _members(s):
        for tm in _targets(t, sm):
            inner = parts[id(sm), id(tm)] = _pair(sm, tm)
            live = live or inner is not None
    if not live:
        return None
    direct = _by_tag(s, t, parts)
    if direct is not None:
        return direct
    pick_s, pick_t = _picker(s), _picker(t)

    def step(raw: Any) -> Any:
        tm = pick_t(raw)
        if tm is None:
            return raw  # no member fits, or one decided by trial: the conversion decides
        # a source member decided by trial is not known: what the target's does not
        # declare is dropped, whatever it is (as the slow path does)
        sm = pick_s(raw) or _ANY
        key = (id(sm), id(tm))
        inner = parts.get(key, MISSING)
        if inner is MISSING:
            inner = parts[key] = _pair(sm, tm)
        return raw if inner is None else inner(raw)

    return step


def _by_tag(s: Any, t: Any, parts: dict[tuple[int, int], Step | None]) -> Step | None:
    """Where both sides decide their member by one tag field (content blocks), the plan
    of each pair of members one lookup away; None elsewhere."""
    if not (isinstance(s, (mi.UnionType, mi.StructType)) and isinstance(t, mi.UnionType)):
        return None  # a strategy union decides by its tree, whatever its members' tags
    s_tags, t_tags = _tags(_members(s)), _tags(_members(t))
    if s_tags is None or t_tags is None or s_tags[0] != t_tags[0]:
        return None
    field, s_table = s_tags
    t_table = t_tags[1]
    steps: dict[Any, Step] = {}
    for tag, sm in s_table.items():
        tm = t_table.get(tag)
        inner = None if tm is None else parts.get((id(sm), id(tm)))
        if inner is not None:
            steps[tag] = inner

    def step(raw: Any) -> Any:
        if type(raw) is not dict:
            return raw
        try:
            inner = steps.get(raw.get(field))
        except TypeError:  # an unhashable tag value
            return raw
        return raw if inner is None else inner(raw)

    step.tagged = (field, steps)  # type: ignore[attr-defined]  # for _each
    return step


def _members(info: Any) -> list[Any]:
    """The member descriptions a value of ``info`` may take (itself if not a union)."""
    if isinstance(info, mi.UnionType):
        return [_bare(m) for m in info.types]
    if isinstance(info, mi.CustomType) and getattr(info.cls, "__strategy__", None):
        tree = info.cls.__strategy__
        found = [_bare(info_of(tp)) for tp in _picks(tree)]
        return [*found, _ANY] if _by_trial(tree) else found
    return [info]


def _by_trial(node: tuple[Any, ...] | None) -> bool:
    """Whether a decision tree decides some values by trial."""
    if node is None:
        return False
    op = node[0]
    if op == "kind":
        return any(_by_trial(branch) for branch in node[1].values())
    if op == "value":
        return any(_by_trial(branch) for branch in (*node[2].values(), node[3]))
    if op == "key":
        return any(_by_trial(branch) for branch in (*(n for _, n in node[1]), node[2]))
    return op == "first"


def _targets(t: Any, sm: Any) -> list[Any]:
    """The members of ``t`` a value of ``sm`` may take: for a strategy union, those its
    decision tree reaches for what ``sm`` declares (its kind, its keys, their literal
    values); for a native one, those not told apart by a tag."""
    if isinstance(t, mi.UnionType):
        return [m for m in (_bare(m) for m in t.types) if not _apart(sm, m)]
    if isinstance(t, mi.CustomType) and getattr(t.cls, "__strategy__", None):
        found = {id(m): m for m in (_bare(info_of(tp)) for tp in _reached(t.cls.__strategy__, sm))}
        return list(found.values())
    return [t]


def _reached(node: tuple[Any, ...] | None, sm: Any) -> Iterator[Any]:
    """The types a decision tree may pick for a value of ``sm`` (not by trial: a plan does
    not decide those)."""
    if node is None:
        return
    op = node[0]
    if op == "pick":
        yield node[1]
    elif op == "kind":
        kind = _kind(sm)
        for branch in node[1].values() if kind is None else (node[1].get(kind),):
            yield from _reached(branch, sm)
    elif op == "value":
        name, cases, default = node[1], node[2], node[3]
        keys, others = _keys(sm)
        spec = keys.get(name)
        values = None if spec is None else spec[1]
        if spec is None and not others:  # the value never has the key
            yield from _reached(default, sm)
        elif spec is None or values is None:  # any value
            for branch in (*cases.values(), default):
                yield from _reached(branch, sm)
        else:
            for value in values:
                yield from _reached(cases.get(value) or default, sm)
            if not spec[0]:  # or none at all
                yield from _reached(default, sm)
    elif op == "key":
        keys, others = _keys(sm)
        for name, branch in node[1]:
            spec = keys.get(name)
            if spec is None and not others:
                continue  # the value never has the key
            yield from _reached(branch, sm)
            if spec is not None and spec[0]:
                return  # the value always has it: no later case is reached
        yield from _reached(node[2], sm)


def _kind(info: Any) -> str | None:
    """The JSON kind of every value of ``info`` (None: not one kind, or not known)."""
    if isinstance(info, (mi.StructType, mi.DictType)) or _is_object(info):
        return "object"
    if isinstance(info, (*_ARRAYS, mi.TupleType)):
        return "array"
    if isinstance(info, mi.StrType):
        return "string"
    if isinstance(info, (mi.IntType, mi.FloatType)):
        return "number"
    if isinstance(info, mi.BoolType):
        return "boolean"
    if isinstance(info, mi.NoneType):
        return "null"
    return None


def _keys(info: Any) -> tuple[dict[str, tuple[bool, tuple[Any, ...] | None]], bool]:
    """What a value of ``info`` may hold: key → (always there, its possible values where
    they are literals, else None), and whether it may hold other keys too."""
    if isinstance(info, mi.StructType):
        keys = {f.encode_name: (f.required, _literals(f.type)) for f in info.fields}
        if info.tag_field is not None:
            keys[info.tag_field] = (True, (info.tag,))
        return keys, False
    if isinstance(info, mi.CustomType) and _open_shape(info) is not None:
        shape = info_of(info.cls.__mcpgen_plan__().shape)
        return {f.encode_name: (f.required, _literals(f.type)) for f in shape.fields}, True
    return {}, True


def _literals(info: Any) -> tuple[Any, ...] | None:
    info = _bare(info)
    return tuple(info.values) if isinstance(info, mi.LiteralType) else None


def _picks(node: tuple[Any, ...]) -> Iterator[Any]:
    """The types a decision tree picks, except by trial (a plan does not decide those)."""
    op = node[0]
    if op == "pick":
        yield node[1]
    elif op == "kind":
        for branch in node[1].values():
            yield from _picks(branch)
    elif op == "value":
        for branch in (*node[2].values(), node[3]):
            if branch is not None:
                yield from _picks(branch)
    elif op == "key":
        for branch in (*(n for _, n in node[1]), node[2]):
            if branch is not None:
                yield from _picks(branch)


def _apart(a: Any, b: Any) -> bool:
    """Whether one value can never be both (two structs of one tag field, different tags)."""
    return (
        isinstance(a, mi.StructType)
        and isinstance(b, mi.StructType)
        and a.tag_field is not None
        and a.tag_field == b.tag_field
        and a.tag != b.tag
    )


def _picker(info: Any) -> Callable[[Any], Any]:
    """Decides which member of ``info`` a value takes (None: none, or not here)."""
    if isinstance(info, mi.UnionType):
        members = tuple(_bare(m) for m in info.types)
        tagged = _tags(members)
        if tagged is None:
            return lambda raw: native_member(raw, members)
        field, table = tagged

        def by_tag(raw: Any) -> Any:
            if type(raw) is not dict:
                return None
            try:
                return table.get(raw.get(field))
            except TypeError:  # an unhashable tag value
                return None

        return by_tag
    if isinstance(info, mi.CustomType) and getattr(info.cls, "__strategy__", None):
        tree = info.cls.__strategy__
        return lambda raw: _decide(tree, raw)
    return lambda raw: info


def _tags(members: Sequence[Any]) -> tuple[str, dict[Any, Any]] | None:
    """(tag field, tag → member) when every member a plan acts on is a struct of one tag
    field (the rest being scalars): the member is then one lookup away."""
    containers = [m for m in members if isinstance(m, _CONTAINERS)]
    structs = [m for m in containers if isinstance(m, mi.StructType)]
    fields = {m.tag_field for m in structs}
    field = fields.pop() if len(fields) == 1 else None
    if field is None or len(structs) != len(containers):
        return None
    return field, {m.tag: m for m in structs}


def _decide(node: tuple[Any, ...], raw: Any) -> Any:
    """The member a strategy union's decision tree picks for ``raw`` (as the decode hook
    and the slow path do), or None: none does, or only a trial would tell."""
    while True:
        op = node[0]
        if op == "pick":
            return _bare(info_of(node[1]))
        if op == "kind":
            node = node[1].get(kind_of(raw))
        elif op == "first" or type(raw) is not dict:
            return None
        elif op == "value":
            value = raw.get(node[1])
            cases = node[2]
            node = (cases.get(value) if isinstance(value, (str, int, float)) else None) or node[3]
        else:  # "key"
            node = next((n for k, n in node[1] if k in raw), node[2])
        if node is None:
            return None
