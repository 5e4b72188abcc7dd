"""A low-level stdio server built on the official MCP Python SDK (``mcp`` 2.3), the peer of
``tests/interop/test_interop_sdk.py``: run as ``python tests/peers/sdk_stdio_server.py``.

Tools: ``echo`` (text back), ``sample`` (asks the client to sample an LLM), ``progress``
(reports progress), ``log`` (sends log messages); one text resource, one blob resource and a
``greet`` prompt. Unknown names fail with -32602.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning

# Logging, sampling and progress APIs (and registering a logging handler) warn; this
# module only ever runs as a script, so keep its stderr quiet.
warnings.simplefilter("ignore", MCPDeprecationWarning)

Ctx = ServerRequestContext[Any]

README_URI = "sdk://peer/readme"
README_TEXT = "Served by the official MCP Python SDK."
BLOB_URI = "sdk://peer/blob"
BLOB_BASE64 = "AAECAwQ="  # bytes 0..4
LOGS: list[tuple[types.LoggingLevel, str]] = [
    ("debug", "starting"),
    ("info", "working"),
]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOLS = [
    types.Tool(
        name="echo",
        description="Echo text back",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
    ),
    types.Tool(
        name="sample",
        description="Ask the client's LLM to answer a prompt",
        input_schema=_object({"prompt": {"type": "string"}}, ["prompt"]),
    ),
    types.Tool(
        name="progress",
        description="Report progress in steps",
        input_schema=_object({"steps": {"type": "integer"}}, []),
    ),
    types.Tool(
        name="log",
        description="Send log messages",
        input_schema=_object({}, []),
    ),
]


def _text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        return _text(str(args["text"]))
    if params.name == "sample":
        answer = await ctx.session.create_message(
            [
                types.SamplingMessage(
                    role="user",
                    content=types.TextContent(type="text", text=str(args["prompt"])),
                )
            ],
            max_tokens=32,
            system_prompt="Answer briefly.",
            related_request_id=ctx.request_id,
        )
        content = answer.content
        said = content.text if isinstance(content, types.TextContent) else repr(content)
        return _text(f"model={answer.model} role={answer.role} said={said}")
    if params.name == "progress":
        steps = int(args.get("steps", 3))
        for step in range(1, steps + 1):
            await ctx.session.report_progress(step, steps, f"step {step}/{steps}")
        return _text(f"done after {steps} steps")
    if params.name == "log":
        for level, message in LOGS:
            await ctx.session.send_log_message(
                level, message, logger="sdk-peer", related_request_id=ctx.request_id
            )
        return _text("logged")
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")


async def list_resources(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(uri=README_URI, name="readme", mime_type="text/plain"),
            types.Resource(uri=BLOB_URI, name="blob", mime_type="application/octet-stream"),
        ]
    )


async def read_resource(
    ctx: Ctx, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == README_URI:
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=README_TEXT)]
        )
    if uri == BLOB_URI:
        return types.ReadResourceResult(
            contents=[
                types.BlobResourceContents(
                    uri=uri, mime_type="application/octet-stream", blob=BLOB_BASE64
                )
            ]
        )
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")


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
                role="user",
                content=types.TextContent(type="text", text=f"Hello, {who}!"),
            )
        ],
    )


async def set_logging_level(ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


server = Server(
    "sdk-peer",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_set_logging_level=set_logging_level,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
