"""What a client learned of a server's era is kept per server, bounded and with an
expiry, in memory or in a file that survives the process: a 2026-07-28 server whose
``server/discover`` is fresh and public is not asked again, a server that then refuses
the kept version is asked again, and a file that is garbage is replaced, never trusted."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime.client import FileEras, MemoryEras
from mcpgen.runtime.client.eras import Known

from support.scripted_server import VERSION, discovered, result, scripted

pytestmark = pytest.mark.anyio
TIMEOUT = 20.0
SERVER = "http://127.0.0.1:1/mcp"


def legacy(until: float | None = None) -> Known:
    return Known(era="legacy", version="2025-11-25", until=until or time.time() + 60)


def test_memory_eras_keep_the_most_recent_servers_until_they_expire() -> None:
    eras = MemoryEras(limit=3, max_age=60)
    for n in range(5):
        eras.remember(f"http://host-{n}/mcp", legacy())
    assert len(eras) == 3 and eras.get("http://host-1/mcp") is None
    eras.remember("http://host-2/mcp", legacy())  # connected again: the most recent
    eras.remember("http://host-5/mcp", legacy())
    assert eras.get("http://host-3/mcp") is None and eras.get("http://host-2/mcp") is not None
    eras.remember("http://old/mcp", legacy(until=time.time() - 1))
    assert eras.get("http://old/mcp") is None
    eras.forget("http://host-2/mcp")
    assert eras.get("http://host-2/mcp") is None
    with pytest.raises(ValueError):
        MemoryEras(limit=0)


def test_file_eras_outlive_the_process_and_stay_bounded(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "eras.json"
    first = FileEras(path, limit=2)
    for n in range(3):
        first.remember(f"http://host-{n}/mcp", legacy())
    again = FileEras(path, limit=2)  # as the next run of a command-line tool sees it
    assert again.get("http://host-0/mcp") is None
    known = again.get("http://host-2/mcp")
    assert known is not None and known.era == "legacy"
    again.forget("http://host-2/mcp")
    assert FileEras(path).get("http://host-2/mcp") is None


@pytest.mark.parametrize(
    "content", [b"\xff\xfe garbage", b"[1, 2]", b'{"x": {"era": 3}}', b"{" * 5000]
)
def test_a_file_that_holds_no_eras_is_read_as_empty_and_replaced(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "eras.json"
    path.write_bytes(content)
    eras = FileEras(path)
    assert eras.get(SERVER) is None
    assert "holds no eras" in caplog.text
    eras.remember(SERVER, legacy())
    assert FileEras(path).get(SERVER) is not None


def test_a_file_that_cannot_be_written_is_said_and_nothing_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    eras = FileEras(blocker / "eras.json")
    eras.remember(SERVER, legacy())
    assert eras.get(SERVER) is None and "cannot keep the eras" in caplog.text


def public_discovery(ttl_ms: int) -> Any:
    return discovered(
        {"tools": {}}, ttlMs=ttl_ms, cacheScope="public"
    )  # the keys given replace the defaults


async def test_a_fresh_public_discovery_is_not_asked_for_again() -> None:
    eras = MemoryEras()
    tools = {"tools/list": lambda r: [result(r, {"tools": [], "ttlMs": 0})]}

    async def run() -> None:
        script = {"server/discover": public_discovery(60_000), **tools}
        async with scripted(script, mode="auto", server_key=SERVER, eras=eras) as server:
            assert server.asked("server/discover") == 1
        known = eras.get(SERVER)
        assert known is not None and known.discovered is not None
        async with scripted(script, mode="auto", server_key=SERVER, eras=eras) as server:
            assert server.session.era == "modern" and server.session.protocol_version == VERSION
            assert server.asked("server/discover") == 0
            await server.session.request("tools/list")
        async with scripted(
            {"server/discover": public_discovery(0), **tools},
            mode="auto",
            server_key="http://other/mcp",
            eras=eras,
        ) as server:
            pass
        kept = eras.get("http://other/mcp")
        assert kept is not None and kept.era == "modern" and kept.discovered is None

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_server_that_refuses_the_kept_version_is_asked_again() -> None:
    eras = MemoryEras()
    refused = {"done": False}

    def tools(request: dict[str, Any]) -> list[dict[str, Any]]:
        if not refused["done"]:
            refused["done"] = True
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": [VERSION], "requested": VERSION},
            }
            return [{"jsonrpc": "2.0", "id": request["id"], "error": error}]
        return [result(request, {"tools": [], "ttlMs": 0})]

    async def run() -> None:
        script = {"server/discover": public_discovery(60_000), "tools/list": tools}
        async with scripted(script, mode="auto", server_key=SERVER, eras=eras):
            pass
        async with scripted(script, mode="auto", server_key=SERVER, eras=eras) as server:
            assert server.asked("server/discover") == 0
            listed = await server.session.request("tools/list")
            assert listed.tools == []
            assert server.asked("server/discover") == 1 and server.asked("tools/list") == 2

    await asyncio.wait_for(run(), TIMEOUT)
