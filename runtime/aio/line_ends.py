"""The id of a stdio line too long to hold, read from its two ends.

A line over ``Limits.max_message_bytes`` is skipped as it goes by, never held whole: only
its first and last :data:`EDGE` bytes are kept. Its answer still needs the request's id,
and JSON-RPC writers put it near one end: after ``jsonrpc`` at the start, or after
``params`` at the end (the TypeScript SDK's order). So the top-level members each end shows
complete are read, the first walking forward from the start, the last walking backward from
the end, depth and strings tracked, nothing decoded but the keys and the id:

* an ``id`` (a string or an integer) at either end: the answer carries it;
* no ``id`` key at either end, but a ``method`` key: a notification, not answered;
* else (an ``id`` whose value runs into the middle, an id that is neither string nor
  integer, nothing readable): the answer's id is null.

A request whose ``id`` stands only in the middle, between two members too long to see past,
is taken for a notification when its ``method`` shows, and for nothing otherwise.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Union

import msgspec

RequestId = Union[str, int]

#: How much of each end of an oversize line is kept.
EDGE = 4096

#: One JSON token of the start of a message: a complete string, a structural character,
#: a run of anything else (numbers, literals, blanks), or a lone quote (a string cut off).
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^"{}\[\]:,]+|"', re.DOTALL)
#: After the key ``"id"``: an integer or a string, followed by what may follow a member.
_ID_VALUE = re.compile(rb'\s*:\s*(-?(?:0|[1-9][0-9]*)|"(?:[^"\\]|\\.)*")\s*[,}]', re.DOTALL)
#: The characters numbers and literals are made of.
_SCALAR = frozenset(b"-+.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_BLANK = b" \t\r\n"


class Seen(NamedTuple):
    """What one end of a line shows of its top-level object."""

    id: RequestId | None = None
    #: An ``id`` key was seen (its value may not have been).
    id_key: bool = False
    method: bool = False


def request_id(head: bytes) -> RequestId | None:
    """The ``id`` member of the top-level object that ``head`` (the start of a message)
    opens, if it appears there complete; else ``None``."""
    return from_start(head).id


def identify(head: bytes, tail: bytes) -> tuple[RequestId | None, bool]:
    """The id of a line from its first bytes ``head`` and last bytes ``tail``, and whether
    it is taken for a notification (see the module's docstring)."""
    start, end = from_start(head), from_end(tail)
    found = start.id if start.id is not None else end.id
    if found is not None:
        return found, False
    return None, (start.method or end.method) and not (start.id_key or end.id_key)


def from_start(head: bytes) -> Seen:
    """The top-level members ``head`` shows complete, read forward from the start: it walks
    the tokens of at most :data:`EDGE` bytes, tracking depth so that an ``"id"`` key
    nested in ``params`` (a tool argument, say) is not taken for the request's."""
    depth = 0
    previous = b""
    seen = Seen()
    for match in _TOKEN.finditer(head, 0, EDGE):
        token = match.group()
        if token.isspace():
            continue
        if token in (b"{", b"["):
            if depth == 0 and token == b"[":
                return seen  # a batch: no one id to answer
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return seen
        elif token == b'"':
            return seen  # a string runs past what was kept
        elif depth == 0:
            return seen  # not an object
        elif depth == 1 and previous in (b"{", b","):
            if token == b'"method"':
                seen = Seen(method=True)
            elif token == b'"id"':
                value = _ID_VALUE.match(head, match.end())
                found = _id(value.group(1)) if value is not None else None
                return Seen(found, True, seen.method)
        previous = token
    return seen


def from_end(tail: bytes) -> Seen:
    """The top-level members ``tail`` (the last bytes of a message) shows complete, read
    backward from the end, each value skipped whole (strings, nested arrays and objects)
    until one runs past what was kept."""
    end = len(tail.rstrip(_BLANK))
    if not tail[:end].endswith(b"}"):
        return Seen()  # not an object (a batch, or garbage)
    seen = Seen()
    at = end - 1  # the closing brace of the top-level object
    while True:
        value_end = _skip_blank(tail, at)
        start = _value_start(tail, value_end)
        if start is None:
            return seen
        colon = _skip_blank(tail, start)
        if not tail[:colon].endswith(b":"):
            return seen
        key_end = _skip_blank(tail, colon - 1)
        key_start = _string_start(tail, key_end)
        if key_start is None:
            return seen
        key = tail[key_start:key_end]
        if key == b'"id"':
            return Seen(_id(tail[start:value_end]), True, seen.method)
        if key == b'"method"':
            seen = Seen(method=True)
        before = _skip_blank(tail, key_start)
        if not tail[:before].endswith(b","):
            return seen  # the opening brace (every member seen), or what was cut off
        at = before - 1


def _skip_blank(data: bytes, end: int) -> int:
    """Where the blanks that end at ``end`` (exclusive) begin."""
    while end > 0 and data[end - 1] in _BLANK:
        end -= 1
    return end


def _string_start(data: bytes, end: int) -> int | None:
    """Where the string ending at ``end`` (exclusive, after its closing quote) begins: the
    first quote before it that no backslash escapes; None when the string was cut off."""
    if not data[:end].endswith(b'"'):
        return None
    at = end - 1
    while True:
        at = data.rfind(b'"', 0, at)
        if at < 0:
            return None
        before = at
        while before > 0 and data[before - 1] == 0x5C:  # a backslash
            before -= 1
        if (at - before) % 2 == 0:
            return at


def _value_start(data: bytes, end: int) -> int | None:
    """Where the value ending at ``end`` (exclusive) begins; None when it was cut off."""
    last = data[end - 1 : end]
    if last == b'"':
        return _string_start(data, end)
    if last not in (b"}", b"]"):
        start = end
        while start > 0 and data[start - 1] in _SCALAR:
            start -= 1
        return start if 0 < start < end else None  # at 0, it may have been cut off
    depth = 0
    at = end
    while at > 0:
        char = data[at - 1 : at]
        if char == b'"':
            start = _string_start(data, at)
            if start is None:
                return None
            at = start
            continue
        if char in (b"}", b"]"):
            depth += 1
        elif char in (b"{", b"["):
            depth -= 1
            if depth == 0:
                return at - 1
        at -= 1
    return None


def _id(text: bytes) -> RequestId | None:
    try:  # a malformed id (invalid UTF-8, an integer too long to convert): none
        return msgspec.json.decode(text, type=RequestId)
    except (msgspec.MsgspecError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
