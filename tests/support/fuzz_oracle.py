"""What one frame is, read independently of the runtime's parser: the oracle behind the fuzz
suite's "missing answer" and "wrong code" checks (``tests/support/fuzzing.py``).

The frame is read with the standard library's ``json`` (RFC 8259 in UTF-8: no NaN or
Infinity, nothing after the value; duplicate keys are JSON too). A frame nested too deeply
for ``json``'s recursion is read again by :func:`read_deep`, a small reader with an explicit
stack, so nesting never decides what a frame is. From the value it tells what JSON-RPC 2.0
says the frame must get:

* not JSON (invalid UTF-8 included): one error -32700, with a null id;
* a request (an object with ``method`` and ``id``): an answer carrying its id when the id is
  readable (a string or an integer, given once); -32600, -32601 or -32602 when the envelope
  itself is invalid (``jsonrpc`` not "2.0", ``method`` not a string, ``params`` not
  structured, ``result`` or ``error`` beside ``method``); never -32700;
* a notification (an object with a string ``method`` and no ``id``), whatever else is wrong
  with it: no answer (an object whose ``method`` is no string names no method: it is an
  invalid request, owed -32600, as JSON-RPC 2.0's own example has it);
* any other JSON (a scalar, a response, an object without ``method``): at most one error,
  -32600, -32601 or -32602; a batch (an array): errors among its answers, never -32700.

A frame over the size limit is never read whole by the server (a stdio line is skipped, an
HTTP body gets 413): it is marked ``oversize``, and may only get that limit's -32600.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: The error codes a JSON frame that is not a valid request may get.
INVALID_CODES = frozenset({-32600, -32601, -32602})
PARSE_ERROR = -32700


@dataclass(frozen=True)
class Frame:
    """What one frame is: ``kind`` is ``not json``, ``oversize``, ``request``,
    ``notification``, ``batch`` or ``other``; ``id`` the key (:func:`id_key`) of a request's
    readable id; ``valid`` whether a request's envelope is valid."""

    kind: str
    id: str | None = None
    valid: bool = False
    #: A request's method (``?`` when it is not a string).
    method: str = "?"
    #: Over the size limit: the server never reads it whole.
    oversize: bool = False

    def codes(self) -> frozenset[int] | None:
        """The error codes an answer to this frame may carry (None: any but -32700)."""
        if self.oversize:
            return INVALID_CODES
        if self.kind == "not json":
            return frozenset({PARSE_ERROR})
        if self.kind == "request" and self.valid:
            return None
        return INVALID_CODES


def id_key(value: Any) -> str:
    """Ids compared with their type (``1`` is not ``"1"``)."""
    return json.dumps(value)


def is_id(value: Any) -> bool:
    """A JSON-RPC id MCP allows: a string (a whole one, no lone surrogate) or an integer."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return False
        return True
    return False


class _Twice:
    """An object key given twice (``id`` or ``method``): the frame says two things."""


TWICE = _Twice()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    keys = [k for k, _ in pairs if k in ("id", "method")]
    for key in set(keys):
        if keys.count(key) > 1:
            value[key] = TWICE
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read(frame: bytes, limit: int) -> Frame:
    """What ``frame`` (one stdio line or one HTTP body) is; ``limit`` is the server's
    ``max_message_bytes``."""
    found = _read(frame)
    if len(frame.rstrip(b"\n")) > limit:
        return Frame(found.kind, found.id, found.valid, found.method, oversize=True)
    return found


def _read(frame: bytes) -> Frame:
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return Frame("not json")
    try:
        value = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_pairs)
    except RecursionError:
        found = read_deep(text)
        if found is None:
            return Frame("not json")
        value = found
    except ValueError:
        return Frame("not json")
    return judge(value)


def _notification(value: Any) -> bool:
    """An object naming a method (a string; given twice, either) with no ``id``."""
    return (
        isinstance(value, dict)
        and "id" not in value
        and isinstance(value.get("method"), (str, _Twice))
    )


def judge(value: Any) -> Frame:
    """What JSON-RPC makes of the JSON value of a frame (its top level only)."""
    if isinstance(value, list):  # valid: some element is no notification (it gets an answer)
        notifications = [e for e in value if _notification(e)]
        return Frame("batch", valid=len(notifications) < len(value))
    if not isinstance(value, dict) or "method" not in value:
        return Frame("other")
    if "id" not in value:
        return Frame("notification" if _notification(value) else "other")
    rid = value["id"]
    readable = id_key(rid) if rid is not TWICE and is_id(rid) else None
    params = value.get("params", {})
    valid = (  # a method given twice: which one counts is not said; either is valid
        value.get("jsonrpc") == "2.0"
        and isinstance(value["method"], (str, _Twice))
        and isinstance(params, (dict, list, _Container))
        and "result" not in value
        and "error" not in value
    )
    method = value["method"]
    shown = method.encode("utf-8", "backslashreplace").decode() if isinstance(method, str) else "?"
    return Frame("request", readable, valid, shown)


# -- a reader for nesting too deep for json ----------------------------------------------


class _Container:
    """An array or object below the top level, not kept (only its kind matters)."""


_WHITESPACE = re.compile(r"[ \t\n\r]*")
#: Where a string token ends (``json`` itself then says whether it is a valid string).
_STRING_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _string(text: str, at: int) -> tuple[str, int] | None:
    """The string starting at ``text[at]`` (a quote) and where it ends, or None."""
    token = _STRING_TOKEN.match(text, at)
    if token is None:
        return None
    try:
        return json.loads(token.group()), token.end()
    except ValueError:
        return None


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def read_deep(text: str) -> Any:
    """The top level of JSON ``text`` (nested arrays and objects stand as
    :class:`_Container`), or None when ``text`` is not JSON. Iterative: an explicit stack,
    one step per token, whatever the depth."""
    stack: list[str] = []  # "[" or "{" for each open container
    top: Any = None
    is_object = False
    key: str | None = None  # the top-level object's key whose value comes next
    pairs: list[tuple[str, Any]] = []
    want = "value"  # value, value or ], key, key or }, comma or close, end
    i = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]
    end = len(text)
    while i < end:
        char = text[i]
        if want in ("value", "value or ]"):
            if char == "]" and want == "value or ]":
                stack.pop()
                i += 1
                want = "comma or close" if stack else "end"
            elif char in "[{":
                if not stack:
                    top, is_object = [], char == "{"
                elif len(stack) == 1 and stack[0] == "{" and key is not None:
                    pairs.append((key, _Container()))
                stack.append(char)
                i += 1
                want = "value or ]" if char == "[" else "key or }"
            else:
                if char == '"':
                    string = _string(text, i)
                    if string is None:
                        return None
                    value, i = string
                else:
                    number = _NUMBER.match(text, i)
                    word = next((w for w in _LITERALS if text.startswith(w, i)), None)
                    if number is not None:
                        value, i = json.loads(number.group()), number.end()
                    elif word is not None:
                        value, i = _LITERALS[word], i + len(word)
                    else:
                        return None
                if not stack:
                    top = value
                elif len(stack) == 1 and stack[0] == "{" and key is not None:
                    pairs.append((key, value))
                want = "comma or close" if stack else "end"
        elif want in ("key", "key or }"):
            if char == "}" and want == "key or }":
                stack.pop()
                i += 1
                want = "comma or close" if stack else "end"
            elif char == '"':
                string = _string(text, i)
                if string is None:
                    return None
                name, i = string
                i = _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]
                if not text.startswith(":", i):
                    return None
                i += 1
                key = name if len(stack) == 1 else None
                want = "value"
            else:
                return None
        elif want == "comma or close":
            if char == ",":
                want = "key" if stack[-1] == "{" else "value"
                i += 1
            elif char in "]}" and "[{"["]}".index(char)] == stack[-1]:
                stack.pop()
                i += 1
                want = "comma or close" if stack else "end"
            else:
                return None
        else:  # something after the value
            return None
        i = _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]
    if want != "end":
        return None
    return _pairs(pairs) if is_object else top
