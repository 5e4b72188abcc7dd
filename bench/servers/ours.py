"""mcpgen's echo server: generated 2025-11-25 stubs served by ``mcpgen.runtime.Server``.

``python -I bench/servers/ours.py [--versions V[,V...]]``; by default the server accepts
every generated dated version (the runtime's default), ``--versions`` narrows that.
"""

from __future__ import annotations

import sys

from mcpgen.generated.v2025_11_25 import server as s
from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.runtime import INVALID_PARAMS, McpError, Server


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

    async def call_tool(self, params: t.CallToolRequestParams, ctx: s.Context) -> t.CallToolResult:
        if params.name != "echo":
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = params.arguments if isinstance(params.arguments, dict) else {}
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])


def build(argv: list[str]) -> Server:
    versions = argv[argv.index("--versions") + 1].split(",") if "--versions" in argv else None
    return Server(Echo(), name="mcpgen-echo", version="1.0.0", versions=versions)


if __name__ == "__main__":
    build(sys.argv[1:]).run_stdio()
