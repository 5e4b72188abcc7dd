"""The "everything" server: every fixture the official conformance suite calls.

Written against the generated 2026-07-28 stubs; the runtime serves it to clients of every
version (older sessions get results re-shaped for their version).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import INVALID_PARAMS, McpError
from mcpgen.runtime.errors import resource_not_found

from .fixtures import JSON_SCHEMA_2020_12, PNG_BASE64, WAV_BASE64

ToolFn = Callable[[dict[str, Any], s.Context], Awaitable[t.CallToolResult]]
CACHE = {"ttl_ms": 0, "cache_scope": "public"}


def text(value: str) -> t.TextContent:
    return t.TextContent(text=value)


def result(*content: t.ContentBlock, is_error: bool = False) -> t.CallToolResult:
    return t.CallToolResult(content=list(content), is_error=is_error or t.UNSET)


def schema(
    properties: dict[str, Any] | None = None, required: list[str] | None = None
) -> t.ToolInputSchema:
    """A tool input schema (an open object: any JSON Schema keyword may be added)."""
    doc: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        doc["required"] = required
    return t.convert(doc, t.ToolInputSchema)


# -- tools ------------------------------------------------------------------------------


async def simple_text(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(text("This is a simple text response for testing."))


async def image_content(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(t.ImageContent(data=PNG_BASE64, mime_type="image/png"))


async def audio_content(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(t.AudioContent(data=WAV_BASE64, mime_type="audio/wav"))


def embedded(uri: str, mime_type: str, body: str) -> t.EmbeddedResource:
    return t.EmbeddedResource(
        resource=t.TextResourceContents(uri=uri, mime_type=mime_type, text=body)
    )


async def embedded_resource(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(
        embedded(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )
    )


async def multiple_content_types(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(
        text("Multiple content types test:"),
        t.ImageContent(data=PNG_BASE64, mime_type="image/png"),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            '{"test":"data","value":123}',
        ),
    )


async def with_logging(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    for message in (
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ):
        await ctx.log("info", message)
        await asyncio.sleep(0.05)
    return result(text("Tool with logging executed successfully"))


async def with_progress(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    return result(text("Tool with progress executed successfully"))


async def error_handling(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(text("This tool intentionally returns an error for testing"), is_error=True)


async def sampling(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    prompt = str(args.get("prompt", "Hello"))
    answer = await ctx.create_message(
        t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=text(prompt))],
            max_tokens=100,
        )
    )
    content = answer.content
    said = content.text if isinstance(content, t.TextContent) else t.encode(content).decode()
    return result(text(f"LLM response: {said}"))


def form(
    message: str, properties: dict[str, Any], required: list[str] | None = None
) -> t.ElicitRequestFormParams:
    requested = {"type": "object", "properties": properties}
    if required is not None:
        requested["required"] = required
    return t.ElicitRequestFormParams(
        message=message,
        requested_schema=t.convert(requested, t.ElicitRequestFormParamsRequestedSchema),
    )


async def elicitation(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.elicit(
        form(
            str(args.get("message", "Please provide your information")),
            {"username": {"type": "string"}, "email": {"type": "string"}},
            ["username", "email"],
        )
    )
    return result(
        text(f"User response: action={answer.action}, content={json.dumps(answer.content or {})}")
    )


async def elicitation_defaults(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.elicit(
        form(
            "Please review and update the form fields with defaults",
            {
                "name": {
                    "type": "string",
                    "description": "User name",
                    "default": "John Doe",
                },
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {
                    "type": "number",
                    "description": "User score",
                    "default": 95.5,
                },
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {
                    "type": "boolean",
                    "description": "Verification status",
                    "default": True,
                },
            },
            [],
        )
    )
    return result(
        text(
            f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"
        )
    )


async def elicitation_enums(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    options = [
        {"const": f"value{i}", "title": title}
        for i, title in ((1, "First Option"), (2, "Second Option"), (3, "Third Option"))
    ]
    choices = [
        {"const": f"value{i}", "title": title}
        for i, title in ((1, "First Choice"), (2, "Second Choice"), (3, "Third Choice"))
    ]
    answer = await ctx.elicit(
        form(
            "Please select options",
            {
                "untitledSingle": {
                    "type": "string",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {"type": "string", "oneOf": options},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "enum": ["option1", "option2", "option3"],
                    },
                },
                "titledMulti": {"type": "array", "items": {"anyOf": choices}},
            },
            [],
        )
    )
    return result(
        text(
            f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"
        )
    )


async def json_schema_tool(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    return result(text(f"Received: {json.dumps(args, sort_keys=True)}"))


# -- 2026-07-28 diagnostics and multi-round-trip fixtures ------------------------------------


async def missing_capability(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    ctx.require_capability("sampling")
    return result(text("The client declared sampling."))


async def streaming_elicitation(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.elicit(form("Continue?", {"ok": {"type": "boolean"}}, ["ok"]), key="confirm")
    return result(text(f"Streaming elicitation answered: {answer.action}"))


async def logging_tool(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    await ctx.log("info", "Logging tool ran")
    return result(text("Logged (only if the request asked for a log level)."))


async def trigger_tool_change(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    await SERVER.notify_changed("tools")
    return result(text("Announced a tool list change."))


async def trigger_prompt_change(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    await SERVER.notify_changed("prompts")
    return result(text("Announced a prompt list change."))


def ask_name(message: str = "What is your name?") -> t.ElicitRequestFormParams:
    return form(message, {"name": {"type": "string"}}, ["name"])


def content_of(answer: t.ElicitResult, key: str) -> Any:
    return (answer.content or {}).get(key) if answer.action == "accept" else None


async def mrtr_elicitation(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.elicit(ask_name(), key="user_name")
    return result(text(f"Hello, {content_of(answer, 'name')}!"))


def ask_llm(prompt: str, max_tokens: int) -> t.CreateMessageRequestParams:
    return t.CreateMessageRequestParams(
        messages=[t.SamplingMessage(role="user", content=text(prompt))], max_tokens=max_tokens
    )


def said(answer: t.CreateMessageResult) -> str:
    content = answer.content
    return content.text if isinstance(content, t.TextContent) else t.encode(content).decode()


async def mrtr_sampling(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.create_message(
        ask_llm("What is the capital of France?", 100), key="capital_question"
    )
    return result(text(f"The model said: {said(answer)}"))


async def mrtr_list_roots(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    roots = await ctx.list_roots(key="client_roots")
    return result(text("Roots: " + ", ".join(r.uri for r in roots.roots)))


async def mrtr_request_state(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    answer = await ctx.elicit(form("Confirm?", {"ok": {"type": "boolean"}}, ["ok"]), key="confirm")
    return result(text(f"state-ok: confirmed={content_of(answer, 'ok')}"))


async def mrtr_multiple_inputs(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    name, greeting, roots = await asyncio.gather(
        ctx.elicit(ask_name(), key="user_name"),
        ctx.create_message(ask_llm("Generate a greeting", 50), key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    roots_text = ", ".join(r.uri for r in roots.roots)
    return result(text(f"{said(greeting)} {content_of(name, 'name')} (roots: {roots_text})"))


async def mrtr_multi_round(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    name = await ctx.elicit(ask_name("Step 1: What is your name?"), key="step1")
    color = await ctx.elicit(
        form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"]),
        key="step2",
    )
    return result(text(f"{content_of(name, 'name')} likes {content_of(color, 'color')}"))


async def x_mcp_header(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    """Its arguments arrive checked against their Mcp-Param-* headers (the runtime's job)."""
    shown = ", ".join(f"{k}={args[k]!r}" for k in ("region", "priority", "verbose") if k in args)
    return result(text(f"headers matched: {shown}"))


async def mrtr_capabilities(args: dict[str, Any], ctx: s.Context) -> t.CallToolResult:
    caps = ctx.client_capabilities
    if caps.elicitation is not t.UNSET:
        answer = await ctx.elicit(ask_name(), key="user_name")
        return result(text(f"Elicited: {content_of(answer, 'name')}"))
    if caps.sampling is not t.UNSET:
        answer = await ctx.create_message(ask_llm("Say hello", 20), key="hello")
        return result(text(f"Sampled: {said(answer)}"))
    return result(text("The client can answer no input request."), is_error=True)


TOOLS: dict[str, tuple[t.Tool, ToolFn]] = {}


def tool(
    name: str,
    description: str,
    fn: ToolFn,
    input_schema: t.ToolInputSchema | None = None,
) -> None:
    TOOLS[name] = (
        t.Tool(name=name, description=description, input_schema=input_schema or schema()),
        fn,
    )


tool("test_simple_text", "Returns simple text content", simple_text)
tool("test_image_content", "Returns a PNG image", image_content)
tool("test_audio_content", "Returns a WAV audio clip", audio_content)
tool("test_embedded_resource", "Returns an embedded text resource", embedded_resource)
tool(
    "test_multiple_content_types",
    "Returns text, an image and a resource",
    multiple_content_types,
)
tool("test_tool_with_logging", "Sends log messages while it runs", with_logging)
tool("test_tool_with_progress", "Reports progress while it runs", with_progress)
tool("test_error_handling", "Always fails with a tool error", error_handling)
tool(
    "test_sampling",
    "Asks the client's LLM to answer a prompt",
    sampling,
    schema({"prompt": {"type": "string", "description": "The prompt to send"}}, ["prompt"]),
)
tool(
    "test_elicitation",
    "Asks the user for information",
    elicitation,
    schema(
        {"message": {"type": "string", "description": "The message to show"}},
        ["message"],
    ),
)
tool(
    "test_elicitation_sep1034_defaults",
    "Asks the user with defaults for every field",
    elicitation_defaults,
)
tool(
    "test_elicitation_sep1330_enums",
    "Asks the user to pick from every kind of enum",
    elicitation_enums,
)
tool(
    "json_schema_2020_12_tool",
    "Tool with JSON Schema 2020-12 features",
    json_schema_tool,
    t.convert(JSON_SCHEMA_2020_12, t.ToolInputSchema),
)


tool("test_missing_capability", "Needs the client's sampling capability", missing_capability)
tool("test_streaming_elicitation", "Asks the user for input while it runs", streaming_elicitation)
tool("test_logging_tool", "Logs at info level", logging_tool)
tool("test_trigger_tool_change", "Announces that the tool list changed", trigger_tool_change)
tool("test_trigger_prompt_change", "Announces that the prompt list changed", trigger_prompt_change)
tool("test_input_required_result_elicitation", "Asks the user's name", mrtr_elicitation)
tool("test_input_required_result_sampling", "Asks the client's LLM a question", mrtr_sampling)
tool("test_input_required_result_list_roots", "Asks for the client's roots", mrtr_list_roots)
tool("test_input_required_result_request_state", "Asks a confirmation", mrtr_request_state)
tool(
    "test_input_required_result_multiple_inputs", "Asks three inputs at once", mrtr_multiple_inputs
)
tool("test_input_required_result_multi_round", "Asks in two rounds", mrtr_multi_round)
tool("test_input_required_result_tampered_state", "Asks a confirmation", mrtr_request_state)
tool(
    "test_x_mcp_header",
    "Mirrors its arguments into Mcp-Param-* HTTP headers (x-mcp-header)",
    x_mcp_header,
    schema(
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        },
        ["region"],
    ),
)
tool(
    "test_input_required_result_capabilities",
    "Asks only what the client can answer",
    mrtr_capabilities,
)

#: Set by ``build_server`` so the trigger tools can announce changes.
SERVER: Any = None


# -- resources and prompts --------------------------------------------------------------

RESOURCES = [
    t.Resource(
        uri="test://static-text",
        name="static-text",
        description="Static text",
        mime_type="text/plain",
    ),
    t.Resource(
        uri="test://static-binary",
        name="static-binary",
        description="Static PNG",
        mime_type="image/png",
    ),
    t.Resource(
        uri="test://watched-resource",
        name="watched-resource",
        description="Subscribable",
        mime_type="text/plain",
    ),
]
TEMPLATES = [
    t.ResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template-data",
        description="Data for an id",
        mime_type="application/json",
    )
]
PROMPTS = [
    t.Prompt(name="test_simple_prompt", description="A prompt without arguments"),
    t.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two required arguments",
        arguments=[
            t.PromptArgument(name="arg1", description="First argument", required=True),
            t.PromptArgument(name="arg2", description="Second argument", required=True),
        ],
    ),
    t.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that embeds a resource",
        arguments=[t.PromptArgument(name="resourceUri", description="URI to embed", required=True)],
    ),
    t.Prompt(name="test_prompt_with_image", description="A prompt with an image"),
    t.Prompt(
        name="test_input_required_result_prompt", description="A prompt that asks for context first"
    ),
]


def user(content: t.ContentBlock) -> t.PromptMessage:
    return t.PromptMessage(role="user", content=content)


class Everything(s.ServerHandlers):
    """Handlers for every request the conformance suite sends."""

    async def list_tools(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListToolsResult:
        return t.ListToolsResult(tools=[spec for spec, _ in TOOLS.values()], **CACHE)

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        entry = TOOLS.get(params.name)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        return await entry[1](arguments, ctx)

    async def list_resources(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListResourcesResult:
        return t.ListResourcesResult(resources=RESOURCES, **CACHE)

    async def list_resource_templates(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListResourceTemplatesResult:
        return t.ListResourceTemplatesResult(resource_templates=TEMPLATES, **CACHE)

    async def read_resource(
        self, params: t.ReadResourceRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrReadResourceResult:
        uri = params.uri
        contents: t.TextResourceContents | t.BlobResourceContents
        if uri in ("test://static-text", "test://watched-resource"):
            contents = t.TextResourceContents(
                uri=uri,
                mime_type="text/plain",
                text="This is the content of the static text resource.",
            )
        elif uri == "test://static-binary":
            contents = t.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG_BASE64)
        elif uri.startswith("test://template/") and uri.endswith("/data"):
            item = uri[len("test://template/") : -len("/data")]
            body = json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})
            contents = t.TextResourceContents(uri=uri, mime_type="application/json", text=body)
        else:
            raise resource_not_found(uri)
        return t.ReadResourceResult(contents=[contents], **CACHE)

    async def list_prompts(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListPromptsResult:
        return t.ListPromptsResult(prompts=PROMPTS, **CACHE)

    async def get_prompt(
        self, params: t.GetPromptRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrGetPromptResult:
        args = params.arguments or {}
        if params.name == "test_simple_prompt":
            messages = [user(text("This is a simple prompt for testing."))]
        elif params.name == "test_prompt_with_arguments":
            messages = [
                user(
                    text(
                        f"Prompt with arguments: arg1='{args.get('arg1', '')}', arg2='{args.get('arg2', '')}'"
                    )
                )
            ]
        elif params.name == "test_prompt_with_embedded_resource":
            uri = args.get("resourceUri", "test://example-resource")
            messages = [
                user(embedded(uri, "text/plain", "Embedded resource content for testing.")),
                user(text("Please process the embedded resource above.")),
            ]
        elif params.name == "test_input_required_result_prompt":
            answer = await ctx.elicit(
                form("Which context?", {"context": {"type": "string"}}, ["context"]),
                key="user_context",
            )
            messages = [user(text(f"Context: {content_of(answer, 'context')}"))]
        elif params.name == "test_prompt_with_image":
            messages = [
                user(t.ImageContent(data=PNG_BASE64, mime_type="image/png")),
                user(text("Please analyze the image above.")),
            ]
        else:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return t.GetPromptResult(messages=messages)

    async def complete(self, params: t.CompleteRequestParams, ctx: s.Context) -> t.CompleteResult:
        candidates: list[str] = []
        if (
            isinstance(params.ref, t.PromptReference)
            and params.ref.name == "test_prompt_with_arguments"
        ):
            candidates = ["test-value-1", "test-value-2", "other-value"]
        values = [v for v in candidates if v.startswith(params.argument.value)]
        return t.CompleteResult(
            completion=t.CompleteResultCompletion(values=values, total=len(values), has_more=False)
        )

    # Legacy-only requests (the 2026 stubs lack them; older sessions still send them).

    async def subscribe(self, params: Any, ctx: s.Context) -> t.EmptyResult:
        self.subscriptions.add(params.uri)
        return t.EmptyResult()

    async def unsubscribe(self, params: Any, ctx: s.Context) -> t.EmptyResult:
        self.subscriptions.discard(params.uri)
        return t.EmptyResult()

    def __init__(self) -> None:
        self.subscriptions: set[str] = set()
