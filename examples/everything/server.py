"""The "everything" server: every fixture the official conformance suite calls, written on
``mcpgen.runtime.App`` over the generated 2026-07-28 stubs. The runtime serves it to
clients of every version (older sessions get results re-shaped for their version).

``build_app`` makes a fresh app (tests add tools of their own to it); ``add_fixtures``
registers the fixtures on any app bound to the 2026-07-28 stubs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from msgspec import UNSET, UnsetType

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import (
    App,
    Audio,
    CacheHint,
    CachePolicy,
    File,
    Image,
    Limits,
    Tasks,
    ToolError,
    header,
)

from .fixtures import JSON_SCHEMA_2020_12, PNG, WAV
from .task_tools import add_task_tools

Context = stubs.Context
#: The fixtures are the same for every client: lists and reads may be shared, not kept.
CACHE = CachePolicy(default=CacheHint(ttl_ms=0, scope="public"))
COMPLETIONS = ("test-value-1", "test-value-2", "other-value")


def build_app(
    limits: Limits | None = None, name: str = "mcpgen-everything", tasks: Tasks | None = None
) -> App:
    """The everything server as an app (``app.server`` serves it); ``tasks`` keeps its
    tasks (default: in this process's memory)."""
    app = App(
        name,
        "0.1.0",
        binding=stubs,
        instructions="Conformance fixtures for mcpgen.",
        limits=limits,
        cache=CACHE,
        tasks=tasks,
    )
    add_fixtures(app)
    return app


def form(
    message: str, properties: dict[str, Any], required: list[str] | None = None
) -> t.ElicitRequestFormParams:
    requested: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        requested["required"] = required
    return t.ElicitRequestFormParams(
        message=message,
        requested_schema=t.convert(requested, t.ElicitRequestFormParamsRequestedSchema),
    )


def ask_name(message: str = "What is your name?") -> t.ElicitRequestFormParams:
    return form(message, {"name": {"type": "string"}}, ["name"])


def ask_llm(prompt: str, max_tokens: int) -> t.CreateMessageRequestParams:
    return t.CreateMessageRequestParams(
        messages=[t.SamplingMessage(role="user", content=t.TextContent(text=prompt))],
        max_tokens=max_tokens,
    )


def said(answer: t.CreateMessageResult) -> str:
    content = answer.content
    return content.text if isinstance(content, t.TextContent) else t.encode(content).decode()


def content_of(answer: t.ElicitResult, key: str) -> Any:
    return (answer.content or {}).get(key) if answer.action == "accept" else None


def answered(prefix: str, answer: t.ElicitResult) -> str:
    return f"{prefix}: action={answer.action}, content={json.dumps(answer.content or {})}"


DEFAULTS_FORM = form(
    "Please review and update the form fields with defaults",
    {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    [],
)


def _titled(kind: str, titles: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"const": f"value{i}", "title": f"{title} {kind}"} for i, title in enumerate(titles, 1)]


ENUMS_FORM = form(
    "Please select options",
    {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": _titled("Option", ("First", "Second", "Third")),
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {"anyOf": _titled("Choice", ("First", "Second", "Third"))},
        },
    },
    [],
)


def add_fixtures(app: App) -> None:
    """Register every conformance fixture on ``app``."""
    add_content_tools(app)
    add_client_request_tools(app)
    add_input_required_tools(app)
    add_task_tools(app)
    add_resources(app)
    add_prompts(app)


def add_content_tools(app: App) -> None:
    """Tools answering with each kind of content, an error, logs and progress."""

    @app.tool
    def test_simple_text() -> str:
        """Returns simple text content"""
        return "This is a simple text response for testing."

    @app.tool
    def test_image_content() -> Image:
        """Returns a PNG image"""
        return Image(PNG)

    @app.tool
    def test_audio_content() -> Audio:
        """Returns a WAV audio clip"""
        return Audio(WAV)

    @app.tool
    def test_embedded_resource() -> File:
        """Returns an embedded text resource"""
        return File(
            "This is an embedded resource content.", "text/plain", "test://embedded-resource"
        )

    @app.tool
    def test_multiple_content_types() -> list[str | Image | File]:
        """Returns text, an image and a resource"""
        return [
            "Multiple content types test:",
            Image(PNG),
            File(
                '{"test":"data","value":123}', "application/json", "test://mixed-content-resource"
            ),
        ]

    @app.tool
    async def test_tool_with_logging(ctx: Context) -> str:
        """Sends log messages while it runs"""
        for message in (
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ):
            await ctx.log("info", message)
            await asyncio.sleep(0.05)
        return "Tool with logging executed successfully"

    @app.tool
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress while it runs"""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            await asyncio.sleep(0.05)
        return "Tool with progress executed successfully"

    @app.tool
    def test_error_handling() -> str:
        """Always fails with a tool error"""
        raise ToolError("This tool intentionally returns an error for testing")

    @app.tool(name="json_schema_2020_12_tool", input_schema=JSON_SCHEMA_2020_12)
    def json_schema_tool(**arguments: Any) -> str:
        """Tool with JSON Schema 2020-12 features"""
        return f"Received: {json.dumps(arguments, sort_keys=True)}"

    @app.tool
    def test_x_mcp_header(
        region: Annotated[str, header("Region")],
        priority: Annotated[int, header("Priority")] | UnsetType = UNSET,
        verbose: Annotated[bool, header("Verbose")] | UnsetType = UNSET,
    ) -> str:
        """Mirrors its arguments into Mcp-Param-* HTTP headers (x-mcp-header)"""
        # Over HTTP the runtime has checked each argument against its header already.
        given = {"region": region, "priority": priority, "verbose": verbose}
        shown = ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not UNSET)
        return f"headers matched: {shown}"

    @app.tool
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info level"""
        await ctx.log("info", "Logging tool ran")
        return "Logged (only if the request asked for a log level)."

    @app.tool
    async def test_trigger_tool_change() -> str:
        """Announces that the tool list changed"""
        await app.server.notify_changed("tools")
        return "Announced a tool list change."

    @app.tool
    async def test_trigger_prompt_change() -> str:
        """Announces that the prompt list changed"""
        await app.server.notify_changed("prompts")
        return "Announced a prompt list change."

    @app.tool
    async def test_trigger_resource_update() -> str:
        """Announces that test://watched-resource changed (to its subscribers)"""
        await app.resource_updated("test://watched-resource")
        return "Announced an update of test://watched-resource."


def add_client_request_tools(app: App) -> None:
    """Tools that ask the client: sampling, elicitation, a capability it may lack."""

    @app.tool
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Asks the client's LLM to answer a prompt

        Args:
            prompt: The prompt to send
        """
        return f"LLM response: {said(await ctx.create_message(ask_llm(prompt, 100)))}"

    @app.tool
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Asks the user for information

        Args:
            message: The message to show
        """
        properties = {"username": {"type": "string"}, "email": {"type": "string"}}
        answer = await ctx.elicit(form(message, properties, ["username", "email"]))
        return answered("User response", answer)

    @app.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Asks the user with defaults for every field"""
        return answered("Elicitation completed", await ctx.elicit(DEFAULTS_FORM))

    @app.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Asks the user to pick from every kind of enum"""
        return answered("Elicitation completed", await ctx.elicit(ENUMS_FORM))

    @app.tool
    def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling capability"""
        ctx.require_capability("sampling")
        return "The client declared sampling."

    @app.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks the user for input while it runs"""
        answer = await ctx.elicit(
            form("Continue?", {"ok": {"type": "boolean"}}, ["ok"]), key="confirm"
        )
        return f"Streaming elicitation answered: {answer.action}"


def add_input_required_tools(app: App) -> None:
    """2026-07-28's multi-round-trip fixtures (earlier clients are asked over the wire)."""

    @app.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name"""
        answer = await ctx.elicit(ask_name(), key="user_name")
        return f"Hello, {content_of(answer, 'name')}!"

    @app.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's LLM a question"""
        question = ask_llm("What is the capital of France?", 100)
        return f"The model said: {said(await ctx.create_message(question, key='capital_question'))}"

    @app.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots"""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(r.uri for r in roots.roots)

    async def confirm(ctx: Context) -> str:
        """Asks a confirmation"""
        answer = await ctx.elicit(
            form("Confirm?", {"ok": {"type": "boolean"}}, ["ok"]), key="confirm"
        )
        return f"state-ok: confirmed={content_of(answer, 'ok')}"

    app.add_tool(confirm, name="test_input_required_result_request_state")
    app.add_tool(confirm, name="test_input_required_result_tampered_state")

    @app.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks three inputs at once"""
        name, greeting, roots = await asyncio.gather(
            ctx.elicit(ask_name(), key="user_name"),
            ctx.create_message(ask_llm("Generate a greeting", 50), key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        roots_text = ", ".join(r.uri for r in roots.roots)
        return f"{said(greeting)} {content_of(name, 'name')} (roots: {roots_text})"

    @app.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks in two rounds"""
        name = await ctx.elicit(ask_name("Step 1: What is your name?"), key="step1")
        color = await ctx.elicit(
            form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"]),
            key="step2",
        )
        return f"{content_of(name, 'name')} likes {content_of(color, 'color')}"

    @app.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the client can answer"""
        caps = ctx.client_capabilities
        if caps.elicitation is not t.UNSET:
            answer = await ctx.elicit(ask_name(), key="user_name")
            return f"Elicited: {content_of(answer, 'name')}"
        if caps.sampling is not t.UNSET:
            answer = await ctx.create_message(ask_llm("Say hello", 20), key="hello")
            return f"Sampled: {said(answer)}"
        raise ToolError("The client can answer no input request.")


def add_resources(app: App) -> None:
    static = "This is the content of the static text resource."

    @app.resource("test://static-text", name="static-text", mime_type="text/plain")
    def static_text() -> str:
        """Static text"""
        return static

    @app.resource("test://static-binary", name="static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """Static PNG"""
        return PNG

    @app.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
    def watched() -> str:
        """Subscribable"""
        return static

    @app.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
    def template_data(id: str) -> str:
        """Data for an id"""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


def add_prompts(app: App) -> None:
    @app.prompt
    def test_simple_prompt() -> str:
        """A prompt without arguments"""
        return "This is a simple prompt for testing."

    @app.prompt
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two required arguments

        Args:
            arg1: First argument
            arg2: Second argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @app.prompt
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        """A prompt that embeds a resource

        Args:
            resourceUri: URI to embed
        """
        embedded = File("Embedded resource content for testing.", "text/plain", resourceUri)
        return [embedded, "Please process the embedded resource above."]

    @app.prompt
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image"""
        return [Image(PNG), "Please analyze the image above."]

    @app.prompt
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that asks for context first"""
        asked = form("Which context?", {"context": {"type": "string"}}, ["context"])
        answer = await ctx.elicit(asked, key="user_context")
        return f"Context: {content_of(answer, 'context')}"

    for argument in ("arg1", "arg2"):

        @app.completion(prompt="test_prompt_with_arguments", argument=argument)
        def complete(value: str, given: dict[str, str]) -> list[str]:
            return [v for v in COMPLETIONS if v.startswith(value)]
