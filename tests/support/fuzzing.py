"""The fuzz engine: valid traffic of both eras, mutated cases, oracles and the tally.

The corpus is the client side of real sessions with ``examples/everything``: the legacy
handshake and what follows it (tools, resources, prompts, completion, logging, ping,
notifications, a stray response), the modern 2026-07-28 requests (each with its ``_meta``),
and a multi-round-trip retry whose ``requestState`` is recorded from the server at test time
(``fuzz_http.record``). A case is one base message mutated 1-4 times at the JSON level, at
the byte level and (HTTP) in its headers, method or path (``fuzz_mutators``). The drivers
(``fuzz_stdio``, ``fuzz_http``) send cases and judge what comes back with the oracles here:

* no crash (the process lives and answers a ping; the ASGI app never raises);
* no hang: the server keeps answering (the ping after each case) and an HTTP exchange ends
  within :data:`DEADLINE` seconds;
* no 5xx, and every answer is JSON-RPC 2.0: each stdout line, each non-empty JSON body,
  each SSE ``data`` field; a 4xx carries a JSON-RPC error body;
* no traceback logged by the server (a stray one per message floods the logs);
* no missing answer: a request whose id is readable (a string or an integer) gets an answer
  carrying that id within :data:`DEADLINE` seconds, never only one with a null id;
* no wrong code: each frame gets what JSON-RPC prescribes for it as ``fuzz_oracle`` reads
  it, independently of the runtime (-32700 for what is not JSON, -32600/-32601/-32602 for
  JSON that is no valid request, never -32700 for JSON, no answer to a notification).

What the server never reads is not judged by the last two: an HTTP request refused before
its body is read (403, 405, 406, 408, 413, 415, 404 at another path), a frame over the size
limit (answered as that limit documents).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from support.fuzz_headers import Headers, HttpCase, mutate_http
from mcpgen.runtime.core.limits import DEFAULT
from support.fuzz_mutators import Mutator, dump
from support.fuzz_oracle import Frame, is_id, read
from support import messages
from support.fuzz_report import Tally

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEADLINE = 5.0
#: The size limit of every server the suite starts (their default limits).
LIMIT = DEFAULT.max_message_bytes
#: The ``requestState`` key of every server the suite starts (recorded states stay valid).
STATE_KEY = bytes(range(32))
#: Placeholders in a case's headers, filled by the driver with its session's values.
SESSION, VERSION = b"<session>", b"<version>"
P = "io.modelcontextprotocol/"
CLIENT = {"name": "mcpgen-fuzz", "version": "1.0"}


@dataclass(frozen=True)
class Base:
    """One valid client message of an era (``legacy``, ``modern`` or ``init``)."""

    name: str
    era: str
    message: dict[str, Any]
    weight: float = 1.0


def modern_meta(**extra: Any) -> dict[str, Any]:
    return {
        P + "protocolVersion": MODERN,
        P + "clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}},
        P + "clientInfo": CLIENT,
        **extra,
    }


def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return messages.request(0, method, params)


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return messages.notification(method, params)


def initialize(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": CLIENT}
    return request("initialize", params)


#: (method, params, weight) valid in both eras; tools that ask the client are left out of
#: the legacy list (a legacy session would wait on our answer).
COMMON: list[tuple[str, dict[str, Any], float]] = [
    ("tools/list", {}, 1),
    ("tools/list", {"cursor": "page-2"}, 0.3),  # a cursor the server never gave: -32602
    *(
        ("tools/call", {"name": name, "arguments": {}}, 1)
        for name in (
            "test_simple_text", "test_image_content", "test_audio_content",
            "test_embedded_resource", "test_multiple_content_types", "test_error_handling",
            "test_logging_tool", "test_trigger_tool_change", "no_such_tool",
        )
    ),
    ("tools/call", {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p1"}}, 0.1),
    ("tools/call", {"name": "test_tool_with_logging", "arguments": {}}, 0.1),
    ("tools/call", {"name": "json_schema_2020_12_tool", "arguments": {"name": "x", "address": {"street": "s", "city": "c"}}}, 1),
    ("tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu-west1", "priority": 3, "verbose": True}}, 2),
    ("resources/list", {}, 1),
    ("resources/templates/list", {}, 1),
    *(("resources/read", {"uri": uri}, 1) for uri in ("test://static-text", "test://static-binary", "test://template/42/data", "test://nope")),
    ("prompts/list", {}, 1),
    ("prompts/get", {"name": "test_simple_prompt"}, 1),
    ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}, 1),
    ("prompts/get", {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}}, 1),
    ("prompts/get", {"name": "test_prompt_with_image"}, 1),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "te"}}, 1),
    ("completion/complete", {"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": {"name": "id", "value": "4"}, "context": {"arguments": {}}}, 0.5),
]  # fmt: skip
LEGACY_ONLY: list[tuple[str, dict[str, Any] | None, float]] = [
    ("ping", None, 1),
    ("logging/setLevel", {"level": "debug"}, 1),
    ("resources/subscribe", {"uri": "test://watched-resource"}, 0.5),
    ("resources/unsubscribe", {"uri": "test://watched-resource"}, 0.5),
]
MRTR_TOOLS = (
    "test_input_required_result_elicitation", "test_input_required_result_sampling",
    "test_input_required_result_list_roots", "test_input_required_result_multiple_inputs",
    "test_input_required_result_capabilities", "test_input_required_result_tampered_state",
)  # fmt: skip


def label(params: dict[str, Any]) -> str:
    """What tells a base message from others of its method."""
    return str(params.get("name", params.get("uri", params.get("cursor", ""))))


def legacy_corpus() -> list[Base]:
    out = [Base(f"{m} {label(p)}".strip(), "legacy", request(m, p), w) for m, p, w in COMMON]
    out += [Base(m, "legacy", request(m, p), w) for m, p, w in LEGACY_ONLY]
    out += [
        Base("notifications/initialized", "legacy", notification("notifications/initialized"), 0.3),
        Base("notifications/cancelled", "legacy", notification("notifications/cancelled", {"requestId": 999, "reason": "x"}), 0.5),
        Base("notifications/roots/list_changed", "legacy", notification("notifications/roots/list_changed"), 0.3),
        Base("stray response", "legacy", {"jsonrpc": "2.0", "id": 424242, "result": {}}, 0.3),
    ]  # fmt: skip
    return out


def modern_corpus(recorded: Sequence[Base] = ()) -> list[Base]:
    out = []
    for method, params, weight in COMMON:
        message = request(method, {**params, "_meta": modern_meta(**params.get("_meta", {}))})
        out.append(
            Base(
                f"modern {method} {label(params)}".strip(),
                "modern",
                message,
                weight,
            )
        )
    out += [
        Base("modern server/discover", "modern", request("server/discover", {"_meta": modern_meta()})),
        Base("modern tools/list logLevel", "modern", request("tools/list", {"_meta": modern_meta(**{P + "logLevel": "debug"})}), 0.5),
        Base("modern subscriptions/listen", "modern", request("subscriptions/listen", {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://watched-resource"]}, "_meta": modern_meta()}), 0.5),
        Base("modern notifications/cancelled", "modern", notification("notifications/cancelled", {"requestId": 999, "_meta": modern_meta()}), 0.3),
        *(Base(f"modern tools/call {n}", "modern", request("tools/call", {"name": n, "arguments": {}, "_meta": modern_meta()}), 0.5) for n in MRTR_TOOLS),
        *recorded,
    ]  # fmt: skip
    return out


def init_corpus() -> list[Base]:
    caps: list[dict[str, Any]] = [{}, {"roots": {"listChanged": True}}, {"experimental": {"x": {}}}]
    return [
        Base(f"initialize {v} caps={i}", "init", initialize(v, c), 1)
        for v in (*LEGACY, MODERN, "2099-01-01")
        for i, c in enumerate(caps)
    ]


@dataclass
class Case:
    """One mutated input: frames (stdio lines or HTTP bodies, sent together) and, for HTTP,
    the request line and headers (placeholders :data:`SESSION`/:data:`VERSION` unfilled)."""

    index: int
    era: str
    base: str
    frames: list[bytes]
    mutations: list[str]
    method: str = "POST"
    path: str = "/mcp"
    query: bytes = b""
    headers: Headers = field(default_factory=list)

    def size(self) -> int:
        extra = sum(len(k) + len(v) for k, v in self.headers) + len(self.path) + len(self.query)
        return sum(len(f) for f in self.frames) + extra

    def show(self, limit: int = 400) -> str:
        """The exact input, bytes as Python literals, long ones cut (the length is given)."""
        lines = [
            f"case #{self.index} ({self.era}: {self.base}) mutations: {'; '.join(self.mutations)}"
        ]
        if self.headers:
            query = b"?" + self.query if self.query else b""
            lines.append(f"  {self.method} {self.path[:80]!r} {query[:60]!r}")
            lines += [f"  {k.decode()}: {v[:120]!r}" for k, v in self.headers]
        for frame in self.frames:
            cut = repr(frame[:limit]) + (f" ... ({len(frame)} bytes)" if len(frame) > limit else "")
            lines.append(f"  body: {cut}")
        return "\n".join(lines)


def default_headers(era: str, message: Any) -> Headers:
    headers: Headers = [
        (b"host", b"127.0.0.1:3001"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
    ]
    if era == "legacy":
        headers += [(b"mcp-session-id", SESSION), (b"mcp-protocol-version", VERSION)]
    if era != "modern":
        return headers
    headers.append((b"mcp-protocol-version", MODERN.encode()))
    method = message.get("method") if isinstance(message, dict) else None
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(method, str):
        return headers
    headers.append((b"mcp-method", method.encode("utf-8", "replace")))
    params = params if isinstance(params, dict) else {}
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    if key and isinstance(params.get(key), str):
        headers.append((b"mcp-name", params[key].encode("utf-8", "replace")))
    arguments = params.get("arguments")
    if params.get("name") == "test_x_mcp_header" and isinstance(arguments, dict):
        for name in ("region", "priority", "verbose"):
            value = arguments.get(name)
            if isinstance(value, (str, int)):
                text = json.dumps(value) if isinstance(value, bool) else str(value)
                headers.append((b"mcp-param-" + name.encode(), text.encode("utf-8", "replace")))
    return headers


class Generator:
    """Deterministic cases for a transport (``stdio`` or ``http``) from ``seed``."""

    def __init__(self, seed: int, transport: str, recorded: Sequence[Base] = ()) -> None:
        self.rng = random.Random(seed)
        self.http = transport != "stdio"
        self.bases = {
            "legacy": legacy_corpus(),
            "modern": modern_corpus(recorded),
            "init": init_corpus(),
        }
        messages = [b.message for bases in self.bases.values() for b in bases]
        strings = sorted({s for m in messages for s in _strings(m)})
        self.mutator = Mutator(self.rng, strings, [dump(m) for m in messages])
        self.eras = ["legacy", "modern", "init"]
        self.era_weights = [42, 42, 16] if self.http else [47, 47, 6]

    def case(self, index: int) -> Case:
        rng, mut = self.rng, self.mutator
        era = rng.choices(self.eras, self.era_weights)[0]
        bases = self.bases[era]
        base = rng.choices(bases, [b.weight for b in bases])[0]
        message: Any = copy.deepcopy(base.message)
        if "id" in message:
            message["id"] = 100_000 + index if index % 2 else f"c{index}"
        steps = rng.choices([1, 2, 3, 4], [55, 25, 12, 8])[0]
        families = sorted(
            rng.choices(["json", "bytes", "http"], [6, 2, 3 if self.http else 0], k=steps)
        )
        done: list[str] = []
        for _ in range(families.count("json")):
            message, what = mut.pick(mut.json_ops)(message)
            done.append(what)
        frames = [dump(message)]
        for _ in range(families.count("bytes")):
            if rng.random() < 0.08:
                frames = [frames[0], frames[0]]
                done.append("send it twice (duplicate id)")
                continue
            frames[0], what = mut.pick(mut.byte_ops)(frames[0])
            done.append(what)
        case = Case(index, era, base.name, frames, done)
        if self.http:
            named = message if isinstance(message, dict) and rng.random() < 0.5 else base.message
            http = HttpCase(default_headers(era, named))
            for _ in range(families.count("http")):
                done.append(mutate_http(rng, http))
            case.method, case.path, case.query, case.headers = (
                http.method,
                http.path,
                http.query,
                http.headers,
            )
        return case

    def cases(self, count: int) -> Iterator[Case]:
        """The first ``count`` cases, made as they are taken (some hold megabytes)."""
        return (self.case(i) for i in range(count))


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


# -- oracles ------------------------------------------------------------------------------


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("duplicate key")
    return value


def strict_json(data: bytes) -> Any:
    """``data`` as RFC 8259 JSON in UTF-8 (no NaN, no duplicate keys), else ValueError."""
    return json.loads(
        data.decode("utf-8"), parse_constant=_no_constants, object_pairs_hook=_unique_keys
    )


def frame_of(frame: bytes) -> Frame:
    """What ``frame`` is, read by the oracle (``fuzz_oracle``), against the servers' limit."""
    return read(frame, LIMIT)


def jsonrpc_problem(value: Any, batch_ok: bool = True) -> str | None:
    """Why ``value`` is not a JSON-RPC 2.0 message (or a batch of them), or None."""
    if isinstance(value, list):
        if not batch_ok or not value:
            return "nested batch" if value else "empty batch"
        for item in value:
            problem = jsonrpc_problem(item, batch_ok=False)
            if problem:
                return "batch element: " + problem
        return None
    if not isinstance(value, dict):
        return f"not an object but {type(value).__name__}"
    if set(value) - {"jsonrpc", "id", "method", "params", "result", "error"}:
        return "unknown member"
    if value.get("jsonrpc") != "2.0":
        return 'jsonrpc is not "2.0"'
    if "method" in value:
        if not isinstance(value["method"], str) or "result" in value or "error" in value:
            return "bad request/notification"
        if not isinstance(value.get("params", {}), dict):
            return "params is not an object"
        return None if "id" not in value or is_id(value["id"]) else "request with a bad id"
    if ("result" in value) == ("error" in value):
        return "response with both or neither of result and error"
    if "result" in value:
        if not is_id(value.get("id")):
            return "result with a bad or missing id"
        return None if isinstance(value["result"], dict) else "result is not an object"
    if "id" not in value or not (value["id"] is None or is_id(value["id"])):
        return "error with a bad or missing id"
    error = value["error"]
    if not isinstance(error, dict) or set(error) - {"code", "message", "data"}:
        return "error is not an error object"
    code = error.get("code")
    if (
        isinstance(code, bool)
        or not isinstance(code, int)
        or not isinstance(error.get("message"), str)
    ):
        return "error without an integer code and a string message"
    return None


def answer_problem(data: bytes) -> tuple[Any, str | None]:
    """(parsed, problem) for one answer: a stdout line, an HTTP body, an SSE data field."""
    try:
        value = strict_json(data)
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except (ValueError, RecursionError):
        return None, "not JSON"
    return value, jsonrpc_problem(value)


def run(transport: str, count: int, seed: int, budget: float | None = None) -> Tally:
    """Fuzz ``transport`` (``stdio``, ``http``: the ASGI app in process, ``uvicorn``: a real
    server on 127.0.0.1, ``websocket`` and ``sse``: the stdio cases over those transports
    of a real server) with ``count`` cases; stop early past ``budget`` seconds."""
    from support import fuzz_http, fuzz_sockets, fuzz_stdio, fuzz_uvicorn

    recorded = fuzz_http.record()
    lines = transport in ("stdio", "websocket", "sse")  # one message per line or frame
    cases = Generator(seed, "stdio" if lines else transport, recorded).cases(count)
    if transport == "stdio":
        return fuzz_stdio.run(cases, budget)
    if transport in ("websocket", "sse"):
        return fuzz_sockets.run(transport, cases, budget)
    if transport == "http":
        return fuzz_http.run_asgi(cases, budget)
    if transport == "uvicorn":
        return fuzz_uvicorn.run(cases, budget)
    raise ValueError(f"unknown transport {transport!r}")
