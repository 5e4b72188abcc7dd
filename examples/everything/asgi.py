"""The everything server as an ASGI app, for any ASGI server and for several workers:

    MCPGEN_STATE_KEY=$(python -c 'import secrets; print(secrets.token_hex(32))') \\
        uvicorn examples.everything.asgi:app --workers 2 --host 127.0.0.1 --port 3001

Modern (2026-07-28) requests are stateless and any worker can answer them; multi-round
requests stay valid across workers because they share the ``requestState`` key. Legacy
sessions live in the worker that created them (see docs/http.md). ``MCPGEN_STORE=redis://...``
shares the rest through Redis: tasks are followed through any worker, and a change
announced in one reaches the clients every worker holds (``MCPGEN_TASK_STORE`` still
chooses the tasks' store alone).
"""

from __future__ import annotations

from mcpgen.runtime import McpHttpApp

from .__main__ import build_server

app = McpHttpApp(build_server())
