"""The OAuth 2.1 resource server of the HTTP endpoint (``mcpgen[auth]``): the gate each
request on a protected endpoint passes (``resource_server``: 401/400/403/503 with
``WWW-Authenticate``), who a token speaks for (``principal``), scopes per method, tool,
prompt and resource (``policy``), RFC 9728 metadata and RFC 6750 challenges
(``metadata``), the verifiers (``jwt`` with ``jwks``; ``introspection``) and their
bounded fetches (``fetch``), verified tokens cached (``cache``).

May import: ``core``, ``aio``, ``http``'s own primitives (``asgi``, ``bounded``).
"""
