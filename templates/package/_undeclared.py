"""Undeclared keys, kept: decode → encode loses nothing the schema allows.

MCP's schemas leave almost every object open: a peer may send keys no definition declares
(a newer revision's fields, a vendor's extension), and a gateway that decodes and
re-encodes a message must pass them on. msgspec ignores such keys, and has no way to keep
them on a Struct, so the generated Structs refuse them instead (``forbid_unknown_fields``),
which costs nothing when there are none. When there are, :func:`keep` decodes again, more
slowly, from the parsed JSON:

1. one walk sets aside every key that no class of the module declares, wherever it is;
2. a conversion names, one at a time, any key left that the class at its place does not
   declare (one some other class declares), and sets it aside too;
3. each set-aside key goes back where it was: into dicts and open objects as an item, and
   onto a Struct by swapping it for an instance of a subclass that declares the keys
   (cached per class and key set), so ``isinstance`` still holds and encoding writes them.

:func:`undeclared` reads them back; :func:`with_undeclared` adds some to a value.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import msgspec.inspect as mi

from ._decoding import UNDECLARED, dec_hook, depth, kind_of, merge_paths, missing_tag, tag_of

#: Undeclared keys one decode keeps at most (more is a ValidationError, nothing is dropped);
#: set by ``configure(max_undeclared_keys=...)``.
MAX_UNDECLARED_KEYS = 256
#: Subclasses made to carry undeclared keys, at most (all are forgotten when one more is).
MAX_CLASSES = 256

Path = tuple["str | int", ...]
#: What msgspec does not allow in a field's wire name.
_UNNAMEABLE = re.compile(r'[\\"\x00-\x1f]')


def is_undeclared_key_error(exc: msgspec.ValidationError) -> bool:
    return str(exc).startswith(UNDECLARED)


class _Kept:
    """The keys one decode sets aside (all of them count against the limit), and those
    of the object being decoded now, by the path of the object they belong to."""

    def __init__(self, put_back: bool = True) -> None:
        self.count = 0
        self.at: dict[Path, dict[str, Any]] = {}
        #: Whether the keys go back on the decoded value (else they are dropped).
        self.put_back = put_back

    def add(self, path: Path, key: str, value: Any) -> None:
        self.count_more(1)
        self.at.setdefault(path, {})[key] = value

    def count_more(self, n: int) -> None:
        """Count ``n`` keys kept elsewhere (by a union member decided on trial)."""
        self.count += n
        if self.count > MAX_UNDECLARED_KEYS:
            raise msgspec.ValidationError(
                f"more than {MAX_UNDECLARED_KEYS} keys no definition declares"
                " (configure(max_undeclared_keys=...) keeps more)"
            )


def keep(raw: Any, tp: Any, put_back: bool = True) -> Any:
    """``raw`` (parsed JSON) converted to ``tp`` with every undeclared key kept (or, with
    ``put_back`` false, dropped)."""
    return _keep(raw, tp, _Kept(put_back))


def _keep(raw: Any, tp: Any, kept: _Kept) -> Any:
    outer, kept.at = kept.at, {}
    try:
        stripped = _strip(raw, info_of(tp), (), kept)
        try:
            value = msgspec.convert(stripped, tp, dec_hook=dec_hook)
        except msgspec.ValidationError as exc:
            raise msgspec.ValidationError(merge_paths(str(exc))) from None
        for path in sorted(kept.at, key=len, reverse=True) if kept.put_back else ():
            value = _put_back(value, path, kept.at[path])
        return value
    finally:
        kept.at = outer


# -- 1: what a type declares, walked along the value ---------------------------------------------


def info_of(tp: Any) -> Any:
    """msgspec's description of ``tp`` (cached)."""
    info = _infos.get(tp)
    if info is None:
        info = _infos[tp] = mi.type_info(tp)
    return info


_infos: dict[Any, Any] = {}


def _strip(raw: Any, info: Any, path: Path, kept: _Kept) -> Any:
    """``raw`` without the keys ``info`` does not declare where it declares keys (copied
    where changed); each key removed goes to ``kept``."""
    while isinstance(info, mi.Metadata):
        info = info.type
    if isinstance(info, mi.StructType):
        return _strip_struct(raw, info, path, kept) if type(raw) is dict else raw
    if isinstance(info, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        if type(raw) is not list:
            return raw
        items = [_strip(v, info.item_type, (*path, i), kept) for i, v in enumerate(raw)]
        return items if any(a is not b for a, b in zip(items, raw)) else raw
    if isinstance(info, mi.DictType):
        if type(raw) is not dict:
            return raw
        out = {k: _strip(v, info.value_type, (*path, k), kept) for k, v in raw.items()}
        return out if any(out[k] is not raw[k] for k in raw) else raw
    if isinstance(info, mi.UnionType):
        member = native_member(raw, info.types)
        return raw if member is None else _strip(raw, member, path, kept)
    if isinstance(info, mi.CustomType):
        return _strip_custom(raw, info.cls, path, kept)
    return raw  # scalars, literals, Any: nothing declared below


def _strip_struct(raw: dict[str, Any], info: Any, path: Path, kept: _Kept) -> Any:
    fields = {f.encode_name: f.type for f in info.fields}
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k in fields:
            out[k] = _strip(v, fields[k], (*path, k), kept)
        elif k == info.tag_field:
            out[k] = v
        else:
            kept.add(path, k, v)
    return out if len(out) != len(raw) or any(out[k] is not raw[k] for k in out) else raw


def native_member(raw: Any, members: tuple[Any, ...]) -> Any:
    """The member of a union msgspec decodes natively that ``raw`` goes to."""
    kind = kind_of(raw)
    for m in members:
        while isinstance(m, mi.Metadata):
            m = m.type
        if kind == "object" and isinstance(m, mi.StructType):
            if m.tag_field is None or raw.get(m.tag_field) == m.tag:
                return m
        elif kind == "object" and isinstance(m, (mi.DictType, mi.CustomType)):
            return m
        elif kind == "array" and isinstance(m, (mi.ListType, mi.VarTupleType, mi.TupleType)):
            return m
    return None


def _strip_custom(raw: Any, cls: type, path: Path, kept: _Kept) -> Any:
    plan = getattr(cls, "__mcpgen_plan__", None)
    if plan is not None:  # an open object: keeps every key; its declared values may not
        if type(raw) is not dict:
            return raw
        shape = plan()
        declared = {f.encode_name: f.type for f in info_of(shape.shape).fields}
        extra = info_of(shape.extra) if shape.extra is not None else None
        out = {}
        for k, v in raw.items():
            typed = declared.get(k, extra)
            out[k] = v if typed is None else _strip(v, typed, (*path, k), kept)
        return out if any(out[k] is not raw[k] for k in raw) else raw
    strategy = getattr(cls, "__strategy__", None)
    return raw if strategy is None else _strip_union(raw, strategy, path, kept)


def _strip_union(raw: Any, node: tuple[Any, ...], path: Path, kept: _Kept) -> Any:
    """Follow a union's decision tree to its member, as the hook will; a trial is decided
    here, and its value decoded, so that the hook takes the very member chosen."""
    while True:
        op = node[0]
        if op == "pick":
            return _strip(raw, info_of(node[1]), path, kept)
        if op == "kind":
            node = node[1].get(kind_of(raw))
        elif op == "first":
            return _trial(raw, [option[1] for option in node[1]], path, kept)
        elif type(raw) is not dict:
            return raw
        elif op == "value":
            value = raw.get(node[1])
            cases = node[2]
            node = (cases.get(value) if isinstance(value, (str, int, float)) else None) or node[3]
        else:  # "key"
            node = next((n for k, n in node[1] if k in raw), node[2])
        if node is None:
            return raw  # no member: the hook says why


def _trial(raw: Any, members: list[Any], path: Path, kept: _Kept) -> Any:
    """The decoded value of the member that keeps fewest keys aside (first wins a tie);
    when none fits, the error that got deepest, at its place in the whole value. A tagged
    Struct fits only an object with its tag (msgspec would take one without)."""
    best: tuple[int, Any] | None = None
    error = ""
    for member in members:
        trial = _Kept(kept.put_back)
        try:
            tag = tag_of(member)
            if tag is not None and type(raw) is dict and tag not in raw:
                raise msgspec.ValidationError(missing_tag(tag))
            value = _keep(raw, member, trial)
        except msgspec.ValidationError as exc:
            if not error or depth(str(exc)) > depth(error):
                error = str(exc)
            continue
        if best is None or trial.count < best[0]:
            best = (trial.count, value)
            if trial.count == 0:
                break
    if best is None:
        raise msgspec.ValidationError(_at_place(error, path))
    kept.count_more(best[0])  # against the limit of the whole decode
    return best[1]


def _at_place(message: str, path: Path) -> str:
    """``message`` (whose path is relative to the value at ``path``) with its whole path."""
    outer = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    head, sep, inner = message.partition(" - at `$")
    if not outer:
        return message
    return f"{head} - at `${outer}{inner}" if sep else f"{message} - at `${outer}`"


# -- 3: back where they were -------------------------------------------------------------------


def _put_back(value: Any, path: Path, keys: dict[str, Any]) -> Any:
    """``value`` with ``keys`` added to the object at ``path`` (returns the new root)."""
    if not path:
        return with_undeclared(value, keys)
    parent, step = _typed_at(value, path[:-1]), path[-1]
    if isinstance(parent, list):
        parent[step] = with_undeclared(parent[step], keys)  # type: ignore[index]
    elif isinstance(parent, dict):
        dict.__setitem__(parent, step, with_undeclared(parent[step], keys))
    else:
        name = _attribute(type(parent), str(step))
        setattr(parent, name, with_undeclared(getattr(parent, name), keys))
    return value


def _typed_at(value: Any, path: Path) -> Any:
    for step in path:
        if isinstance(value, (list, dict)):
            value = value[step]  # type: ignore[index]
        else:
            value = getattr(value, _attribute(type(value), str(step)))
    return value


def _attribute(cls: type, wire: str) -> str:
    """The attribute of a Struct class that holds the key ``wire``."""
    fields = cls.__struct_fields__  # type: ignore[attr-defined]
    return fields[cls.__struct_encode_fields__.index(wire)]  # type: ignore[attr-defined]


def with_undeclared(value: Any, keys: dict[str, Any]) -> Any:
    """``value`` (a decoded object) with ``keys`` added: items of a dict or open object;
    for a Struct, an instance of a subclass that declares them."""
    if isinstance(value, dict):
        for k, v in keys.items():
            dict.__setitem__(value, k, v)
        return value
    if not isinstance(value, msgspec.Struct):
        raise msgspec.ValidationError(f"cannot keep keys {sorted(keys)} on {type(value).__name__}")
    cls = type(value)
    base = getattr(cls, "__undeclared_base__", cls)
    merged = {**undeclared(value), **keys}
    taken = set(base.__struct_encode_fields__)
    tag = base.__struct_config__.tag_field
    clash = sorted(k for k in merged if k in taken or k == tag)
    if clash:  # a key the class declares, set aside: its value did not fit the class
        raise msgspec.ValidationError(f"invalid value for {clash[0]!r} of {base.__name__}")
    odd = sorted(k for k in merged if _UNNAMEABLE.search(k))
    if odd:  # msgspec cannot name a field so; refused rather than dropped
        raise msgspec.ValidationError(
            f"cannot keep the undeclared key {odd[0]!r} on {base.__name__}:"
            " keys with quotes, backslashes or control characters are not supported"
        )
    wires = tuple(sorted(merged))
    sub = _subclass(base, wires)
    fields = {f: getattr(value, f) for f in base.__struct_fields__}
    fields.update({f"undeclared_{i}": merged[w] for i, w in enumerate(wires)})
    return sub(**fields)


def _subclass(base: type[msgspec.Struct], wires: tuple[str, ...]) -> type[msgspec.Struct]:
    sub = _classes.get((base, wires))
    if sub is None:
        if len(_classes) >= MAX_CLASSES:
            _classes.clear()
        names = {f"undeclared_{i}": w for i, w in enumerate(wires)}
        sub = msgspec.defstruct(
            base.__name__,
            [(name, Any, msgspec.field(name=wire)) for name, wire in names.items()],
            bases=(base,),
            kw_only=True,
            module=base.__module__,
            namespace={"__undeclared_base__": base, "__undeclared__": names},
        )
        _classes[(base, wires)] = sub
    return sub


_classes: dict[tuple[type, tuple[str, ...]], type[msgspec.Struct]] = {}


def class_count() -> int:
    """How many subclasses carrying undeclared keys exist now (at most ``MAX_CLASSES``)."""
    return len(_classes)


def undeclared(value: Any) -> dict[str, Any]:
    """The keys of a decoded object that its definition does not declare."""
    names: dict[str, str] = getattr(type(value), "__undeclared__", {})
    if names:
        return {wire: getattr(value, name) for name, wire in names.items()}
    keys = getattr(type(value), "__keys__", None)
    if isinstance(value, dict) and keys is not None:
        declared = {spec.wire for spec in keys.values()}
        return {k: v for k, v in value.items() if k not in declared}
    return {}
