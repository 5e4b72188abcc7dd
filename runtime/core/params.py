"""Params and results between versions: what a peer sent, decoded with the table's types
and turned into the application's, whichever version each side speaks.

A peer's params are validated against the peer's version first and then converted to the
version the application's handlers are typed against (a legacy session's state becomes
the modern per-request ``_meta`` on the way); params the peer's version refuses but the
application's accepts are taken too, since being liberal loses the peer nothing. Answers
to our own requests come back the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from .errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from .binding import MethodSpec
from .negotiation import VersionInfo
from .json_values import as_object
from .outgoing import Restore, reads_alike
from .capabilities import session_meta

log = logging.getLogger("mcpgen.runtime")


def validation_error(exc: msgspec.ValidationError, where: str) -> McpError:
    """-32602 with the JSON path of the problem, relative to the message, in ``data``."""
    text = str(exc)
    detail, _, path = text.partition(" - at `$")
    path = "$." + where + path.rstrip("`") if path else "$." + where
    return McpError(
        INVALID_PARAMS,
        f"Invalid params: {detail} at {path}",
        {"path": path, "detail": detail},
    )


def decode_params(raw: msgspec.Raw | None, spec: MethodSpec, version: VersionInfo) -> Any:
    """``raw`` as ``spec``'s params type of ``version`` (None for a method without)."""
    if spec.params is None:
        return None
    if raw is None:
        if spec.params_required:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {spec.name} requires params",
                {"path": "$.params"},
            )
        raw = msgspec.Raw(b"{}")
    try:
        return version.binding.types.decode(raw, spec.params)
    except msgspec.ValidationError as exc:
        raise validation_error(exc, "params") from None


def incoming_params(
    raw: msgspec.Raw | None,
    spec: MethodSpec,
    version: VersionInfo,
    local: MethodSpec,
    local_version: VersionInfo,
    session_meta: Callable[[], dict[str, Any]] | None = None,
    typed_meta: Callable[[Any], Any] | None = None,
) -> Any:
    """Params of ``spec`` (``version``, the peer's) as the application's ``local`` row
    (``local_version``) types them; ``session_meta`` gives what a legacy session knows in
    the shape of modern ``_meta``, for an application typed against a modern version.
    ``typed_meta``: that ``_meta`` already typed for a params type (a copy of its own for
    each request; None: the type has no ``_meta`` of its own), put in params that came
    with no ``_meta``, in place of converting it anew for every request."""
    if version is local_version or spec.params is None or local.params is None:
        return decode_params(raw, local, local_version)
    try:
        plain = msgspec.to_builtins(decode_params(raw, spec, version))
    except McpError:
        try:
            value = decode_params(raw, local, local_version)
        except McpError:
            pass
        else:
            log.debug("accepted %s params valid only in %s", spec.name, local_version.version)
            return value
        raise
    obj = as_object(plain)
    if session_meta is not None and obj is not None:
        meta = typed_meta(local.params) if typed_meta is not None and "_meta" not in obj else None
        if meta is not None:
            try:
                value = local_version.binding.types.convert(plain, local.params)
            except msgspec.ValidationError as exc:
                raise validation_error(exc, "params") from None
            return msgspec.structs.replace(value, meta=meta)
        obj["_meta"] = {**session_meta(), **(as_object(obj.get("_meta")) or {})}
    try:
        return local_version.binding.types.convert(plain, local.params)
    except msgspec.ValidationError as exc:
        raise validation_error(exc, "params") from None


class Settled:
    """What a legacy session settled (version, client capabilities and info) in its
    params as the application (``local``) types them: the ``_meta`` it makes, typed once
    per session and params type; params read straight into the application's type when
    both types agree on every field but ``_meta``."""

    def __init__(self, local: VersionInfo) -> None:
        self.local = local
        #: What the typed ``_meta`` were made of, and they by params type.
        self._metas_of: tuple[Any, dict[Any, Any]] = (None, {})
        #: (peer's params type, application's) → whether the one reads as the other.
        self._alike: dict[tuple[Any, Any], bool] = {}

    def reads_alike(self, peer_type: Any, local_type: Any) -> bool:
        key = (peer_type, local_type)
        alike = self._alike.get(key)
        if alike is None:
            alike = self._alike[key] = reads_alike(peer_type, local_type, "_meta")
        return alike

    def read(
        self, raw: msgspec.Raw, local: MethodSpec, version: VersionInfo, caps: Any, info: Any
    ) -> Any:
        """Params read as the application's type directly, the session's ``_meta`` in
        them; None when they must be read the general way (they fail to decode so, or
        have a ``_meta`` of their own to merge)."""
        try:
            value: Any = decode_params(raw, local, self.local)
        except McpError:  # the general way says why, in the peer's version's words
            return None
        if getattr(value, "meta", None) is not UNSET:
            return None
        meta = self.meta(local.params, version, caps, info)
        return None if meta is None else msgspec.structs.replace(value, meta=meta)

    def meta(self, params_type: Any, version: VersionInfo, caps: Any, info: Any) -> Any:
        """The session's ``_meta`` as ``params_type`` types it (a copy for one request;
        None when the type has no ``_meta`` field)."""
        key = (version, id(caps), id(info))
        if self._metas_of[0] != key:
            self._metas_of = (key, {})
        typed = self._metas_of[1]
        found = typed.get(params_type, UNSET)
        if found is UNSET:
            found = None
            field = next((f for f in _struct_fields(params_type) if f.encode_name == "_meta"), None)
            if field is not None and field.name == "meta":
                try:
                    found = self.local.binding.types.convert(
                        session_meta(version, caps, info), field.type
                    )
                except msgspec.ValidationError:  # converted with the params, it says why
                    found = None
            typed[params_type] = found
        if found is None:
            return None
        if isinstance(found, dict):  # an open object: a copy of its top level
            opened: dict[str, Any] = found  # pyright: ignore[reportUnknownVariableType]
            kind: Any = opened.__class__
            copy: dict[str, Any] = kind.__new__(kind)
            dict[str, Any].update(copy, opened)  # (the dict's own: no hook of the type's)
            return copy
        return msgspec.structs.replace(found) if isinstance(found, msgspec.Struct) else found


def _struct_fields(tp: Any) -> tuple[msgspec.structs.FieldInfo, ...]:
    """The fields of ``tp`` when it is a struct type (none otherwise)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return msgspec.structs.fields(tp)
    return ()


def answer(
    raw: msgspec.Raw,
    peer_result: Any,
    result: Any,
    restore: Restore | None,
    version: VersionInfo | None,
    local_version: VersionInfo,
) -> Any:
    """An answer to our request as the application's ``result`` type: validated at the
    peer's version (``peer_result``; failing that, at the application's: a peer answering
    in a newer form loses nothing), then ``restore``d to what the application asked for."""
    types = local_version.binding.types
    if version is None or version is local_version or peer_result is None:
        if restore is None:
            return types.decode(raw, result)
        plain = msgspec.to_builtins(types.decode(raw, result))
    else:
        try:
            peer_value = version.binding.types.decode(raw, peer_result)
        except msgspec.ValidationError:
            peer_value = types.decode(raw, result)
        plain = msgspec.to_builtins(peer_value)
    if restore is not None:
        plain = restore(plain)
    return types.convert(plain, result)


class Pending(msgspec.Struct):
    """A request sent to the peer, not answered yet: how its answer decodes."""

    method: str
    #: Result type in the peer's version and in the application's.
    peer_result: Any
    result: Any
    #: Turns the answer back into what the application asked for (see ``runtime.core.outgoing``).
    restore: Restore | None = None
    #: What the answer decodes to when the peer made the request a task (None: no task).
    task_result: Any = None


def decoded(
    raw: msgspec.Raw, pending: Pending, version: VersionInfo | None, local: VersionInfo
) -> Any:
    """The answer to ``pending`` as the application reads it (:func:`answer`), or the task
    the peer made of it; -32603 naming the problem when it is neither."""
    try:
        if pending.task_result is not None and made_a_task(raw):
            return local.binding.types.decode(raw, pending.task_result)
        return answer(raw, pending.peer_result, pending.result, pending.restore, version, local)
    except msgspec.ValidationError as exc:
        error = validation_error(exc, "result")
        message = f"Invalid result of {pending.method}: {error.message}"
        raise McpError(INTERNAL_ERROR, message, error.data) from None


class _MadeProbe(msgspec.Struct):
    resultType: Any = None
    task: Any = None


def made_a_task(raw: msgspec.Raw) -> bool:
    """Whether an answer is a task made of the request: 2025-11-25's ``{task: {...}}``,
    2026-07-28's ``resultType: "task"``."""
    if bytes(raw).find(b"task") < 0:  # (not `in`: it raises and clears a TypeError first)
        return False
    try:
        probe = msgspec.json.decode(raw, type=_MadeProbe)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return probe.resultType == "task" or isinstance(probe.task, dict)


#: Requests a 2025-11-25 requester may ask to run as a task (``params.task``).
AUGMENTABLE = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})


_NO_FIELD = object()


class _TaskProbe(msgspec.Struct):
    task: dict[str, Any] | None = None


def augmentation(raw: msgspec.Raw | None, params: Any) -> dict[str, Any] | None:
    """A request's task augmentation (2025-11-25 ``params.task``) as plain JSON, or None:
    from its decoded ``params``, or, when the application's version has no such field,
    from the ``raw`` params the peer sent."""
    found = getattr(params, "task", _NO_FIELD)
    if found is not _NO_FIELD:  # the application's version has the field: it says
        return (
            None
            if found is None or found is msgspec.UNSET
            else as_object(msgspec.to_builtins(found))
        )
    if raw is None or b'"task"' not in bytes(raw):
        return None
    try:
        return msgspec.json.decode(raw, type=_TaskProbe).task
    except msgspec.ValidationError:
        return None


class _InputRequiredProbe(msgspec.Struct):
    resultType: str
    inputRequests: dict[str, Any] = {}
    requestState: str | None = None


def asked_for_input(raw: msgspec.Raw) -> tuple[dict[str, Any], str | None] | None:
    """The input requests and state of a modern ``input_required`` answer, or None when
    ``raw`` is another answer (the final result)."""
    if bytes(raw).find(b"input_required") < 0:  # (not `in`: see made_a_task)
        return None
    try:
        asked = msgspec.json.decode(raw, type=_InputRequiredProbe)
    except msgspec.ValidationError:
        return None
    if asked.resultType != "input_required":
        return None
    return asked.inputRequests, asked.requestState
