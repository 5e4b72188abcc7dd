"""Benchmarks of mcpgen against its peers, side by side in one run: see docs/performance.md."""

from __future__ import annotations

BENCHMARKS: dict[str, str] = {
    "import_time": "import cost of a generated types module vs the SDK's mcp_types / mcp.types",
    "generate_time": "generating all versions: mcpgen vs datamodel-codegen's CLI",
    "dcg_baseline": "upstream examples decoded / round-tripped: datamodel-codegen's msgspec output vs mcpgen",
    "stdio_calls": "tools/call round trips, cold start and idle RSS over stdio: mcpgen vs the SDK vs a bare loop",
    "socket_calls": "tools/call round trips and server CPU per call over stdio, Streamable HTTP, HTTP+SSE and WebSocket in one run: mcpgen vs the SDK",
    "http_calls": "tools/call req/s and latency over Streamable HTTP (uvicorn, wrk): mcpgen vs the SDK vs bare ASGI",
    "scaffold": "mcpgen new + fresh venv + pip install + first tool call from the SDK client",
    "app_instructions": "instructions and simulated cache misses per HTTP tools/call of each ASGI app in process (cachegrind)",
    "reshape": "server CPU per tools/call of a 2026-07-28 App answered to a 2024-11-05 peer vs a 2026-07-28 one, and reshape() alone",
    "auth_cost": "what OAuth costs an HTTP tools/call: unprotected vs a cached token vs a new JWT each request (in process; cachegrind)",
    "proxy_calls": "what a gateway costs per tools/call (server CPU, HTTP, both eras): direct vs mcpgen proxy vs FastMCP's proxy, each in front of one stdio server",
    "shared_calls": "what sharing legacy sessions through Redis costs a tools/call over HTTP: one process alone vs sessions kept in Redis (server and Redis CPU per call)",
    "tasks_load": "1,000 tasks at once in both eras: none lost, memory before / at peak / after their TTL",
    "fuzz": "mutated valid traffic over stdio, HTTP, WebSocket and HTTP+SSE: crashes, hangs, 5xx, non-JSON-RPC answers, missing answers, wrong codes (20,000 cases per transport)",
}
"""Benchmark name (a module of this package with ``main(argv) -> dict``) → what it measures."""
