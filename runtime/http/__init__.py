"""Streamable HTTP, server side, as a plain ASGI application (``endpoint.McpHttpApp``):
the legacy sessions' POST/GET/DELETE and resumption (``legacy``, ``session_table``,
``streams``), the stateless 2026-07-28 lane (``stateless``), how answers are written
(``answers``, ``asgi``), the checks in front of dispatch (``hosts``, ``post_headers``,
``tool_params``), and running it under uvicorn with guarded connections (``serve``,
``protocols``, ``guard``; ``mcpgen[http]``). ``auth`` is the OAuth 2.1 resource server.
``bounded`` reads an untrusted HTTP answer within bounds, for both sides.

May import: ``core``, ``aio``, ``tasks``, ``server``; what the endpoint serves is any
``served.HttpServed``.
"""
