"""An App's description, icons and website in ``serverInfo``: sent to the versions whose
``Implementation`` has them (2025-11-25 on, ``initialize`` and 2026-07-28's
``server/discover``), left out for older ones, every answer valid at the client's version;
an invalid icon is refused when the server is made."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.aio.memory import memory_pair
from support.checkout import ROOT
from support.sansio import SERVER_INFO_KEY, RawPeer, initialize, modern, run
from support.wire_oracle import Schema

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}
DESCRIBED = {
    "name": "described",
    "version": "1.2.0",
    "title": "Described",
    "description": "Answers questions about the weather",
    "icons": [ICON],
    "websiteUrl": "https://example.com",
}


def described() -> App:
    app = App(
        "described",
        "1.2.0",
        binding=stubs,
        title="Described",
        description="Answers questions about the weather",
        icons=[ICON],
        website_url="https://example.com",
    )

    @app.tool
    def ping() -> str:
        return "pong"

    return app


async def first_answer(app: App, message: dict[str, Any]) -> dict[str, Any]:
    client_end, server_end = memory_pair()
    serving = asyncio.create_task(app.server.serve(server_end))
    peer = RawPeer(client_end)
    await peer.send(message)
    reply = await peer.answer_to(message["id"])
    await client_end.close()
    await asyncio.wait_for(serving, 5.0)
    return reply


def schema(version: str) -> Schema:
    return Schema(version, ROOT / "schema" / version / "schema.json")


@pytest.mark.parametrize(
    "version,expected",
    [
        ("2025-11-25", DESCRIBED),
        ("2025-06-18", {"name": "described", "version": "1.2.0", "title": "Described"}),
        ("2024-11-05", {"name": "described", "version": "1.2.0"}),
    ],
)
def test_initialize_sends_the_fields_the_client_version_has(
    version: str, expected: dict[str, Any]
) -> None:
    reply = run(first_answer(described(), initialize(0, version)))
    assert reply["result"]["serverInfo"] == expected
    problem = schema(version).error_of("InitializeResult", reply["result"])
    assert problem is None, problem


def test_server_discover_sends_them_in_its_server_info() -> None:
    reply = run(first_answer(described(), modern(0, "server/discover")))
    assert reply["result"]["_meta"][SERVER_INFO_KEY] == DESCRIBED
    problem = schema("2026-07-28").error_of("DiscoverResultResponse", reply)
    assert problem is None, problem


def test_an_invalid_icon_is_refused_when_the_server_is_made() -> None:
    app = App("bad", binding=stubs, icons=[{"mimeType": "image/png"}])  # no src
    with pytest.raises(ValueError, match="invalid server info"):
        app.server
