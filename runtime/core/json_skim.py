"""What a frame no decoder may read still tells: whether it is JSON at all, and what its top
level says (the request's id; whether it is a notification).

A frame nested deeper than the limit, or holding what the decoder cannot represent (a number
out of range, an unpaired surrogate), is refused unread; yet the answer depends on it: text
that is not JSON gets -32700, a request its own id, a notification nothing. Both questions
are answered here without recursion and without building anything of the frame, on hostile
input, in time linear in its length:

* :func:`is_json` checks RFC 8259 syntax. Strings and scalars are checked by regular
  expressions and stood for by one letter each, leaving a skeleton of brackets, commas,
  colons and values; which token may follow which is checked on that skeleton, and the
  nesting by a stack of bracket runs (each comma turned into a close and a reopen of its
  container, so a comma in the wrong container is a mismatched bracket).
* :func:`top_level` finds the ``"id"`` and ``"method"`` keys of the top-level object: each
  such key is found by a search, and its depth by counting the brackets (outside strings)
  since the previous one, for at most :data:`MAX_KEYS` keys.
"""

from __future__ import annotations

import re
from typing import Union

import msgspec

RequestId = Union[str, int]

#: A JSON string as RFC 8259 has it: only the escapes it lists, no control character (the
#: others are refused in the whole text first).
_STRING = re.compile(rb'"[^"\\\t\n\r]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\t\n\r]*)*"')
#: The bytes that stand nowhere in JSON text: the control characters but whitespace.
_CONTROL = bytes(c for c in range(32) if c not in b" \t\n\r")
#: What is left of the text once strings are gone: structure, whitespace, scalars. Apart,
#: the scalars keep their shape: digits 1-9 as ``1`` (a zero stays, to see leading ones).
_STRUCTURE = b"{}[],:\x01 \t\n\r"
_APART = bytes.maketrans(_STRUCTURE + b"23456789", b" " * len(_STRUCTURE) + b"1" * 8)
_LEADING_ZEROS = (b" 00", b" 01", b" -00", b" -01")
_ONES = bytes.maketrans(b"0", b"1")
#: A scalar token, its digit runs made one digit: a number or a literal.
_SCALAR = re.compile(rb"-?1(?:\.1)?(?:[eE][+-]?1)?|true|false|null")
#: The skeleton: ``s`` a string, ``v`` a scalar (a run of them: one token), ``w`` blanks.
_SKELETON = bytes.maketrans(b"\x01 \t\n\r-+.0123456789eEtrufalsn", b"swwww" + b"v" * 23)
#: Two values with nothing but blanks between them.
_ADJACENT = (b"vwv", b"vws", b"swv", b"sws", b"vs", b"sv", b"ss")
#: Pairs that may not follow one another in the skeleton (``k``: a key with its colon,
#: ``v``: any other string or scalar, ``}`` standing for both closing brackets); what the
#: brackets' kinds decide is left to the nesting check.
_BAD_PAIRS = (
    b"{{", b"{[", b"{,", b"{v", b"[,", b"[k", b"k}", b"k,", b"kk", b",}", b",,",
    b"v[", b"v{", b"vk", b"vv", b"}[", b"}{", b"}k", b"}v",
)  # fmt: skip
_CLOSER = bytes.maketrans(b"]", b"}")
_OPENERS = bytes.maketrans(b"[{", b"]}")
_RUN = re.compile(rb"[\[{]+|[\]}]+")
#: How many times adjacent matching pairs are cancelled before the stack takes over, each
#: pass at most a sixteenth shorter than the last (see :func:`_nested`).
_PASSES = 32


def is_json(data: bytes) -> bool:
    """Whether ``data`` is one JSON text (RFC 8259, UTF-8, surrounding whitespace allowed)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if len(data.translate(None, _CONTROL)) != len(data):
        return False
    text = _STRING.sub(b"\x01", data)  # each string one byte no JSON text holds
    scalars = b" " + b" ".join(set(text.translate(_APART).split()))  # each kind once
    if any(zero in scalars for zero in _LEADING_ZEROS):
        return False
    shapes = set(_squeeze(scalars.translate(_ONES), b"1").split())
    if not all(_SCALAR.fullmatch(shape) for shape in shapes):
        return False  # a bad number, a stray quote or backslash, a word
    skeleton = _squeeze(_squeeze(text.translate(_SKELETON), b"v"), b"w")
    if any(pair in skeleton for pair in _ADJACENT):
        return False
    skeleton = skeleton.translate(None, b"w").replace(b"s:", b"k").replace(b"s", b"v")
    if not skeleton or b":" in skeleton:
        return False
    if skeleton[:1] not in b"v[{" or skeleton[-1:] not in b"v]}":
        return False
    pairs = skeleton.translate(_CLOSER)
    if any(pair in pairs for pair in _BAD_PAIRS):
        return False
    # a comma closes and reopens its container: one in an object precedes a key
    brackets = skeleton.replace(b",k", b"}{").replace(b",", b"][").replace(b"{k", b"{")
    if b"k" in brackets:
        return False  # a key after something other than "{" or ","
    return _nested(brackets.translate(None, b"v"))


def _squeeze(text: bytes, byte: bytes) -> bytes:
    """``text`` with each run of ``byte`` made one (each pass halves the longest run)."""
    double = byte * 2
    while double in text:
        text = text.replace(double, byte)
    return text


def _nested(brackets: bytes) -> bool:
    """Whether ``brackets`` (only ``[]{}``) close in order, each with its own kind."""
    for _ in range(_PASSES):  # cheap passes first: they take every shallow part away
        shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
        cancelled = len(brackets) - len(shorter)
        brackets = shorter
        if cancelled * 16 < len(brackets):
            break
    stack = bytearray()
    for run in _RUN.findall(brackets):
        if run[0] in b"[{":
            stack += run
            continue
        size = len(run)
        if size > len(stack) or stack[-size:][::-1].translate(_OPENERS) != run:
            return False
        del stack[-size:]
    return not stack


#: A key ``"id"`` or ``"method"``, unless its quote follows a backslash (then it is in a
#: string; in JSON text, every other quote before such a key opens that key).
_KEY = re.compile(rb'"(id|method)"[ \t\n\r]*:[ \t\n\r]*')
#: An id value: an integer or a string, where the member ends.
_ID = re.compile(rb'(-?(?:0|[1-9][0-9]*)|"(?:[^"\\]|\\.)*")[ \t\n\r]*[,}]', re.DOTALL)
_LOOSE_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Keys looked at, at most, for those of the top level (nested ones come first at times).
MAX_KEYS = 1000


def top_level(data: bytes) -> tuple[RequestId | None, bool]:
    """The id of the top-level object of JSON text ``data`` (None: it has none that is a
    string or an integer, or not among the first :data:`MAX_KEYS` keys looked at) and
    whether it is a notification (a string ``method`` and, as far as all its keys were
    seen, no ``id``)."""
    if data.lstrip()[:1] != b"{":
        return None, False  # a batch, or a scalar: no one id to answer
    depth, since, seen = 0, 0, 0
    rid: RequestId | None = None
    has_id = has_method = False
    for found in _KEY.finditer(data):
        if data[found.start() - 1 : found.start()] == b"\\":
            continue
        seen += 1
        if seen > MAX_KEYS:
            return rid, False
        shape = _LOOSE_STRING.sub(b"", data[since : found.start()])
        depth += shape.count(b"[") + shape.count(b"{") - shape.count(b"]") - shape.count(b"}")
        since = found.start()
        if depth != 1:
            continue
        if found.group(1) == b"method":
            has_method = data[found.end() : found.end() + 1] == b'"'  # a method names one
        elif not has_id:
            has_id = True
            rid = _id_at(data, found.end())
    return rid, has_method and not has_id


def _id_at(data: bytes, start: int) -> RequestId | None:
    value = _ID.match(data, start)
    if value is None:
        return None
    try:  # an unpaired surrogate, say: no id the answer could carry
        return msgspec.json.decode(value.group(1), type=RequestId)
    except (msgspec.MsgspecError, ValueError):
        return None
