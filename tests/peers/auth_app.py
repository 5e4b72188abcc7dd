"""A protected app for the authorization tests: every request needs ``mcp:access``;
``write`` needs ``files:write`` too, the ``secret://`` template ``secrets:read``, and
listing prompts ``prompts:read``. ``whoami`` tells what a handler knows of the caller."""

from __future__ import annotations

from typing import Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.http.auth import ResourceServer, ScopePolicy, principal_of

RESOURCE = "http://127.0.0.1:3001/mcp"
ISSUER = "http://auth.test"
BASE_SCOPE = "mcp:access"


def make_app(verifier: Any, resource: str = RESOURCE, issuer: str = ISSUER, **options: Any) -> App:
    auth = ResourceServer(
        verifier,
        resource=resource,
        authorization_servers=[issuer],
        required_scopes=[BASE_SCOPE],
        policy=ScopePolicy(methods={"prompts/list": ["prompts:read"]}),
        **options,
    )
    app = App("protected", binding=stubs, auth=auth)

    @app.tool
    def echo(text: str) -> str:
        """Say it back."""
        return f"echo: {text}"

    @app.tool(scopes=["files:write"])
    def write(path: str) -> str:
        """Write a file (needs files:write)."""
        return f"wrote {path}"

    @app.tool
    def whoami(ctx: stubs.Context) -> dict[str, Any]:
        """Who the caller is, as the handler sees it."""
        principal = principal_of(ctx)
        assert principal is not None
        http = ctx.raw.event.http  # type: ignore[attr-defined]
        return {
            "subject": principal.subject,
            "scopes": sorted(principal.scopes),
            "client_id": principal.client_id,
            "authorization_header_seen": http.header("authorization"),
        }

    @app.resource("notes://public")
    def public_note() -> str:
        """A note anyone with access reads."""
        return "public note"

    @app.resource("secret://{name}", scopes=["secrets:read"])
    def secret(name: str) -> str:
        """A secret (needs secrets:read)."""
        return f"the secret {name}"

    @app.prompt
    def explain(topic: str) -> str:
        """Ask for an explanation."""
        return f"Explain {topic}."

    return app
