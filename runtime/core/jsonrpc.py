"""JSON-RPC 2.0 framing, sans-IO: bytes in, small message objects out, and back.

Decoding reads the envelope only; ``params`` and ``result`` stay ``msgspec.Raw`` until the
dispatch table names their type, so no message is ever decoded through a union of every
request.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Union

import msgspec
from msgspec import UNSET, UnsetType

from . import json_skim
from .errors import INVALID_REQUEST, PARSE_ERROR, McpError
from .limits import DEFAULT
from .json_values import as_object

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
    """Not a valid message; answer with this error (``id`` as far as it could be read),
    unless it is a ``notification`` (a string ``method`` and no ``id``): nobody waits for
    an answer to one, whatever else is wrong with it."""

    id: RequestId | None
    code: int
    message: str
    notification: bool = False


Message = Union[Request, Notification, Response, ErrorResponse, Invalid]

_decoder = msgspec.json.Decoder(Union[_Envelope, list[msgspec.Raw]])
_envelope = msgspec.json.Decoder(_Envelope)


#: The first byte of a JSON object or array (``params`` must be one of them).
_STRUCTURED = (ord("{"), ord("["))


def _classify(env: _Envelope) -> Message:
    rid = env.id
    if type(rid) is not str and type(rid) is not int:  # JSON gives exact types (no bool)
        rid = None
    method = env.method
    # A notification names its method (a string) and has no id: nobody awaits its answer.
    # A non-string method names nothing: an invalid request, answered (id null).
    notified = type(method) is str and env.id is UNSET
    if env.jsonrpc != "2.0":
        return Invalid(rid, INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"', notified)
    if method is not UNSET:
        if type(method) is not str:
            why = "Invalid request: method must be a string"
            return Invalid(rid, INVALID_REQUEST, why, notified)
        if env.result is not UNSET or env.error is not UNSET:
            why = "Invalid request: method with result or error"
            return Invalid(rid, INVALID_REQUEST, why, notified)
        params = env.params
        if params is UNSET:
            params = None
        elif memoryview(params)[0] not in _STRUCTURED:
            why = "Invalid request: params must be an object"
            return Invalid(rid, INVALID_REQUEST, why, notified)
        if notified:
            return Notification(method, params)
        if rid is None:
            return Invalid(None, INVALID_REQUEST, "Invalid request: id must be a string or integer")
        return Request(rid, method, params)
    if env.result is not UNSET and env.error is UNSET and rid is not None:
        return Response(rid, env.result)
    if env.error is not UNSET and env.result is UNSET:
        error = as_object(env.error) or {}
        code, text = error.get("code"), error.get("message")
        if isinstance(code, int) and isinstance(text, str):
            return ErrorResponse(rid, code, text, error.get("data", UNSET))
    return Invalid(rid, INVALID_REQUEST, "Invalid request: not a request, notification or response")


#: A decoded frame: its messages, and whether it was a batch.
Parsed = tuple[list[Message], bool]

#: A JSON string, escapes included; an unterminated one runs to the end, so the pattern
#: always matches from a quote and scanning stays linear whatever the input.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)')
#: Brackets to +1 / -1 (as signed bytes), everything else deleted.
_BRACKETS = bytes.maketrans(b"[{]}", b"[[]]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_RUNS = re.compile(rb"\[+|\]+")
#: Passes that take the innermost pairs away before the runs are counted (see depth).
_PASSES = 32


def answered(message: Message) -> bool:
    """Whether ``message`` gets an answer: a request does, so does an invalid message that
    is not a notification."""
    return type(message) is Request or (type(message) is Invalid and not message.notification)


def request_ids(messages: list[Message]) -> list[RequestId]:
    """The ids of the requests among ``messages`` (a batch's, or one's)."""
    return [m.id for m in messages if isinstance(m, Request)]


def depth(frame: bytes) -> int:
    """How deeply arrays and objects nest in ``frame`` (brackets inside strings aside)."""
    shape = _STRING.sub(b"", frame).translate(_BRACKETS, _NOT_BRACKETS)
    # Each pass takes every innermost pair away, and so one level off the deepest (in
    # JSON text; what is not JSON is answered -32700 whatever this says): passes run at
    # C speed while they shorten the shape much, then its runs of brackets are counted.
    passes = 0
    while passes < _PASSES:
        shorter = shape.replace(b"[]", b"")
        if len(shorter) == len(shape):
            break
        passes += 1
        cancelled, shape = len(shape) - len(shorter), shorter
        if cancelled * 16 < len(shape):
            break
    deepest = level = 0
    for run in _RUNS.findall(shape):
        level += len(run) if run[:1] == b"[" else -len(run)
        deepest = max(deepest, level)
    return passes + deepest


_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")


def elements(frame: bytes, limit: int) -> int:
    """How many elements the (non-empty) top-level array ``frame`` holds, counted up to
    ``limit + 1``: enough to tell a batch over the limit before decoding it into that many
    objects."""
    shape = _STRING.sub(b"", frame).translate(None, _STRUCTURE)
    count, depth = 1, 0
    for byte in shape:
        if byte in b"[{":
            depth += 1
        elif byte in b"]}":
            depth -= 1
        elif depth == 1:  # a comma between two elements
            count += 1
            if count > limit:
                break
    return count


def refusal(frame: bytes | str, max_depth: int = DEFAULT.max_depth) -> Invalid | None:
    """Why ``frame`` must be refused before any decoder sees it, or None.

    JSON text is UTF-8 (a frame that is not is a parse error, even where the envelope
    decoder would skip the bytes), and nesting beyond ``max_depth`` is refused up front:
    every later pass over the message (decoders, hooks, re-shaping) recurses with it.
    An ordinary frame (ASCII, few brackets) passes a cheap test and costs no more. The
    answer to a frame refused for its nesting is :func:`parse`'s (its syntax first).
    """
    data = frame.encode() if isinstance(frame, str) else frame
    # (find, not `in`: bytes.__contains__ raises and clears a TypeError first)
    openers = data.count(b"{") + (data.count(b"[") if data.find(b"[") >= 0 else 0)
    if openers <= max_depth and data.isascii():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Invalid(None, PARSE_ERROR, f"Parse error: invalid UTF-8 at byte {exc.start}")
    if openers > max_depth and depth(data) > max_depth:
        return Invalid(
            None, INVALID_REQUEST, f"Invalid request: JSON nested deeper than {max_depth} levels"
        )
    return None


def parse(
    frame: bytes | str, max_depth: int = DEFAULT.max_depth, max_batch: int = DEFAULT.max_batch
) -> Parsed:
    """Decode one frame; returns the messages and whether the frame was a batch.

    Never raises: whatever the bytes, the answer is messages, :class:`Invalid` ones
    carrying the error the peer is to get. Syntax comes before limits: what is not JSON
    is a parse error however deep or long; JSON refused for a limit carries the id its
    top level shows (a notification's refusal is marked, to go unanswered).
    """
    data = frame.encode() if isinstance(frame, str) else frame
    refused = refusal(data, max_depth)
    if refused is not None:
        return [_unread(data, refused)], False
    first = data[:1]
    if (first == b"[" or (first.isspace() and data.lstrip()[:1] == b"[")) and data.count(
        b","
    ) >= max_batch:
        # counted before decoding: a long batch of tiny elements decodes into many objects
        if elements(data, max_batch) > max_batch:
            return [_unread(data, _long_batch(f"more than {max_batch}", max_batch))], False
    try:
        decoded = _decoder.decode(data)
    except Exception:  # msgspec.DecodeError or ValidationError, or anything else it may raise
        return [_unread(data, _UNDECODABLE)], False
    if isinstance(decoded, _Envelope):
        return [_classify(decoded)], False
    if not decoded:
        return [Invalid(None, INVALID_REQUEST, "Invalid request: empty batch")], False
    if len(decoded) > max_batch:
        return [_long_batch(str(len(decoded)), max_batch)], False
    out: list[Message] = []
    for raw in decoded:
        try:
            out.append(_classify(_envelope.decode(raw)))
        except msgspec.DecodeError:  # or a ValidationError
            element = bytes(raw)  # an array is no message; else a value it cannot hold
            out.append(_unread(element, _NOT_OBJECT if element[:1] == b"[" else _UNDECODABLE))
    return out, True


class PlainRequest(msgspec.Struct, forbid_unknown_fields=True):
    """One request as :func:`plain_request` reads it: the envelope typed, nothing else in
    it; ``params`` empty when absent."""

    jsonrpc: Literal["2.0"]
    id: Union[int, str]
    method: str
    params: msgspec.Raw = msgspec.Raw(b"")


_plain = msgspec.json.Decoder(PlainRequest)


def plain_request(data: bytes, max_depth: int = DEFAULT.max_depth) -> PlainRequest | None:
    """``data`` when it is one valid request as :func:`parse` reads it (an object, ASCII,
    nested no deeper than ``refusal`` lets pass without looking closer, holding the keys
    of a request alone, ``params`` absent or structured), in one typed decode; None for
    anything else, which :func:`parse` reads (and refuses, when it must)."""
    if data.count(b"{") + data.count(b"[") > max_depth or not data.isascii():
        return None
    try:
        request = _plain.decode(data)
    except Exception:  # not a plain request: parse() says what it is
        return None
    params = request.params
    if params and memoryview(params)[0] not in _STRUCTURED:
        return None
    return request


def _long_batch(count: str, limit: int) -> Invalid:
    message = f"Invalid request: a batch of {count} messages (the limit is {limit})"
    return Invalid(None, INVALID_REQUEST, message)


#: Why JSON the decoder cannot take is refused: a value it cannot hold.
_UNDECODABLE = Invalid(
    None, INVALID_REQUEST, "Invalid request: a value out of range (a number, an unpaired surrogate)"
)
_NOT_JSON = Invalid(None, PARSE_ERROR, "Parse error: invalid JSON")
_NOT_OBJECT = Invalid(None, INVALID_REQUEST, "Invalid request: not a JSON object")


def _unread(data: bytes, refused: Invalid) -> Invalid:
    """The answer to a frame no decoder read, ``refused`` saying why: -32700 when it is not
    JSON at all, whatever else is wrong with it; else the refusal, carrying the id its top
    level shows and marked when that is a notification's (``json_skim``: no recursion, and
    nothing of the frame built)."""
    if refused.code == PARSE_ERROR:
        return refused
    if not json_skim.is_json(data):
        return _NOT_JSON
    if data.lstrip()[:1] not in (b"{", b"["):
        return _NOT_OBJECT
    request_id, notification = json_skim.top_level(data)
    return Invalid(request_id, refused.code, refused.message, notification)


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


def encode_mcp_error(request_id: RequestId | None, error: McpError) -> bytes:
    """An error response carrying ``error`` (its code, message and data)."""
    return encode_error(request_id, error.code, error.message, error.data)
