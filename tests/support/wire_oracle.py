"""An independent oracle for what an MCP server sends: the official JSON schema of each
protocol version, checked with ``jsonschema``, per method.

- :class:`Oracle` holds one validator set per version (Draft 7 or 2020-12, as the schema's
  ``$schema`` says; ``$ref``s resolve in a ``referencing`` registry holding that schema) and
  finds each method's definitions in the schema itself: the ``*Request``/``*Notification``
  whose ``method`` is that ``const``, the ``*ResultResponse`` (2026-07-28 and later) or the
  ``*Result`` named after the request (``EmptyResult`` for ping, subscribe, setLevel, …);
- :class:`Wire` follows one connection's traffic in wire order, pairs each response with
  the request it answers (by id) and knows the version in use: the one ``initialize``
  settled, or the one a modern request names in its ``_meta``;
- :func:`strict_json` reads a message as RFC 8259 has it, and ``byte``, ``uri`` and
  ``uri-template`` formats are asserted.

Imports nothing from mcpgen.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import referencing.jsonschema
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from referencing import Registry, Resource

DIALECTS: dict[str, type[Validator]] = {
    "http://json-schema.org/draft-07/schema#": Draft7Validator,
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
}
#: The ``_meta`` key a modern (2026-07-28 and later) request names its version with.
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
#: Unions that carry a ``method`` const only by accident of inlining (2026-07-28).
UNIONS = {"ClientNotification", "ServerNotification", "ClientRequest", "ServerRequest"}
MESSAGE_CHARS = 300
#: Pseudo-definitions: a result to a method the version lacks; the rule the description of
#: ``InputRequiredResult`` states ("At least one of `inputRequests` or `requestState` MUST
#: be present") but its schema does not encode.
NO_REQUEST, INPUT_REQUIRED = "<no such request>", "<inputRequests or requestState>"
#: A check: the definition, the instance, and where the instance is in its message.
Check = tuple[str, Any, str]


#: The formats the schemas use, asserted (JSON Schema leaves that to the validator): ``byte``
#: is base64 (strict alphabet and padding), ``uri`` an absolute URI of RFC 3986's character
#: set, ``uri-template`` literals and ``{…}`` expressions of RFC 6570's.
FORMATS = FormatChecker()
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*")
URI_TEMPLATE = re.compile(r"(?:[^\s<>\"'{}|\\^`]|\{[^{}\s]+\})*")


@FORMATS.checks("byte", raises=(binascii.Error, ValueError))
def _is_base64(value: object) -> bool:
    return not isinstance(value, str) or base64.b64decode(value, validate=True) is not None


@FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or URI.fullmatch(value) is not None


@FORMATS.checks("uri-template")
def _is_uri_template(value: object) -> bool:
    return not isinstance(value, str) or URI_TEMPLATE.fullmatch(value) is not None


def strict_json(raw: bytes) -> Any:
    """JSON as RFC 8259 has it: UTF-8, no NaN or Infinity, no repeated member names."""

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f"repeated member names in {names}")
        return dict(pairs)

    return json.loads(raw.decode("utf-8"), parse_constant=no_constant, object_pairs_hook=unique)


def shorten(value: Any, limit: int = MESSAGE_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _schema_defect(error: Any) -> bool:
    """A violation the schema's own defect makes, not the message: the answer to an
    elicitation form's ``number`` field that is no whole number. The request side allows
    ``number`` fields (``NumberSchema.type``: ``integer`` or ``number``, a ``number``
    default such as the 95.5 of the official conformance scenario for SEP-1034's defaults),
    but ``ElicitResult.content`` types the answers ``string | integer | boolean | string[]``
    (2025-11-25, and the 2026-07-28 input responses that carry the same result). A union
    one of whose branches fails only by that defect is a defect too."""
    if error.validator not in ("anyOf", "oneOf"):
        return False
    kinds = [b.get("type") for b in error.validator_value if isinstance(b, dict)]
    if isinstance(error.instance, float) and ["string", "integer", "boolean"] in kinds:
        return True
    branches: dict[Any, list[Any]] = {}
    for sub in error.context or ():
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    return any(all(_schema_defect(sub) for sub in subs) for subs in branches.values())


class Schema:
    """One version's schema: validators by definition name, and its methods."""

    def __init__(self, version: str, path: Path) -> None:
        doc = json.loads(path.read_text())
        self.version = version
        self.dialect = DIALECTS[doc["$schema"]]
        self.key = "$defs" if "$defs" in doc else "definitions"
        self.defs: dict[str, Any] = doc[self.key]
        self.uri = f"urn:mcp-schema:{version}"
        spec = referencing.jsonschema.specification_with(doc["$schema"])
        resource: Resource[Any] = spec.create_resource(doc)
        self.registry: Registry[Any] = Registry().with_resource(self.uri, resource)
        self._validators: dict[str, Validator] = {}
        #: method → the ``*Request``/``*Notification`` definitions naming it.
        self.methods: dict[str, list[str]] = {}
        for name, node in self.defs.items():
            method = (node.get("properties") or {}).get("method")
            if isinstance(method, dict) and "const" in method and name not in UNIONS:
                self.methods.setdefault(method["const"], []).append(name)
        #: error code → (definition, whether it describes the whole message or the error).
        self.errors: dict[int, list[tuple[str, bool]]] = {}
        for name, node in self.defs.items():
            if name.endswith("Error") and name not in {"Error", "JSONRPCError"}:
                whole = "error" in (node.get("properties") or {})
                code = _code_const(node["properties"]["error"] if whole else node)
                if code is not None:
                    self.errors.setdefault(code, []).append((name, whole))

    def has(self, name: str) -> bool:
        return name in self.defs

    def first(self, *names: str) -> str:
        """The first of ``names`` this version defines."""
        return next(n for n in names if n in self.defs)

    def error_of(self, name: str, instance: Any, at: str = "$") -> str | None:
        """The most relevant error of ``instance`` (at JSON path ``at`` in its message)
        against definition ``name``, or None."""
        validator = self._validators.get(name)
        if validator is None:
            ref = {"$ref": f"{self.uri}#/{self.key}/{name}"}
            validator = self.dialect(
                ref, registry=self.registry, format_checker=FORMATS  # type: ignore[call-arg]
            )
            self._validators[name] = validator
        error = best_match(e for e in validator.iter_errors(instance) if not _schema_defect(e))
        if error is None:
            return None
        return f"{name}: {at}{error.json_path[1:]}: {shorten(error.message, 200)}"

    def request_defs(self, method: str) -> list[str]:
        return [n for n in self.methods.get(method, []) if n.endswith("Request")]

    def result_checks(self, method: str, message: dict[str, Any]) -> list[Check]:
        """(definition, instance) pairs a result answering ``method`` must satisfy.

        From 2026-07-28 a ``*ResultResponse`` allows ``InputRequiredResult`` or the method's
        own result; as the schema's ``ResultType`` description says, ``input_required`` names
        the former and ``complete`` the latter, which is then checked as the method's own
        (``InputRequiredResult`` alone requires so little that the union admits, say, a
        ``ReadResourceResult`` lacking its required fields).
        """
        requests = self.request_defs(method)
        if not requests:
            return [(NO_REQUEST, None, "$")]
        base = requests[0][: -len("Request")]
        result = message.get("result")
        if not self.has(f"{base}ResultResponse"):
            if isinstance(result, dict) and "task" in result and self.has("CreateTaskResult"):
                return [("CreateTaskResult", result, "$.result")]  # a task-augmented request's
            return [(self.first(f"{base}Result", "EmptyResult", "Result"), result, "$.result")]
        checks: list[Check] = [(f"{base}ResultResponse", message, "$")]
        if isinstance(result, dict) and result.get("resultType") == "task":
            # a task an extension made of the request (io.modelcontextprotocol/tasks): the
            # core schema knows only that it is a Result
            return [*checks, ("Result", result, "$.result")]
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            required = [("InputRequiredResult", result, "$.result"), (INPUT_REQUIRED, result, "")]
            return [*checks, *required]
        return [*checks, (self.first(f"{base}Result", "Result"), result, "$.result")]


def _code_const(node: Any) -> int | None:
    if not isinstance(node, dict):
        return None
    code = (node.get("properties") or {}).get("code")
    if isinstance(code, dict) and isinstance(code.get("const"), int):
        return code["const"]
    for part in node.get("allOf") or []:
        found = _code_const(part)
        if found is not None:
            return found
    return None


@dataclass
class Sent:
    """One message a server sent (or, ``sender="client"``, a client), with what it answers
    and the version in use."""

    scope: str
    kind: str  # request, notification, result, error, batch, junk
    method: str | None
    version: str | None
    message: Any
    error: str | None = None
    sender: str = "server"


class Oracle:
    """Every version's schema, loaded on first use from ``root/<version>/schema.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._schemas: dict[str, Schema] = {}

    def schema(self, version: str) -> Schema | None:
        if version not in self._schemas:
            path = self.root / version / "schema.json"
            if not path.is_file():
                return None
            self._schemas[version] = Schema(version, path)
        return self._schemas[version]

    def check(self, sent: Sent) -> Sent:
        """Fill ``sent.error`` with the first violation found (None: valid)."""
        sent.error = self._violation(sent)
        return sent

    def _violation(self, sent: Sent) -> str | None:
        message = sent.message
        if sent.kind == "junk":
            return f"not a JSON-RPC message: {shorten(message, 120)}"
        if sent.version is None:
            return "no protocol version in use for this message (answers no known request)"
        schema = self.schema(sent.version)
        if schema is None:
            return f"unknown protocol version {sent.version!r}"
        if sent.kind == "batch":
            return schema.error_of("JSONRPCMessage", message)
        checks: list[Check] = [("JSONRPCMessage", message, "$")]
        if sent.kind in ("request", "notification"):
            envelope = "JSONRPCRequest" if sent.kind == "request" else "JSONRPCNotification"
            names = schema.methods.get(sent.method or "", [])
            names = [n for n in names if n.endswith(envelope[len("JSONRPC") :])]
            if not names:
                return f"{sent.kind} {sent.method!r} is not defined at {sent.version}"
            # What a server may send: the version's ServerRequest/ServerNotification union
            # (2026-07-28 has no ServerRequest: a server asks only inside a result there);
            # a client, its ClientRequest/ClientNotification.
            side = "Client" if sent.sender == "client" else "Server"
            union = f"{side}Request" if sent.kind == "request" else f"{side}Notification"
            if not schema.has(union):
                return f"a {sent.sender} sends no {sent.kind}s at {sent.version} ({sent.method!r})"
            checks += [(envelope, message, "$"), *((n, message, "$") for n in names)]
            checks.append((union, message, "$"))
        elif sent.kind == "result":
            if sent.method is None:
                return "a result that answers no request of this connection"
            envelope = schema.first("JSONRPCResultResponse", "JSONRPCResponse")
            checks.append((envelope, message, "$"))
            checks += schema.result_checks(sent.method, message)
            union = "ClientResult" if sent.sender == "client" else "ServerResult"
            if schema.has(union):
                checks.append((union, message.get("result"), "$.result"))
        else:  # error
            checks.append((schema.first("JSONRPCErrorResponse", "JSONRPCError"), message, "$"))
            error = message.get("error") if isinstance(message, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            for name, whole in schema.errors.get(code, []) if isinstance(code, int) else []:
                checks.append((name, message, "$") if whole else (name, error, "$.error"))
        for name, instance, at in checks:
            if name == NO_REQUEST:
                return f"{sent.method!r} is not a request defined at {sent.version}"
            if name == INPUT_REQUIRED:
                if not {"inputRequests", "requestState"} & set(instance):
                    return "InputRequiredResult: $.result: neither inputRequests nor requestState"
                continue
            found = schema.error_of(name, instance, at)
            if found is not None:
                return found
        return None


class Judging:
    """What :class:`Wire` and :class:`ClientWire` share: the text one side sent, judged
    message by message (``_one``), each recorded with its verdict as ``sender``'s."""

    sender = "server"
    scope: str
    oracle: Oracle
    version: str | None
    sent: list[Sent]

    def _judge(self, raw: bytes, version: str | None) -> None:
        try:
            data = strict_json(raw)
        except ValueError as exc:
            text = f"{exc}: {raw.decode('utf-8', 'replace')}"
            self._record("junk", None, self.version or version, text)
            return
        if isinstance(data, list):
            self._record("batch", None, self.version or version, data)
        for message in data if isinstance(data, list) else [data]:
            self._one(message, version)

    def _one(self, message: Any, hint: str | None) -> None:
        raise NotImplementedError

    def _record(self, kind: str, method: str | None, version: str | None, message: Any) -> None:
        sent = Sent(self.scope, kind, method, version, message, sender=self.sender)
        self.sent.append(self.oracle.check(sent))


@dataclass
class Wire(Judging):
    """One connection's traffic in wire order (a stdio process, a legacy HTTP session, or
    one stateless HTTP exchange)."""

    scope: str
    oracle: Oracle
    #: The version in use: settled by ``initialize``, or named by the last modern request.
    version: str | None = None
    pending: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    progress: dict[str, str | None] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    #: Answers to requests of extensions (not judged: the core schema does not define them).
    extension_messages: int = 0

    def from_client(self, raw: bytes, version: str | None = None) -> None:
        """A line or body the client sent; ``version``: the transport's hint (a header)."""
        try:
            data = json.loads(raw.decode())
        except ValueError:
            return
        for message in data if isinstance(data, list) else [data]:
            if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                continue
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            named = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
            used = named if isinstance(named, str) else self.version or version
            if isinstance(named, str):
                self.version = named
            if "id" in message:
                self.pending[json.dumps(message["id"])] = (message["method"], used)
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            if token is not None:
                self.progress[json.dumps(token)] = used

    def from_server(self, raw: bytes, version: str | None = None) -> None:
        """A line, body or SSE event the server sent."""
        self._judge(raw, version)

    def _one(self, message: Any, hint: str | None) -> None:
        if not isinstance(message, dict):
            self._record("junk", None, self.version or hint, message)
            return
        method = message.get("method")
        if isinstance(method, str):
            kind = "request" if "id" in message else "notification"
            params = message.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            used = self.progress.get(json.dumps(token)) if token is not None else None
            self._record(kind, method, used or self.version or hint, message)
            return
        kind = "error" if "error" in message else "result"
        asked, used = self.pending.pop(json.dumps(message.get("id")), (None, None))
        if _extension_method(self.oracle, asked, used or self.version or hint):
            self.extension_messages += 1  # the core schema does not define it
            return
        result = message.get("result")
        if asked == "initialize" and kind == "result" and isinstance(result, dict):
            settled = result.get("protocolVersion")
            self.version = used = settled if isinstance(settled, str) else None
        self._record(kind, asked, used or self.version or hint, message)


#: Methods of the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``), which
#: the core schema does not define.
EXTENSION_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def _extension_method(oracle: Oracle, method: str | None, version: str | None) -> bool:
    """Whether ``method`` is an extension's that ``version``'s core schema does not define."""
    schema = oracle.schema(version) if version else None
    return method in EXTENSION_METHODS and schema is not None and method not in schema.methods


@dataclass
class ClientWire(Judging):
    """One connection's traffic in wire order, checking what the *client* sends: its
    requests and notifications against the version in use (the one its ``initialize``
    offers until the server's answer settles it, or the one a modern request names), and
    its answers to the server's requests against those requests' results."""

    sender = "client"
    scope: str
    oracle: Oracle
    version: str | None = None
    #: The server's requests not answered yet: id → (method, version).
    asked: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    initialize: str | None = None
    sent: list[Sent] = field(default_factory=list)
    #: Requests of extensions (not judged: the core schema does not define them).
    extension_requests: int = 0

    def from_server(self, raw: bytes, version: str | None = None) -> None:
        try:
            data = json.loads(raw.decode())
        except ValueError:
            return
        for message in data if isinstance(data, list) else [data]:
            if not isinstance(message, dict):
                continue
            method = message.get("method")
            if isinstance(method, str) and "id" in message:
                self.asked[json.dumps(message["id"])] = (method, self.version or version)
            result = message.get("result")
            answers_init = (
                self.initialize is not None and json.dumps(message.get("id")) == self.initialize
            )
            if answers_init and isinstance(result, dict):
                settled = result.get("protocolVersion")
                self.version = settled if isinstance(settled, str) else self.version

    def from_client(self, raw: bytes, version: str | None = None) -> None:
        """A line or body the client sent."""
        self._judge(raw, version)

    def _one(self, message: Any, hint: str | None) -> None:
        if not isinstance(message, dict):
            self._record("junk", None, self.version or hint, message)
            return
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            named = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
            used = named if isinstance(named, str) else self.version or hint
            if isinstance(named, str):
                self.version = named
            if _extension_method(self.oracle, method, used):
                self.extension_requests += 1  # the core schema does not define it
                return
            if method == "initialize" and isinstance(params, dict) and "id" in message:
                offered = params.get("protocolVersion")
                used = offered if isinstance(offered, str) else used
                self.initialize = json.dumps(message["id"])
            kind = "request" if "id" in message else "notification"
            self._record(kind, method, used, message)
            return
        kind = "error" if "error" in message else "result"
        asked, used = self.asked.pop(json.dumps(message.get("id")), (None, None))
        self._record(kind, asked, used or self.version or hint, message)
