"""URL-mode elicitation from an mcpgen ``App``: ``python tests/peers/url_elicitation_app.py``
serves over stdio the peer of ``tests/interop/test_url_elicitation_sdk.py``.

Tools: ``connect_account`` sends the user to a URL (``ctx.elicit_url``), then tells the
client the interaction completed (``ctx.elicitation_complete``); ``needs_account`` answers
-32042 (``UrlElicitationRequired``). The server describes itself in ``serverInfo``."""

from __future__ import annotations

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.core.errors import UrlElicitationRequired

URL = "https://auth.example.com/connect"
app = App(
    "url-elicitation",
    binding=stubs,
    description="Sends users to pages the client must not see through",
    icons=[{"src": "https://example.com/icon.png", "mimeType": "image/png"}],
    website_url="https://example.com",
)


@app.tool
async def connect_account(ctx: stubs.Context) -> str:
    """Send the user to the account page, then say that it is done."""
    answer = await ctx.elicit_url("Connect your account", URL, elicitation_id="acct-1")
    told = await ctx.elicitation_complete("acct-1")
    return f"{answer.action} told={told}"


@app.tool
async def needs_account() -> str:
    """Refuse to go on until the user visited the account page."""
    raise UrlElicitationRequired(
        [{"message": "Connect your account first", "url": URL, "elicitationId": "acct-2"}]
    )


if __name__ == "__main__":
    app.run()
