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
            value = self.reshape(value, peer_type, version, f"{method} result")
        elif not isinstance(value, msgspec.Struct):  # a dict: validate it, and type it
            value = express(msgspec.to_builtins(value), peer_type, version, f"{method} result")
        value = self.fill(value, method)
        key = version.rules.result_type_key
        if key is not None and not self._declares(value.__class__, key):
            # a type of no version's own (an extension's): the era's key added
            return {**msgspec.to_builtins(value), key: "complete"}
        return value

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
