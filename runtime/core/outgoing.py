"""What goes on the wire is valid at the peer's version, whatever a handler returned or
asked for.

Handlers are written against one version's types; peers speak others. Each outgoing
result or request passes through, each step only where it is needed:

* **re-shaping**: a value of the application's version becomes the peer version's type
  (fields that version lacks are dropped), which also validates it;
* **expressing**: a construct the peer's version cannot express is converted to the
  nearest form it can (audio content to an embedded resource, a resource link or an
  embedded resource to text, …), found where the peer's types reject the value; what
  cannot be converted is refused with a server-side error, never sent as is;
* **filling**: fields the peer's schema requires but the bindings let a handler leave out
  (the 2026-07-28 caching hints ``ttlMs``/``cacheScope``) come from a :class:`CachePolicy`.

Answers to our own requests come back the other way (:class:`Restore`), in the form the
peer's version allows, turned back into what the handler asked for.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET

from . import elicitation
from .errors import INTERNAL_ERROR, McpError
from .negotiation import VersionInfo
from .json_values import as_array, as_object

log = logging.getLogger("mcpgen.runtime")

#: A repair is tried at most this often per value (each fixes one rejected construct).
MAX_REPAIRS = 64


class CacheHint(msgspec.Struct, frozen=True):
    """How long, and by whom, a result may be cached (2026-07-28 ``ttlMs``, ``cacheScope``)."""

    ttl_ms: int = 0
    scope: Literal["private", "public"] = "private"


class CachePolicy(msgspec.Struct, frozen=True):
    """The caching hints a server gives results whose handler set none: ``default``, or
    the hint for the request's method in ``methods`` (e.g. ``{"tools/list":
    CacheHint(60_000, "public")}``). A handler sets them per result on the result itself.
    The default caches nothing and shares nothing (``ttlMs`` 0, ``private``)."""

    default: CacheHint = CacheHint()
    methods: Mapping[str, CacheHint] = msgspec.field(default_factory=dict[str, CacheHint])

    def hint(self, method: str) -> CacheHint:
        return self.methods.get(method, self.default)


#: Fields a result must carry where its schema declares them, though the bindings let a
#: handler leave them out (``schema/overrides.json``: ``optional_fields``), and where their
#: value comes from. Keyed by wire name: every result type of every version that declares
#: the field gets it.
FILLED: Mapping[str, Callable[[CacheHint], Any]] = {
    "ttlMs": lambda hint: hint.ttl_ms,
    "cacheScope": lambda hint: hint.scope,
}


def _fill_plan(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of the ``FILLED`` fields a result type declares."""
    if not issubclass(cls, msgspec.Struct):
        return ()
    fields = zip(cls.__struct_fields__, cls.__struct_encode_fields__)
    return tuple((name, wire) for name, wire in fields if wire in FILLED)


# -- results a peer's version takes as they are ------------------------------------------

#: How a result type goes out as another version's type without conversion: the fields
#: (attributes) the target lacks, left out by being made unset; the fields whose types
#: differ, which must be unset for the value to go out as it is; the lists of structs
#: whose items must be of the classes given (those both versions shape alike).
Direct = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, frozenset[type]], ...]]


#: Pairs of types whose direct plans are kept (all forgotten when one more comes).
MAX_DIRECT_PLANS = 256


def direct_plan(source: type, target: Any) -> Direct | None:
    """How a value of ``source`` (a struct type) goes out as ``target`` as it is, when the
    two agree on every field they share but those whose types differ (then unset in the
    value); None when they cannot (fields in another order, a field the target requires
    that the source may lack, or one whose type differs that the source requires).
    Worked out once per pair of types from the types alone: a value need not be tried."""
    try:
        s, t = mi.type_info(source), mi.type_info(target)
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(s, mi.StructType) or not isinstance(t, mi.StructType):
        return None
    if _shape(s) != _shape(t):
        return None
    wanted = {f.encode_name: f for f in t.fields}
    drops: list[str] = []
    checks: list[str] = []
    lists: list[tuple[str, frozenset[type]]] = []
    kept: list[str] = []
    for f in s.fields:
        other = wanted.get(f.encode_name)
        if other is None:  # left out: an unset field does not go out
            drops.append(f.name)
            continue
        kept.append(f.encode_name)
        same = (f.required, f.default) == (other.required, other.default)
        try:
            same = same and same_type(f.type, other.type, set())
        except RecursionError:
            same = False
        if not same:
            alike = _alike_items(f.type, other.type) if f.required == other.required else None
            if alike:
                lists.append((f.name, alike))
            elif f.required or other.required:
                return None
            else:
                checks.append(f.name)
    order = [f.encode_name for f in t.fields if f.encode_name in kept]
    if order != kept or any(f.required and f.encode_name not in kept for f in t.fields):
        return None
    return tuple(drops), tuple(checks), tuple(lists)


def _alike_items(a: mi.Type, b: mi.Type) -> frozenset[type] | None:
    """For two lists of structs (or of unions of them): the item classes of ``a`` shaped
    as the member of ``b`` with the same tag is (None when they are no such lists)."""
    if not isinstance(a, mi.ListType) or not isinstance(b, mi.ListType):
        return None
    if (a.min_length, a.max_length) != (b.min_length, b.max_length):
        return None
    theirs = _members(b.item_type)
    if theirs is None:
        return None
    by_tag = {(m.tag_field, m.tag): m for m in theirs}
    alike: set[type] = set()
    for member in _members(a.item_type) or ():
        other = by_tag.get((member.tag_field, member.tag))
        try:
            if other is not None and same_type(member, other, set()):
                alike.add(member.cls)
        except RecursionError:
            pass
    return frozenset(alike) or None


def _members(t: mi.Type) -> list[mi.StructType] | None:
    """The struct types a value of ``t`` is one of (None: not only structs)."""
    members = t.types if isinstance(t, mi.UnionType) else (t,)
    if not all(isinstance(m, mi.StructType) for m in members):
        return None
    return [m for m in members if isinstance(m, mi.StructType)]


def same_type(a: mi.Type, b: mi.Type, seen: set[tuple[int, int]]) -> bool:
    """Whether values of ``a`` encode as values of ``b`` of the same JSON (two versions'
    types of one shape: the same fields, in the same order, of the same types)."""
    if isinstance(a, mi.StructType) and isinstance(b, mi.StructType):
        if a.cls is b.cls or (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        if _shape(a) != _shape(b):
            return False
        if len(a.fields) != len(b.fields):
            return False
        return all(
            (x.encode_name, x.name, x.required, x.default)
            == (y.encode_name, y.name, y.required, y.default)
            and same_type(x.type, y.type, seen)
            for x, y in zip(a.fields, b.fields)
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, mi.UnionType) and isinstance(b, mi.UnionType):
        return len(a.types) == len(b.types) and all(
            same_type(x, y, seen) for x, y in zip(a.types, b.types)
        )
    if isinstance(a, _ARRAYS) and isinstance(b, _ARRAYS):
        return (a.min_length, a.max_length) == (b.min_length, b.max_length) and same_type(
            a.item_type, b.item_type, seen
        )
    if isinstance(a, mi.DictType) and isinstance(b, mi.DictType):
        return (
            (a.min_length, a.max_length) == (b.min_length, b.max_length)
            and same_type(a.key_type, b.key_type, seen)
            and same_type(a.value_type, b.value_type, seen)
        )
    if isinstance(a, (mi.CustomType, mi.StructType, mi.TypedDictType, mi.DataclassType)):
        return getattr(a, "cls", None) is getattr(b, "cls", None)
    if isinstance(a, (mi.NamedTupleType, mi.TupleType)):
        return a == b  # (rare in results: equal only when their classes are too)
    return a == b  # scalars, literals, enums: their constraints, compared


_ARRAYS = (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)


def _shape(t: mi.StructType) -> tuple[Any, ...]:
    """What of a struct type's own settings shapes its JSON, beside its fields."""
    config = getattr(t.cls, "__struct_config__", None)
    return (t.tag_field, t.tag, t.array_like, getattr(config, "omit_defaults", None))


def reads_alike(source: Any, target: Any, but: str) -> bool:
    """Whether every value of struct type ``source`` (its field ``but`` aside) decodes as
    ``target`` to the same value, or fails to: each field of the one is a field of the
    other, of the same type (or one the other refuses, as unknown), and the other
    requires no field of its own. Then a value of ``source``'s JSON is read as
    ``target`` directly, and only one that fails is read the general way."""
    try:
        s, t = mi.type_info(source), mi.type_info(target)
        if not isinstance(s, mi.StructType) or not isinstance(t, mi.StructType):
            return False
        theirs = {f.encode_name: f for f in t.fields}
        ours = {f.encode_name for f in s.fields}
        if any(f.required and f.encode_name not in ours for f in t.fields):
            return False
        for f in s.fields:
            other = theirs.get(f.encode_name)
            if f.encode_name == but or (other is None and t.forbid_unknown_fields):
                continue  # (one the target lacks fails its decode: read the general way)
            if other is None or (f.required, f.default) != (other.required, other.default):
                return False
            if not same_type(f.type, other.type, set()):
                return False
        return True
    except (TypeError, ValueError, RecursionError):
        return False


# -- expressing what a version cannot ----------------------------------------------------


#: The URI of audio content sent as an embedded resource (it has none of its own).
AUDIO_URI = "urn:mcpgen:audio-content"


def _blob_resource(node: dict[str, Any], version: VersionInfo) -> dict[str, Any] | None:
    """Audio content as an embedded resource holding the same bytes."""
    if not hasattr(version.binding.types, "EmbeddedResource"):
        return None
    mime = node.get("mimeType", "application/octet-stream")
    return {
        "type": "resource",
        "resource": {"uri": AUDIO_URI, "mimeType": mime, "blob": node.get("data", "")},
    }


def _as_text(node: dict[str, Any], version: VersionInfo) -> dict[str, Any] | None:
    """Content a version cannot carry, said in words (with what it held where that is
    text: an embedded text resource keeps its text)."""
    kind = node.get("type")
    if kind == "resource":
        resource = as_object(node.get("resource")) or {}
        uri = resource.get("uri", "")
        text = resource.get("text")
        if isinstance(text, str):
            return {"type": "text", "text": text}
        what = f"resource {uri} ({resource.get('mimeType', 'binary')})"
    elif kind == "resource_link":
        what = f"resource link {node.get('uri', '')} ({node.get('name', '')})"
    else:
        what = f"{kind} content ({node.get('mimeType', '')})"
    return {"type": "text", "text": f"[{what}: not expressible in protocol {version.version}]"}


class Repair(msgspec.Struct, frozen=True):
    """Turns a content block of type ``kind`` into ``into``'s output where the peer's types
    rejected it; ``unless`` names a definition whose presence in the peer's version means
    the construct is expressible there (so a rejection is a real defect, not a repair)."""

    kind: str
    into: Callable[[dict[str, Any], VersionInfo], dict[str, Any] | None]
    unless: str | None = None


#: Tried in order on the node the peer's types rejected (and its parents): audio becomes
#: an embedded resource, and where that is not allowed either, text.
REPAIRS: tuple[Repair, ...] = (
    Repair("audio", _blob_resource, unless="AudioContent"),
    Repair("audio", _as_text, unless="AudioContent"),
    Repair("resource_link", _as_text, unless="ResourceLink"),
    Repair("resource", _as_text),
    Repair("tool_use", _as_text, unless="ToolUseContent"),
    Repair("tool_result", _as_text, unless="ToolResultContent"),
)

_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _path_of(message: str) -> list[str | int | None] | None:
    """The segments of the JSON path a validation error names (None: a map key msgspec
    did not spell out; the whole path None when there is none)."""
    found = re.search(r" - at `\$([^`]*)`", message)
    if found is None:
        return [] if "Expected" in message or "Invalid" in message else None
    out: list[str | int | None] = []
    for name, index in _SEGMENT.findall(found.group(1)):
        out.append(name if name else (None if index == "..." else int(index)))
    return out


def _candidates(root: Any, path: list[str | int | None]) -> list[tuple[Any, Any]]:
    """(container, key) of every node the path may name, deepest first."""
    levels: list[list[tuple[Any, Any]]] = []
    current: list[Any] = [root]
    for segment in path:
        step: list[tuple[Any, Any]] = []
        for node in current:
            obj, array = as_object(node), as_array(node)
            if segment is None and obj is not None:
                step += [(obj, key) for key in obj]
            elif isinstance(segment, int) and array is not None and segment < len(array):
                step.append((array, segment))
            elif isinstance(segment, str) and obj is not None and segment in obj:
                step.append((obj, segment))
        if not step:
            break
        levels.append(step)
        current = [container[key] for container, key in step]
    return [pair for level in reversed(levels) for pair in level]


def _repair(root: Any, error: str, version: VersionInfo, tried: set[tuple[int, str]]) -> bool:
    """Apply the first repair that matches a node on the rejected path; False if none."""
    path = _path_of(error)
    if path is None:
        return False
    types = version.binding.types
    for container, key in _candidates(root, path):
        node = as_object(container[key])
        if node is None:
            continue
        for index, repair in enumerate(REPAIRS):
            if node.get("type") != repair.kind or (id(node), str(index)) in tried:
                continue
            if repair.unless is not None and hasattr(types, repair.unless):
                continue
            tried.add((id(node), str(index)))
            replacement = repair.into(node, version)
            if replacement is not None:
                container[key] = replacement
                log.info(
                    "sending %s content as %s: protocol %s cannot express it",
                    repair.kind,
                    replacement["type"],
                    version.version,
                )
                return True
    return False


def express(plain: Any, peer_type: Any, version: VersionInfo, what: str, source: Any = None) -> Any:
    """``plain`` (builtins of a ``source`` type, if known) as ``peer_type`` of ``version``, with
    every construct that version cannot express converted; raises ``McpError`` (internal
    error, details logged here) when the value cannot be made valid."""
    tried: set[tuple[int, str]] = set()
    for _ in range(MAX_REPAIRS):
        try:
            return version.binding.types.reshape(plain, peer_type, source)
        except msgspec.ValidationError as exc:
            if _repair(plain, str(exc), version, tried):
                continue
            log.error(
                "cannot send %s in protocol %s: %s (refused instead of sent invalid)",
                what,
                version.version,
                exc,
            )
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: the {what} cannot be expressed in protocol {version.version}",
            ) from None
    raise McpError(INTERNAL_ERROR, f"Internal error: too many repairs of {what}")


# -- answers to our own requests -----------------------------------------------------------


#: Turns an answer (plain JSON, as the peer's version allows it) back into the form the
#: handler asked for.
Restore = Callable[[Any], Any]


class Verbatim(msgspec.Struct, frozen=True):
    """An answer already in the peer's wire form, sent as it is (not checked against the
    method's result type): e.g. a task handle answering a task-augmented ``tools/call``."""

    value: Any


class Wire:
    """The outgoing side of one connection: ``local`` is the application's version."""

    def __init__(self, local: VersionInfo, cache: CachePolicy | None = None) -> None:
        self.local = local
        self.cache = cache or CachePolicy()
        self._plans: dict[type, tuple[tuple[str, str], ...]] = {}
        self._keys: dict[type, bool] = {}
        #: (result type, peer's type) → how a value goes out as it is (``direct_plan``).
        self._directs: dict[tuple[type, Any], Direct | None] = {}
        #: Struct types of the application's version that go out as they are (no field to
        #: fill): an answer of one needs no work when the peer speaks that version.
        self.as_is: set[type] = set()

    def reshape(self, value: Any, peer_type: Any, version: VersionInfo, what: str) -> Any:
        """A value of the application's types as the peer version's ``peer_type``."""
        plain = msgspec.to_builtins(value)
        key = self.local.rules.result_type_key
        obj = as_object(plain)
        if key and key != version.rules.result_type_key and obj is not None:
            obj.pop(key, None)
        return express(plain, peer_type, version, what, value.__class__)

    def result(self, value: Any, method: str, version: VersionInfo, peer_type: Any) -> Any:
        """The answer to ``method`` as the peer's version must see it."""
        if value is None or peer_type is None:
            return value
        if type(value) is Verbatim:
            return value.value
        if version is not self.local:
            if version.rules.result_type_key is None and isinstance(value, msgspec.Struct):
                same = self._direct(value, peer_type)
                if same is not None:
                    return same
            value = self.reshape(value, peer_type, version, f"{method} result")
        elif not isinstance(value, msgspec.Struct):  # a dict: validate it, and type it
            value = express(msgspec.to_builtins(value), peer_type, version, f"{method} result")
        value = self.fill(value, method)
        key = version.rules.result_type_key
        if key is not None and not self._declares(value.__class__, key):
            # a type of no version's own (an extension's): the era's key added
            return {**msgspec.to_builtins(value), key: "complete"}
        return value

    def _direct(self, value: msgspec.Struct, peer_type: Any) -> Any:
        """``value`` as it goes out as ``peer_type`` when the types allow it as it is (the
        fields that type lacks unset; see :func:`direct_plan`); None otherwise."""
        key = (value.__class__, peer_type)
        plan = self._directs.get(key, UNSET)
        if plan is UNSET:
            plan = None
            if not _fill_plan(peer_type):  # (a field to fill: the general way fills it)
                plan = direct_plan(value.__class__, peer_type)
            if len(self._directs) >= MAX_DIRECT_PLANS:
                self._directs.clear()
            self._directs[key] = plan
        if plan is None:
            return None
        drops, checks, lists = plan
        for name in checks:
            if getattr(value, name) is not UNSET:
                return None
        for name, classes in lists:
            items = getattr(value, name)
            # (issuperset walks the items in C: no generator per list, per answer)
            if items is not UNSET and not classes.issuperset(map(type, items)):
                return None
        unset: dict[str, Any] = {}
        for name in drops:
            if getattr(value, name) is not UNSET:
                unset[name] = UNSET
        return msgspec.structs.replace(value, **unset) if unset else value

    def _declares(self, cls: type[Any], key: str) -> bool:
        """Whether results of type ``cls`` carry ``key`` themselves (remembered)."""
        found = self._keys.get(cls)
        if found is None:
            found = self._keys[cls] = key in getattr(cls, "__struct_encode_fields__", ())
        return found

    def fill(self, value: Any, method: str) -> Any:
        """``value`` with the ``FILLED`` fields its type declares and it lacks."""
        cls: type[Any] = value.__class__
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plans[cls] = _fill_plan(cls)
            key = self.local.rules.result_type_key
            if (
                not plan
                and issubclass(cls, msgspec.Struct)
                and (key is None or self._declares(cls, key))
            ):
                self.as_is.add(cls)
        if not plan:
            return value
        hint = self.cache.hint(method)
        missing = {name: FILLED[wire](hint) for name, wire in plan if getattr(value, name) is UNSET}
        return msgspec.structs.replace(value, **missing) if missing else value

    def request(
        self, method: str, params: Any, peer_type: Any, version: VersionInfo
    ) -> tuple[Any, Restore | None]:
        """Params of a request to the peer, and how to restore its answer (None: as is)."""
        if params is None or peer_type is None:
            return params, None
        restore = None
        if method == elicitation.METHOD:
            plain = msgspec.to_builtins(params)
            plain, restore = elicitation.downgrade(plain, version)
            params = plain
        elif version is self.local:
            return params, None
        return self.reshape(params, peer_type, version, f"{method} request"), restore
