"""The stdio servers ``bench.stdio_calls`` drives: one ``echo`` tool each, the same work.

Each module is a standalone script (run as ``python -I bench/servers/NAME.py``): it imports
nothing from ``bench``, so the child pays only for what a real server of its kind loads.

* ``ours`` — ``mcpgen.runtime.Server`` serving handlers written against the generated
  2025-11-25 stubs (the client asks for 2025-11-25, so no version re-shaping happens);
* ``sdk`` — the official MCP Python SDK's low-level ``Server`` over ``stdio_server()``;
* ``bare`` — asyncio pipes + msgspec and a pre-shaped result: the ceiling for a Python
  server on this machine.
"""
