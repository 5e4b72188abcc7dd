"""Four uvicorn worker processes of ``examples/everything/asgi.py`` sharing one real
redis-server (``MCPGEN_STORE``), behind haproxy from Debian's packages running the
configuration of docs/deployment.md: round robin, a new backend connection per request,
no stickiness. Concurrent clients, 2025-11-25 sessions (ours and the official Python
SDK's) and 2026-07-28 ones (ours), each call their tools many times, sampling and
elicitation round trips included: every call answered, to the client that made it; and listeners of
both eras, their streams held by some worker, hear each change made on any worker once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient

from mcpgen.runtime.client import http_client
from support.workers import workers
from support.wire_clients import our_client, plain, sdk_elicit, sdk_sampling

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
WORKERS = 4
CALLS = 24  # per client: a third of them asking the client something


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with workers("examples.everything.asgi:app", WORKERS, tmp_path_factory.mktemp("logs")) as up:
        yield up.url


async def ours(url: str, mode: str, n: int) -> list[str]:
    """One of our clients' calls; what went wrong, if anything."""
    version = "2025-11-25" if mode == "legacy" else "2026-07-28"
    client_class, handlers = our_client(version)
    wrong: list[str] = []
    async with http_client(client_class, url, handlers=handlers, mode=mode) as client:  # type: ignore[arg-type]
        for i in range(CALLS):
            if i % 3 == 1:
                got = plain(
                    await client.call_tool(name="test_sampling", arguments={"prompt": f"c{n}"})
                )
                expected = "LLM response"
            elif i % 3 == 2:
                got = plain(
                    await client.call_tool(
                        name="test_elicitation", arguments={"message": f"c{n}-{i}"}
                    )
                )
                expected = "User response"
            else:
                got = plain(await client.call_tool(name="test_simple_text", arguments={}))
                expected = "simple text response"
            text = str(got.get("content"))
            if expected not in text or got.get("isError"):
                wrong.append(f"{mode} client {n}, call {i}: {text[:200]}")
    return wrong


async def sdk(url: str, n: int) -> list[str]:
    """The official SDK client's calls in its legacy (2025-11-25 session) mode."""
    wrong: list[str] = []
    async with SdkClient(
        url, mode="legacy", sampling_callback=sdk_sampling, elicitation_callback=sdk_elicit
    ) as client:
        for i in range(CALLS):
            if i % 2:
                got = plain(await client.call_tool("test_sampling", {"prompt": f"s{n}"}))
                expected = "LLM response"
            else:
                got = plain(await client.call_tool("test_simple_text", {}))
                expected = "simple text response"
            text = str(got.get("content"))
            if expected not in text or got.get("isError"):
                wrong.append(f"sdk client {n}, call {i}: {text[:200]}")
    return wrong


def test_concurrent_clients_of_both_eras_are_served_through_a_round_robin_balancer(
    balanced: str,
) -> None:
    async def scenario() -> list[str]:
        with anyio.fail_after(240):
            jobs: list[Any] = [ours(balanced, "legacy", n) for n in range(3)]
            jobs += [ours(balanced, "auto", n) for n in range(3, 6)]
            jobs += [sdk(balanced, n) for n in range(6, 8)]
            results = await asyncio.gather(*jobs, return_exceptions=True)
        wrong: list[str] = []
        for result in results:
            if isinstance(result, BaseException):
                wrong.append(f"a client failed: {type(result).__name__}: {result}")
            else:
                wrong += result
        return wrong

    wrong = asyncio.run(scenario())
    assert not wrong, "\n".join(wrong[:20])


def test_every_listener_hears_each_change_once_whichever_worker_made_it(balanced: str) -> None:
    """A 2025-11-25 client on its session's GET stream and a 2026-07-28 client on a listen
    stream, each held by some worker; another client makes the tool list change five times
    through the balancer (each time on some worker): each listener hears five changes."""
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.generated.v2026_07_28 import types as t
    from mcpgen.runtime.client import ClientSession

    class Counting(c.ClientHandlers):
        def __init__(self) -> None:
            self.heard = 0

        async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
            self.heard += 1

    async def scenario() -> tuple[int, int]:
        legacy, modern = Counting(), Counting()
        async with http_client(c.Client, balanced, handlers=legacy, mode="legacy") as first:
            async with http_client(c.Client, balanced, handlers=modern, mode="auto") as second:
                session = second.session
                assert isinstance(session, ClientSession) and session.session is not None
                raw = session.session
                listen = asyncio.create_task(
                    raw.request(
                        "subscriptions/listen",
                        {"notifications": {"toolsListChanged": True}},
                        timeout=60,
                    )
                )
                await first.list_tools()
                await asyncio.sleep(1.0)  # both streams open
                async with http_client(c.Client, balanced, mode="auto") as other:
                    for _ in range(5):
                        await other.call_tool(name="test_trigger_tool_change", arguments={})
                        await asyncio.sleep(0.2)
                for _ in range(50):
                    if legacy.heard >= 5 and modern.heard >= 5:
                        break
                    await asyncio.sleep(0.1)
                await asyncio.sleep(0.5)  # a duplicate would have come by now
                listen.cancel()
                return legacy.heard, modern.heard

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == (5, 5)
