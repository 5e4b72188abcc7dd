"""JSON-RPC 2.0 framing, sans-IO: bytes in, small message objects out, and back.

Decoding reads the envelope only; ``params`` and ``result`` stay ``msgspec.Raw`` until the
dispatch table names their type, so no message is ever decoded through a union of every
request.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import UNSET, UnsetType

from .errors import INVALID_REQUEST, PARSE_ERROR

RequestId = Union[str, int]


class _Envelope(msgspec.Struct):
    """Every key any JSON-RPC message may have, each optional and loosely typed."""

    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: Any = UNSET


class Request(msgspec.Struct, frozen=True):
    id: RequestId
    method: str
    params: msgspec.Raw | None


class Notification(msgspec.Struct, frozen=True):
    method: str
    params: msgspec.Raw | None


class Response(msgspec.Struct, frozen=True):
    id: RequestId
    result: msgspec.Raw


class ErrorResponse(msgspec.Struct, frozen=True):
    id: RequestId | None
    code: int
    message: str
    data: Any = UNSET


class Invalid(msgspec.Struct, frozen=True):
    """Not a valid message; answer with this error (``id`` as far as it could be read)."""

    id: RequestId | None
    code: int
    message: str


Message = Union[Request, Notification, Response, ErrorResponse, Invalid]

_decoder = msgspec.json.Decoder(Union[_Envelope, list[msgspec.Raw]])
_envelope = msgspec.json.Decoder(_Envelope)


#: The first byte of a JSON object or array (``params`` must be one of them).
_STRUCTURED = (ord("{"), ord("["))


def _classify(env: _Envelope) -> Message:
    rid = env.id
    if type(rid) is not str and type(rid) is not int:  # JSON gives exact types (no bool)
        rid = None
    if env.jsonrpc != "2.0":
        return Invalid(rid, INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"')
    method = env.method
    if method is not UNSET:
        if type(method) is not str:
            return Invalid(rid, INVALID_REQUEST, "Invalid request: method must be a string")
        if env.result is not UNSET or env.error is not UNSET:
            return Invalid(rid, INVALID_REQUEST, "Invalid request: method with result or error")
        params = env.params
        if params is UNSET:
            params = None
        elif memoryview(params)[0] not in _STRUCTURED:
            return Invalid(rid, INVALID_REQUEST, "Invalid request: params must be an object")
        if env.id is UNSET:
            return Notification(method, params)
        if rid is None:
            return Invalid(None, INVALID_REQUEST, "Invalid request: id must be a string or integer")
        return Request(rid, method, params)
    if env.result is not UNSET and env.error is UNSET and rid is not None:
        return Response(rid, env.result)
    if env.error is not UNSET and env.result is UNSET:
        error = env.error
        if (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            return ErrorResponse(rid, error["code"], error["message"], error.get("data", UNSET))
    return Invalid(rid, INVALID_REQUEST, "Invalid request: not a request, notification or response")


#: A decoded frame: its messages, and whether it was a batch.
Parsed = tuple[list[Message], bool]


def parse(frame: bytes | str) -> Parsed:
    """Decode one frame; returns the messages and whether the frame was a batch."""
    try:
        decoded = _decoder.decode(frame)
    except msgspec.ValidationError:
        return [Invalid(None, INVALID_REQUEST, "Invalid request: not a JSON object")], False
    except msgspec.DecodeError:
        return [Invalid(None, PARSE_ERROR, "Parse error: invalid JSON")], False
    if isinstance(decoded, _Envelope):
        return [_classify(decoded)], False
    if not decoded:
        return [Invalid(None, INVALID_REQUEST, "Invalid request: empty batch")], False
    out: list[Message] = []
    for raw in decoded:
        try:
            out.append(_classify(_envelope.decode(raw)))
        except msgspec.DecodeError:
            out.append(Invalid(None, INVALID_REQUEST, "Invalid request: not a JSON object"))
    return out, True


# -- encoding ---------------------------------------------------------------------------


class _OutRequest(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _OutNotification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _OutResult(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _OutErrorObject(msgspec.Struct):
    code: int
    message: str
    data: Any = UNSET


class _OutError(msgspec.Struct):
    jsonrpc: str
    id: RequestId | None
    error: _OutErrorObject


_encode = msgspec.json.Encoder().encode


def encode_request(request_id: RequestId, method: str, params: Any = UNSET) -> bytes:
    """``params`` of ``None`` or ``UNSET`` is left out (JSON-RPC has no null params)."""
    return _encode(_OutRequest("2.0", request_id, method, UNSET if params is None else params))


def encode_notification(method: str, params: Any = UNSET) -> bytes:
    return _encode(_OutNotification("2.0", method, UNSET if params is None else params))


def encode_result(request_id: RequestId, result: Any) -> bytes:
    return _encode(_OutResult("2.0", request_id, result))


def encode_error(request_id: RequestId | None, code: int, message: str, data: Any = UNSET) -> bytes:
    return _encode(_OutError("2.0", request_id, _OutErrorObject(code, message, data)))


def encode_batch(frames: list[bytes]) -> bytes:
    return b"[" + b",".join(frames) + b"]"
