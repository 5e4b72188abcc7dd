"""Tasks: a request run in the background, its outcome kept in a store. The engine
(``engine``, ``owner``), the store protocol with an in-memory store (``store``) and the
Redis store shared by processes (``redis_store``, ``redis_scripts``, ``redis_errors``,
``outage``; ``mcpgen[redis]``, imported only by who uses it), the wire forms of each era
(``legacy``, ``legacy_wire`` for 2025-11-25; ``extension`` for the 2026-07-28
``io.modelcontextprotocol/tasks`` extension), and the client as receiver of
task-augmented requests (``receiver``).

May import: ``core``, ``aio``.
"""
