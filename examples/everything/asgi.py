"""The everything server as an ASGI app, for any ASGI server and for several workers:

    MCPGEN_STATE_KEY=$(python -c 'import secrets; print(secrets.token_hex(32))') \\
        uvicorn examples.everything.asgi:app --workers 2 --host 127.0.0.1 --port 3001

Modern (2026-07-28) requests are stateless and any worker can answer them; multi-round
requests stay valid across workers because they share the ``requestState`` key. Legacy
sessions live in the worker that created them (see docs/http.md), unless
``MCPGEN_STORE=redis://...`` shares them through Redis with the rest: then any worker
serves any request of a session, tasks are followed through any worker, and a change
announced in one reaches the clients every worker holds (``MCPGEN_TASK_STORE`` still
chooses the tasks' store alone).
"""

from __future__ import annotations

from mcpgen.runtime import McpHttpApp
from mcpgen.runtime.cluster import Shared

from .__main__ import build_server

shared = Shared.from_environment()
app = McpHttpApp(build_server(), shared_sessions=shared.sessions() if shared is not None else None)
