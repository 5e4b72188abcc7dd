"""mcpgen's echo server over Streamable HTTP: generated 2026-07-28 stubs served by
``mcpgen.runtime.Server.http_app()`` under uvicorn.

``python -I bench/servers/http_ours.py --port PORT [--loop L] [--http H]`` serves
``http://127.0.0.1:PORT/mcp`` (one worker, log level warning, no access log) until SIGTERM
or SIGINT. Stateless 2026-07-28 requests are answered by the shared stateless connection; a
legacy client gets a session after ``initialize`` (the runtime's default versions accept
both eras).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import INVALID_PARAMS, McpError, Server

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as python -I: no script dir
from uvicorn_cli import options as cli_options  # noqa: E402
from uvicorn_cli import serve  # noqa: E402


class Echo(s.ServerHandlers):
    async def list_tools(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListToolsResult:
        schema = t.convert(
            {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            t.ToolInputSchema,
        )
        return t.ListToolsResult(
            tools=[t.Tool(name="echo", description="Echo text", input_schema=schema)]
        )

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        if params.name != "echo":
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = params.arguments if isinstance(params.arguments, dict) else {}
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])


def build() -> Server:
    return Server(Echo(), name="mcpgen-echo", version="1.0.0")


def options(argv: list[str] | None = None) -> argparse.Namespace:
    return cli_options("mcpgen's echo server over Streamable HTTP", argv)


if __name__ == "__main__":
    serve(build().http_app(), options())
