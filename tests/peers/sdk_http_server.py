"""A low-level Streamable HTTP server built on the official MCP Python SDK (``mcp`` 2.3), the
peer of ``tests/interop/test_interop_http.py``: run as
``python tests/peers/sdk_http_server.py --port PORT`` (serves ``http://127.0.0.1:PORT/mcp``
with uvicorn until SIGTERM/SIGINT); with ``--transport sse``, the 2024-11-05 HTTP+SSE
transport instead (``/sse`` and ``/messages/``), and nothing at ``/mcp``.

One endpoint serves both eras (the SDK routes each POST by its ``MCP-Protocol-Version``
header): a 2025-11-25 session after ``initialize``, or stateless 2026-07-28 requests.

Tools:

* ``echo`` [text] — the text back;
* ``ask`` [prompt] — asks the client's LLM (sampling) and its user (a form elicitation),
  then reports both answers. In the legacy era it sends ``sampling/createMessage`` and
  ``elicitation/create`` as server → client requests; in the modern era it returns an
  ``InputRequiredResult`` (keys ``llm`` and ``form``, ``requestState`` ``round-1``) and
  answers the retry from ``inputResponses``;
* ``progress`` [steps] — reports ``steps`` progress notifications, then answers;
* ``log`` — sends two log messages (``debug`` and ``info``), then answers; ``whoami`` —
  the protocol version the request was served in.

One text resource, one resource template, and a ``greet`` prompt. Unknown names fail with
-32602.
"""

from __future__ import annotations

import argparse
import json
import warnings
from typing import Any

import mcp.types as types
import uvicorn
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

# Logging, sampling, elicitation and progress APIs warn; this module only ever runs as a
# script, so keep its stderr quiet.
warnings.simplefilter("ignore", MCPDeprecationWarning)

Ctx = ServerRequestContext[Any]

README_URI = "sdk://http-peer/readme"
README_TEXT = "Served over Streamable HTTP by the official MCP Python SDK."
TEMPLATE = "sdk://http-peer/items/{id}"
LLM_REPLY_PREFIX = "sampled:"
REQUEST_STATE = "round-1"
ASK_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
LOGS: list[tuple[types.LoggingLevel, str]] = [("debug", "starting"), ("info", "working")]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOLS = [
    types.Tool(
        name="echo",
        description="Echo text back",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
    ),
    types.Tool(
        name="ask",
        description="Ask the client's LLM and its user",
        input_schema=_object({"prompt": {"type": "string"}}, ["prompt"]),
    ),
    types.Tool(
        name="progress",
        description="Report progress in steps",
        input_schema=_object({"steps": {"type": "integer"}}, []),
    ),
    types.Tool(name="log", description="Send log messages", input_schema=_object({}, [])),
    types.Tool(
        name="whoami", description="The request's protocol version", input_schema=_object({}, [])
    ),
]


def _text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def _modern(ctx: Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _sampling_params(prompt: str) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=[
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        ],
        max_tokens=16,
        system_prompt="Answer briefly.",
    )


def _report(era: str, sampled: Any, elicited: Any) -> types.CallToolResult:
    """Both answers as JSON text, whatever model class the SDK parsed them into."""
    llm = types.CreateMessageResult.model_validate(
        sampled.model_dump(by_alias=True, exclude_none=True)
    )
    form = types.ElicitResult.model_validate(elicited.model_dump(by_alias=True, exclude_none=True))
    said = llm.content.text if isinstance(llm.content, types.TextContent) else repr(llm.content)
    return _text(
        json.dumps(
            {
                "era": era,
                "model": llm.model,
                "said": said,
                "action": form.action,
                "content": form.content,
            },
            sort_keys=True,
        )
    )


async def _ask(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    prompt = str((params.arguments or {})["prompt"])
    if not _modern(ctx):
        sampled = await ctx.session.create_message(
            _sampling_params(prompt).messages,
            max_tokens=16,
            system_prompt="Answer briefly.",
            related_request_id=ctx.request_id,
        )
        elicited = await ctx.session.elicit_form(
            f"Who asks {prompt!r}?", ASK_SCHEMA, related_request_id=ctx.request_id
        )
        return _report("legacy", sampled, elicited)
    responses = params.input_responses or {}
    if params.request_state != REQUEST_STATE or not {"llm", "form"} <= set(responses):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"bad retry: state={params.request_state!r} keys={sorted(responses)}",
        )
    return _report("modern", responses["llm"], responses["form"])


async def list_tools(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: Ctx, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    args = params.arguments or {}
    if params.name == "echo":
        return _text(str(args["text"]))
    if params.name == "ask":
        if _modern(ctx) and params.request_state is None:
            prompt = str(args["prompt"])
            return types.InputRequiredResult(
                input_requests={
                    "llm": types.CreateMessageRequest(params=_sampling_params(prompt)),
                    "form": types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=f"Who asks {prompt!r}?", requested_schema=ASK_SCHEMA
                        )
                    ),
                },
                request_state=REQUEST_STATE,
            )
        return await _ask(ctx, params)
    if params.name == "progress":
        steps = int(args.get("steps", 3))
        for step in range(1, steps + 1):
            await ctx.session.report_progress(step, steps, f"step {step}/{steps}")
        return _text(f"done after {steps} steps")
    if params.name == "log":
        for level, message in LOGS:
            await ctx.session.send_log_message(
                level, message, logger="sdk-http-peer", related_request_id=ctx.request_id
            )
        return _text("logged")
    if params.name == "whoami":
        return _text(ctx.protocol_version)
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")


async def list_resources(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[types.Resource(uri=README_URI, name="readme", mime_type="text/plain")]
    )


async def list_resource_templates(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(uri_template=TEMPLATE, name="item", mime_type="application/json")
        ]
    )


async def read_resource(
    ctx: Ctx, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == README_URI:
        contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text=README_TEXT)
    elif uri.startswith("sdk://http-peer/items/"):
        item = uri.rsplit("/", 1)[1]
        contents = types.TextResourceContents(
            uri=uri, mime_type="application/json", text=json.dumps({"id": item})
        )
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")
    return types.ReadResourceResult(contents=[contents])


async def list_prompts(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name="greet",
                description="Greet someone",
                arguments=[types.PromptArgument(name="who", required=True)],
            )
        ]
    )


async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    if params.name != "greet":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    who = (params.arguments or {}).get("who", "nobody")
    return types.GetPromptResult(
        description="A greeting",
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(type="text", text=f"Hello, {who}!")
            )
        ],
    )


async def set_logging_level(ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


server = Server(
    "sdk-http-peer",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_resource_templates,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_set_logging_level=set_logging_level,
)


def sse_app() -> Any:
    """The same server over the SDK's HTTP+SSE transport: GET ``/sse``, POST ``/messages/``."""
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as streams:
            await server.run(streams[0], streams[1], server.create_initialization_options())
        return Response()

    routes = [
        Route("/sse", endpoint=handle_sse, methods=["GET"]),
        Mount("/messages/", app=sse.handle_post_message),
    ]
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python tests/peers/sdk_http_server.py")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--transport", choices=["streamable-http", "sse"], default="streamable-http"
    )
    args = parser.parse_args(argv)
    if args.transport == "sse":
        app = sse_app()
    else:
        app = server.streamable_http_app(stateless_http=False, json_response=False)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
