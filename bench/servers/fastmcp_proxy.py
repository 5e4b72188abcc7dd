"""FastMCP's proxy of a stdio server, served on Streamable HTTP: ``fastmcp_proxy.py --port P
-- COMMAND ARGS…`` (run with the interpreter of the venv ``bench.proxy_calls`` makes for
FastMCP under ``.cache/peers``). Built as FastMCP's documentation says a proxy is:
``create_proxy`` of an ``mcpServers`` configuration, run on HTTP."""

from __future__ import annotations

import sys

from fastmcp.server import create_proxy


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    port = int(options[options.index("--port") + 1])
    config = {"mcpServers": {"echo": {"command": command[0], "args": command[1:]}}}
    proxy = create_proxy(config, name="fastmcp-proxy")
    proxy.run(
        transport="http",
        host="127.0.0.1",
        port=port,
        path="/mcp",
        log_level="warning",
        json_response=True,
        show_banner=False,
    )


if __name__ == "__main__":
    main()
