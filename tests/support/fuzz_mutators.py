"""Mutators of the fuzz suite (``tests/support/fuzzing.py``): JSON-level and byte-level.

Each mutator takes a seeded ``random.Random`` (through :class:`Mutator`) and returns the
mutated value plus a short description, so a failing case names what was done to it.
JSON-level mutations work on the decoded message; what plain JSON cannot say (invalid UTF-8
inside a string, a number too large for any decoder, a duplicate key, nesting too deep to
build recursively) is spliced in as :class:`Raw` bytes or :class:`Pairs`, written by
:func:`dump`.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Sequence
from typing import Any


class Raw:
    """Bytes written as they are where a JSON value goes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Pairs:
    """A JSON object written with these keys in this order, repeated keys included."""

    __slots__ = ("items",)

    def __init__(self, items: list[tuple[str, Any]]) -> None:
        self.items = items


def dump(value: Any) -> bytes:
    """Compact JSON of ``value`` (``Raw`` and ``Pairs`` written as they say)."""
    if isinstance(value, Raw):
        return value.data
    if isinstance(value, (dict, Pairs)):
        items = value.items if isinstance(value, Pairs) else list(value.items())
        return b"{" + b",".join(dump(k) + b":" + dump(v) for k, v in items) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(dump(v) for v in value) + b"]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode()


METHODS = (
    "initialize", "ping", "notifications/initialized", "tools/list", "tools/call",
    "resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
    "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "server/discover", "subscriptions/listen", "notifications/cancelled",
    "notifications/progress", "notifications/roots/list_changed", "notifications/message",
    "sampling/createMessage", "elicitation/create", "roots/list", "tasks/get", "tasks/list",
    "tasks/result", "tasks/cancel", "notifications/elicitation/complete",
    "", "PING", "tools/call/", "tools", "rpc.discover", "notifications/", "__proto__",
    "tools/call\u0000", "t\u00f6\u00f6ls/list", "x" * 2000,
)  # fmt: skip
VERSIONS = (
    "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "DRAFT-2026-v1",
    "2099-01-01", "2024-10-07", "", "2025-06-18 ", "2026-07-28\u0000", "latest",
)  # fmt: skip
SCALARS: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 1.5, -0.0, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64,
    -(2**63) - 1, 10**30, 1e308, "", " ", "x", "0", "null", "2.0", "\u0000", "\u00e9",
    "\U0001f600", "\u202e", "a" * 10_000, [], {}, [None], {"": None}, [[]], {"a": {"b": {}}},
    [1, "2", None], {"type": "text", "text": "hi"},
)  # fmt: skip
KEYS = (
    "id", "method", "params", "result", "error", "jsonrpc", "_meta", "name", "arguments",
    "uri", "cursor", "progressToken", "requestState", "inputResponses", "ref", "argument",
    "__proto__", "", "\u0000", "k" * 1000, "io.modelcontextprotocol/protocolVersion",
)  # fmt: skip
NUMBERS = (
    b"1e400", b"-1e400", b"1" + b"0" * 400, b"18446744073709551616", b"9223372036854775808",
    b"-9223372036854775809", b"1.0e-400", b"0." + b"0" * 300 + b"1", b"NaN", b"Infinity",
    b"-Infinity", b"-0", b"1E+2", b"01", b"1.", b"+1", b".5", b"0x10", b"1_000",
)  # fmt: skip
BAD_UTF8 = (
    b"\xc3", b"\xff", b"\xfe", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
    b"\xe2\x82", b"\xf0\x9f\x98",
)  # fmt: skip
ESCAPES = (b"\\ud800", b"\\udfff\\ud800", b"\\u0000", b"\\x41", b"\\u12", b"\\", b"\\q")
GARBAGE = (b" x", b"}", b"]", b" {}", b",", b"\x00", b"//c", b" 1", b"\r\x0b", b"\xff")
INSERTS = (
    b"\x00", b"\xc3", b"\xff", b"\n", b"\r", b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\",
    b"\xef\xbb\xbf", b"\xc3\xa9", b"\t", b"\x1b",
)  # fmt: skip
DEPTHS = (2, 32, 63, 64, 65, 100, 255, 256, 500, 982, 983, 1000, 3000, 20_000, 100_000)


def positions(root: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) under ``root``, ``Raw``/``Pairs`` being leaves."""
    out: list[tuple[Any, Any]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                out.append((node, key))
                stack.append(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                out.append((node, index))
                stack.append(value)
    return out


class Mutator:
    """Seeded mutations; ``strings`` are the corpus's own values, reused as replacements."""

    def __init__(self, rng: random.Random, strings: Sequence[str], others: Sequence[bytes]):
        self.rng = rng
        self.pool: list[Any] = [*SCALARS, *strings]
        self.strings = list(strings)
        self.others = list(others)  # serialized corpus messages, for splicing
        self.json_ops: list[tuple[int, Callable[[Any], tuple[Any, str]]]] = [
            (6, self.drop), (7, self.replace), (5, self.retype), (4, self.add_key),
            (3, self.nest), (3, self.huge_number), (5, self.id_type), (2, self.dup_key),
            (4, self.notification), (2, self.response), (4, self.method), (4, self.bad_utf8),
            (2, self.escape), (3, self.batch), (3, self.garbage_after), (1, self.scalar),
            (3, self.params_shape), (4, self.meta), (1, self.big), (2, self.whitespace),
            (2, self.jsonrpc),
        ]  # fmt: skip
        self.byte_ops: list[tuple[int, Callable[[bytes], tuple[bytes, str]]]] = [
            (4, self.flip), (3, self.truncate), (5, self.insert), (2, self.delete),
            (2, self.overwrite), (3, self.splice), (2, self.repeat), (1, self.swap),
        ]  # fmt: skip

    def value(self) -> Any:
        """A replacement value (a copy: later mutations must not change the pool)."""
        return copy.deepcopy(self.rng.choice(self.pool))

    def pick(self, ops: list[tuple[int, Any]]) -> Any:
        return self.rng.choices([op for _, op in ops], [w for w, _ in ops])[0]

    def _spot(self, msg: Any) -> tuple[Any, Any] | None:
        spots = positions(msg)
        if not spots:
            return None
        top = [s for s in spots if s[0] is msg]
        return self.rng.choice(top if top and self.rng.random() < 0.3 else spots)

    def _set(self, msg: Any, value: Any, what: str) -> tuple[Any, str]:
        spot = self._spot(msg)
        if spot is None:
            return value, f"{what} (whole message)"
        spot[0][spot[1]] = value
        return msg, f"{what} at {spot[1]!r}"

    # -- JSON level ---------------------------------------------------------------------

    def drop(self, msg: Any) -> tuple[Any, str]:
        spot = self._spot(msg)
        if spot is None:
            return msg, "drop (nothing)"
        del spot[0][spot[1]]
        return msg, f"drop {spot[1]!r}"

    def replace(self, msg: Any) -> tuple[Any, str]:
        value = self.value()
        return self._set(msg, value, f"replace with {_short(value)}")

    def retype(self, msg: Any) -> tuple[Any, str]:
        spot = self._spot(msg)
        if spot is None:
            return msg, "retype (nothing)"
        value = spot[0][spot[1]]
        options: list[Any]
        if isinstance(value, bool) or value is None:
            options = [int(bool(value)), str(value).lower(), [value], {}]
        elif isinstance(value, (int, float)):
            options = [str(value), float(value), [value], True, {"value": value}]
        elif isinstance(value, str):
            options = [len(value), [value], {value: value}, None, value.encode().hex()]
        elif isinstance(value, dict):
            options = [list(value.values()), list(value), dump(value).decode("utf-8", "replace"), 0]
        elif isinstance(value, list):
            options = [{str(i): v for i, v in enumerate(value)}, value[:1], len(value), ""]
        else:
            options = [None]
        spot[0][spot[1]] = new = self.rng.choice(options)
        return msg, f"retype {spot[1]!r} to {type(new).__name__}"

    def add_key(self, msg: Any) -> tuple[Any, str]:
        objects = [msg] if isinstance(msg, dict) else []
        objects += [c[k] for c, k in positions(msg) if isinstance(c[k], dict)]
        if not objects:
            return msg, "add key (no object)"
        target = self.rng.choice(objects)
        key, value = self.rng.choice(KEYS), self.value()
        target[key] = value
        return msg, f"add key {key[:20]!r}={_short(value)}"

    def nest(self, msg: Any) -> tuple[Any, str]:
        depth = self.rng.choice(DEPTHS)
        spot = self._spot(msg) if self.rng.random() < 0.7 else None
        inner = dump(spot[0][spot[1]] if spot else msg)
        if self.rng.random() < 0.5:
            raw = Raw(b"[" * depth + inner + b"]" * depth)
        else:
            raw = Raw(b'{"a":' * depth + inner + b"}" * depth)
        kind = "arrays" if raw.data[0:1] == b"[" else "objects"
        if spot is None:
            return raw, f"nest message in {depth} {kind}"
        spot[0][spot[1]] = raw
        return msg, f"nest {spot[1]!r} in {depth} {kind}"

    def huge_number(self, msg: Any) -> tuple[Any, str]:
        number = self.rng.choice(NUMBERS)
        if isinstance(msg, dict) and "id" in msg and self.rng.random() < 0.4:
            msg["id"] = Raw(number)
            return msg, f"id = {number[:24]!r}"
        return self._set(msg, Raw(number), f"number {number[:24]!r}")

    def id_type(self, msg: Any) -> tuple[Any, str]:
        value = self.rng.choice(
            [None, True, False, 1.5, [], {}, "", [1], {"id": 1}, 2**63, -(2**63), -1, 0, "x" * 5000]
            + [Raw(b"1e400"), Raw(b"1.0"), Raw(b"-0")]
        )
        if not isinstance(msg, dict):
            return msg, "id type (not an object)"
        msg["id"] = value
        return msg, f"id = {_short(value)}"

    def dup_key(self, msg: Any) -> tuple[Any, str]:
        if not isinstance(msg, dict) or not msg:
            return msg, "duplicate key (not an object)"
        key = self.rng.choice(
            [k for k in ("id", "method", "params", "jsonrpc") if k in msg] or ["id"]
        )
        other = self.value()
        items = list(msg.items())
        items.insert(self.rng.randrange(len(items) + 1), (key, other))
        return Pairs(items), f"duplicate key {key!r} ({_short(other)})"

    def notification(self, msg: Any) -> tuple[Any, str]:
        if isinstance(msg, dict):
            msg.pop("id", None)
        return msg, "drop id (request method as a notification)"

    def response(self, msg: Any) -> tuple[Any, str]:
        if not isinstance(msg, dict):
            return msg, "response (not an object)"
        msg.pop("method", None)
        msg.pop("params", None)
        msg.setdefault("id", 1)
        if self.rng.random() < 0.5:
            msg["result"] = {}
        else:
            msg["error"] = {"code": -32601, "message": "no"}
        return msg, "turn into a response"

    def method(self, msg: Any) -> tuple[Any, str]:
        name = self.rng.choice(METHODS)
        if isinstance(msg, dict):
            msg["method"] = name
        return msg, f"method = {name[:30]!r}"

    def bad_utf8(self, msg: Any) -> tuple[Any, str]:
        bad = self.rng.choice(BAD_UTF8)
        strings = [(c, k) for c, k in positions(msg) if isinstance(c[k], str)]
        if isinstance(msg, dict) and isinstance(msg.get("method"), str) and self.rng.random() < 0.4:
            spot: tuple[Any, Any] = (msg, "method")
        elif strings:
            spot = self.rng.choice(strings)
        else:
            return Raw(b'"' + bad + b'"'), f"invalid UTF-8 {bad!r} (whole message)"
        text = dump(spot[0][spot[1]])
        cut = self.rng.randrange(1, len(text))
        spot[0][spot[1]] = Raw(text[:cut] + bad + text[cut:])
        return msg, f"invalid UTF-8 {bad!r} in {spot[1]!r}"

    def escape(self, msg: Any) -> tuple[Any, str]:
        esc = self.rng.choice(ESCAPES)
        strings = [(c, k) for c, k in positions(msg) if isinstance(c[k], str)]
        if not strings:
            return msg, "escape (no string)"
        container, key = self.rng.choice(strings)
        text = dump(container[key])
        container[key] = Raw(text[:-1] + esc + b'"')
        return msg, f"escape {esc!r} in {key!r}"

    def batch(self, msg: Any) -> tuple[Any, str]:
        other = json.loads(self.rng.choice(self.others)) if self.others else {}
        shapes: list[tuple[Any, str]] = [
            ([msg], "[msg]"), ([msg, other], "[msg, other]"), ([], "[]"), ([msg, 1], "[msg, 1]"),
            ([[msg]], "[[msg]]"), ([msg, msg], "[msg, msg]"), ([other, msg, {}], "[other, msg, {}]"),
        ]  # fmt: skip
        value, what = self.rng.choice(shapes)
        return value, f"batch {what}"

    def garbage_after(self, msg: Any) -> tuple[Any, str]:
        tail = self.rng.choice([*GARBAGE, b" " + dump(msg), dump(msg)])
        if self.rng.random() < 0.3:
            head = self.rng.choice([b"1", b'"s"', b"null", b"true", b"[]", b"{}", b"-0"])
            return Raw(head + tail), f"scalar {head!r} then {tail[:12]!r}"
        return Raw(dump(msg) + tail), f"then garbage {tail[:12]!r}"

    def scalar(self, msg: Any) -> tuple[Any, str]:
        value = self.rng.choice([1, "x", None, True, [], {}, 1.5, Raw(b""), Raw(b" ")])
        return value, f"whole message = {_short(value)}"

    def params_shape(self, msg: Any) -> tuple[Any, str]:
        if not isinstance(msg, dict):
            return msg, "params (not an object)"
        params = msg.get("params")
        value = self.rng.choice([[], "x", None, 1, [params], True, Raw(b"[{}]")])
        msg["params"] = value
        return msg, f"params = {_short(value)}"

    def meta(self, msg: Any) -> tuple[Any, str]:
        params = msg.get("params") if isinstance(msg, dict) else None
        if not isinstance(params, dict):
            return self.replace(msg)
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            params["_meta"] = meta = {}
        key = self.rng.choice(
            [
                "io.modelcontextprotocol/protocolVersion",
                "io.modelcontextprotocol/clientCapabilities",
                "io.modelcontextprotocol/clientInfo",
                "io.modelcontextprotocol/logLevel",
                "progressToken",
                "traceparent",
                "io.modelcontextprotocol/subscriptionId",
            ]
        )
        if self.rng.random() < 0.3:
            meta.pop(key, None)
            return msg, f"_meta drop {key}"
        if key.endswith("protocolVersion"):
            value: Any = self.rng.choice(VERSIONS + (2026, None))
        elif key.endswith("logLevel"):
            value = self.rng.choice(["debug", "emergency", "verbose", "", 1, None, "DEBUG"])
        else:
            value = self.value()
        meta[key] = value
        return msg, f"_meta {key} = {_short(value)}"

    def big(self, msg: Any) -> tuple[Any, str]:
        size = self.rng.choice([100_000, 1_000_000, 4 * 1024 * 1024 + 1])
        kind = self.rng.choice(["string", "array", "object"])
        if kind == "string":
            value: Any = "y" * size
        elif kind == "array":
            value = Raw(b"[" + b"0," * (size // 2) + b"0]")
        else:
            value = Raw(b"{" + b",".join(b'"k%d":0' % i for i in range(size // 10)) + b"}")
        return self._set(msg, value, f"big {kind} of ~{size} bytes")

    def whitespace(self, msg: Any) -> tuple[Any, str]:
        head = self.rng.choice([b"", b"\xef\xbb\xbf", b" " * 1000, b"\t", b"\r"])
        tail = self.rng.choice([b"", b"\r", b" \t ", b"\x0c", b"\x85"])
        return Raw(head + dump(msg) + tail), f"surround with {head[:4]!r}..{tail!r}"

    def jsonrpc(self, msg: Any) -> tuple[Any, str]:
        value = self.rng.choice(["1.0", 2.0, 2, None, "2.0 ", "2", "", ["2.0"], "DROP"])
        if isinstance(msg, dict):
            if value == "DROP":
                msg.pop("jsonrpc", None)
            else:
                msg["jsonrpc"] = value
        return msg, f"jsonrpc = {_short(value)}"

    # -- byte level ---------------------------------------------------------------------

    def flip(self, data: bytes) -> tuple[bytes, str]:
        if not data:
            return data, "flip (empty)"
        out = bytearray(data)
        spots = [self.rng.randrange(len(out)) for _ in range(self.rng.choice([1, 1, 2, 4, 8]))]
        for spot in spots:
            out[spot] ^= 1 << self.rng.randrange(8)
        return bytes(out), f"flip bits at {spots}"

    def truncate(self, data: bytes) -> tuple[bytes, str]:
        cut = self.rng.randrange(len(data) + 1)
        return data[:cut], f"truncate at {cut}/{len(data)}"

    def insert(self, data: bytes) -> tuple[bytes, str]:
        if self.rng.random() < 0.8:
            piece = self.rng.choice(INSERTS)
        else:
            piece = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 16)))
        at = self.rng.randrange(len(data) + 1)
        return data[:at] + piece + data[at:], f"insert {piece!r} at {at}"

    def delete(self, data: bytes) -> tuple[bytes, str]:
        at = self.rng.randrange(len(data) + 1)
        size = self.rng.randint(1, 32)
        return data[:at] + data[at + size :], f"delete {size} at {at}"

    def overwrite(self, data: bytes) -> tuple[bytes, str]:
        if not data:
            return data, "overwrite (empty)"
        at, byte = self.rng.randrange(len(data)), self.rng.randrange(256)
        return data[:at] + bytes([byte]) + data[at + 1 :], f"byte {byte:#04x} at {at}"

    def splice(self, data: bytes) -> tuple[bytes, str]:
        other = self.rng.choice(self.others) if self.others else data
        i, j = self.rng.randrange(len(data) + 1), self.rng.randrange(len(other) + 1)
        return data[:i] + other[j:], f"splice at {i} with another message from {j}"

    def repeat(self, data: bytes) -> tuple[bytes, str]:
        i = self.rng.randrange(len(data) + 1)
        j = min(len(data), i + self.rng.randint(1, 64))
        times = self.rng.choice([2, 3, 10, 1000])
        return data[:j] + data[i:j] * times + data[j:], f"repeat [{i}:{j}] x{times}"

    def swap(self, data: bytes) -> tuple[bytes, str]:
        if len(data) < 4:
            return data, "swap (short)"
        a, b, c = sorted(self.rng.sample(range(len(data)), 3))
        return data[:a] + data[b:c] + data[a:b] + data[c:], f"swap [{a}:{b}] and [{b}:{c}]"


def _short(value: Any) -> str:
    if isinstance(value, Raw):
        return repr(value.data[:24])
    text = repr(value)
    return text if len(text) <= 32 else text[:29] + "..."
