"""The clients' side of the wire-validity test: answering what a server asks (sampling,
elicitation, roots) validly, and driving everything a server offers the same way through the
official SDK client and through our generated ``Client``.

A client's own reactions (a result it rejects, a timeout) are noted, never judged: the judge
is what the server sent (:mod:`wire_oracle`). A list the client rejects is read off the wire
instead, so that one invalid list result does not hide what it lists.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import msgspec
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

import mcp.types as sdk
from mcp import Client as SdkClient
from mcp.client.session import ClientRequestContext

from support.wire_oracle import Sent, shorten

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
#: Bound of one request (a session has its own).
CALL_TIMEOUT = 10.0
T = TypeVar("T")


# -- answering what a server asks -------------------------------------------------------


def sample(node: Any, root: Any) -> Any:
    """A value valid for JSON Schema ``node`` (the subset servers use for inputs/forms)."""
    if not isinstance(node, dict):
        return "wire-check"
    if isinstance(node.get("$ref"), str):
        target: Any = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return sample(target, root)
    for key in ("const", "default"):
        if key in node:
            return node[key]
    if node.get("enum"):
        return node["enum"][0]
    for key in ("oneOf", "anyOf"):
        if node.get(key):
            return sample(node[key][0], root)
    kind = node.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "object" or "properties" in node:
        return {name: sample(sub, root) for name, sub in (node.get("properties") or {}).items()}
    if kind == "array":
        return [sample(node.get("items"), root)]
    if kind in ("integer", "number"):
        return max(1, node.get("minimum", 1))
    if kind == "boolean":
        return True
    return {"email": "wire@example.com", "uri": "https://example.com/wire"}.get(
        node.get("format", ""), "wire-check"
    )


def tool_arguments(schema: Any) -> dict[str, Any]:
    """Arguments valid for a tool's input schema, checked with jsonschema."""
    arguments = sample(schema, schema)
    checker = validator_for(schema, default=Draft202012Validator)(schema)
    errors = [e.message for e in checker.iter_errors(arguments)]
    assert not errors, f"test bug: {arguments} is invalid for {schema}: {errors}"
    return arguments


def form_answer(requested: Any) -> dict[str, Any]:
    return {k: sample(v, requested) for k, v in (requested.get("properties") or {}).items()}


async def sdk_sampling(
    context: ClientRequestContext, params: sdk.CreateMessageRequestParams
) -> sdk.CreateMessageResult:
    return sdk.CreateMessageResult(
        role="assistant",
        content=sdk.TextContent(type="text", text="4"),
        model="fake-llm",
        stop_reason="endTurn",
    )


async def sdk_elicit(
    context: ClientRequestContext, params: sdk.ElicitRequestParams
) -> sdk.ElicitResult:
    if isinstance(params, sdk.ElicitRequestFormParams):
        return sdk.ElicitResult(action="accept", content=form_answer(params.requested_schema))
    return sdk.ElicitResult(action="accept")


async def sdk_roots(context: ClientRequestContext) -> sdk.ListRootsResult:
    return sdk.ListRootsResult(
        roots=[sdk.Root.model_validate({"uri": "file:///tmp/wire", "name": "wire"})]
    )


async def on_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
    return None


class Answers:
    """Our client's handlers; mixed into the generated ``ClientHandlers`` of a version."""

    types: Any = None

    async def create_message(self, params: Any, ctx: Any) -> Any:
        answer = {"role": "assistant", "content": {"type": "text", "text": "4"}}
        return self.types.convert({**answer, "model": "fake-llm"}, self.types.CreateMessageResult)

    async def list_roots(self, params: Any, ctx: Any) -> Any:
        roots = {"roots": [{"uri": "file:///tmp/wire", "name": "wire"}]}
        return self.types.convert(roots, self.types.ListRootsResult)

    async def elicit(self, params: Any, ctx: Any) -> Any:
        plain = msgspec.to_builtins(params)
        answer: dict[str, Any] = {"action": "accept"}
        if isinstance(plain.get("requestedSchema"), dict):
            answer["content"] = form_answer(plain["requestedSchema"])
        return self.types.convert(answer, self.types.ElicitResult)

    async def on_logging_message(self, params: Any) -> None:
        return None


def our_client(version: str) -> tuple[Any, Any]:
    """The generated ``Client`` of ``version`` and handlers built on its ``ClientHandlers``."""
    package = "v" + version.replace("-", "_")
    client = importlib.import_module(f"mcpgen.generated.{package}.client")
    handlers = type("Handlers", (Answers, client.ClientHandlers), {})()
    handlers.types = importlib.import_module(f"mcpgen.generated.{package}.types")
    return client.Client, handlers


# -- driving every feature, the same way through either client ----------------------------


@dataclass
class Drive:
    """What went wrong on the client's side (context: the wire is what is judged)."""

    #: What the server has sent so far (read off the wire).
    wire: Callable[[], list[Sent]] = list
    notes: list[str] = field(default_factory=list)
    timeouts: int = 0

    async def attempt(self, what: str, call: Callable[[], Awaitable[T]]) -> T | None:
        if self.timeouts >= 2:
            return None
        try:
            with anyio.fail_after(CALL_TIMEOUT):
                return await call()
        except TimeoutError:
            self.timeouts += 1
            self.notes.append(f"{what}: no answer within {CALL_TIMEOUT}s")
        except Exception as exc:  # the client's reaction is context, not the subject
            self.notes.append(f"{what}: {type(exc).__name__}: {shorten(str(exc), 200)}")
        return None

    def listed(self, method: str, key: str) -> list[dict[str, Any]]:
        """The items of the last ``method`` result the server sent."""
        results = [s.message for s in self.wire() if s.kind == "result" and s.method == method]
        found = results[-1]["result"].get(key) if results else None
        return [item for item in found or [] if isinstance(item, dict)]


#: List method → the clients' call for it (the same name in both) and the items' key.
LISTS = {
    "tools/list": ("list_tools", "tools"),
    "resources/list": ("list_resources", "resources"),
    "resources/templates/list": ("list_resource_templates", "resourceTemplates"),
    "prompts/list": ("list_prompts", "prompts"),
}


def plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return (
        dump(mode="json", by_alias=True, exclude_none=True) if dump else msgspec.to_builtins(value)
    )


class Sdk:
    """The SDK client, as the drive uses it."""

    def __init__(self, c: SdkClient) -> None:
        self.c, self.legacy = c, c.protocol_version in HANDSHAKE
        self.caps: dict[str, Any] = plain(c.server_capabilities)

    async def page(self, method: str, cursor: str | None) -> Any:
        return plain(await getattr(self.c, LISTS[method][0])(cursor=cursor))

    def ping(self) -> Awaitable[Any]:
        return self.c.send_ping()

    def set_level(self) -> Awaitable[Any]:
        return self.c.set_logging_level("debug")

    def call(self, name: str, args: dict[str, Any]) -> Awaitable[Any]:
        return self.c.call_tool(name, args, progress_callback=on_progress)

    def read(self, uri: str) -> Awaitable[Any]:
        return self.c.read_resource(uri)

    def subscribe(self, uri: str, on: bool) -> Awaitable[Any]:
        return self.c.subscribe_resource(uri) if on else self.c.unsubscribe_resource(uri)

    def prompt(self, name: str, args: dict[str, str]) -> Awaitable[Any]:
        return self.c.get_prompt(name, args)

    def complete(self, ref: dict[str, Any], name: str) -> Awaitable[Any]:
        kind = sdk.PromptReference if ref["type"] == "ref/prompt" else sdk.ResourceTemplateReference
        return self.c.complete(kind.model_validate(ref), {"name": name, "value": ""})


class Ours:
    """Our generated ``Client`` (of one version), as the drive uses it."""

    def __init__(self, client: Any, types: Any) -> None:
        self.client, self.t, self.session = client, types, client.session
        self.legacy = self.session.era == "legacy"
        self.caps: dict[str, Any] = self.session.server_capabilities
        if not self.legacy:
            self.session.set_log_level("debug")  # the modern per-request opt-in

    async def page(self, method: str, cursor: str | None) -> Any:
        options = {"cursor": cursor} if cursor else {}
        return plain(await getattr(self.client, LISTS[method][0])(**options))

    def ping(self) -> Awaitable[Any]:
        return self.session.request("ping")

    def set_level(self) -> Awaitable[Any]:
        return self.session.request("logging/setLevel", {"level": "debug"})

    def call(self, name: str, args: dict[str, Any]) -> Awaitable[Any]:
        return self.client.call_tool(name=name, arguments=args, progress=on_progress)

    def read(self, uri: str) -> Awaitable[Any]:
        return self.client.read_resource(uri=uri)

    def subscribe(self, uri: str, on: bool) -> Awaitable[Any]:
        return (self.client.subscribe if on else self.client.unsubscribe)(uri=uri)

    def prompt(self, name: str, args: dict[str, str]) -> Awaitable[Any]:
        return self.client.get_prompt(name=name, arguments=args)

    def complete(self, ref: dict[str, Any], name: str) -> Awaitable[Any]:
        t = self.t
        template = getattr(t, "ResourceTemplateReference", None) or t.ResourceReference
        kind = t.PromptReference if ref["type"] == "ref/prompt" else template
        argument = t.convert({"name": name, "value": ""}, t.CompleteRequestParamsArgument)
        return self.client.complete(ref=t.convert(ref, kind), argument=argument)


async def items(api: Sdk | Ours, method: str, d: Drive) -> list[dict[str, Any]]:
    """Every page of a list. When the client rejects a page, its items are read off the
    wire instead: one invalid list result must not hide what it lists from the drive."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(20):
        page = await d.attempt(method, lambda: api.page(method, cursor))
        if not isinstance(page, dict):
            return found + d.listed(method, LISTS[method][1])
        found += page.get(LISTS[method][1]) or []
        cursor = page.get("nextCursor")
        if not cursor:
            break
    return found


def prompt_arguments(names: list[str]) -> dict[str, str]:
    """Prompt arguments have no schema: a URI where the name asks for one, else a word."""
    return {n: "test://wire-check" if "uri" in n.lower() else "wire-check" for n in names}


def template_uri(template: str) -> str:
    return re.sub(r"\{[^}]*\}", "1", template)


async def drive(api: Sdk | Ours, d: Drive) -> None:
    caps, completions = api.caps, "completions" in api.caps
    await d.attempt("ping", api.ping)
    if api.legacy and "logging" in caps:
        await d.attempt("logging/setLevel", api.set_level)
    for tool in await items(api, "tools/list", d):
        name, args = tool["name"], tool_arguments(tool["inputSchema"])
        await d.attempt(name, lambda: api.call(name, args))
    await d.attempt("unknown tool", lambda: api.call("wire-check-no-such-tool", {}))
    subscribe = api.legacy and bool((caps.get("resources") or {}).get("subscribe"))
    for resource in await items(api, "resources/list", d):
        uri = resource["uri"]
        await d.attempt(uri, lambda: api.read(uri))
        for on in (True, False) if subscribe else ():
            await d.attempt(f"subscribe {on}", lambda: api.subscribe(uri, on))
    await d.attempt("unknown resource", lambda: api.read("wire-check://nowhere"))
    for template in await items(api, "resources/templates/list", d):
        ref = {"type": "ref/resource", "uri": template["uriTemplate"]}
        await d.attempt(ref["uri"], lambda: api.read(template_uri(ref["uri"])))
        for var in re.findall(r"\{([^}]*)\}", ref["uri"]) if completions else []:
            await d.attempt("complete", lambda: api.complete(ref, var))
    for prompt in await items(api, "prompts/list", d):
        name, names = prompt["name"], [a["name"] for a in prompt.get("arguments") or []]
        await d.attempt(name, lambda: api.prompt(name, prompt_arguments(names)))
        for arg in names if completions else []:
            ref = {"type": "ref/prompt", "name": name}
            await d.attempt("complete", lambda: api.complete(ref, arg))
