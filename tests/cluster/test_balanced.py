"""Four uvicorn worker processes of ``examples/everything/asgi.py`` sharing one real
redis-server (``MCPGEN_STORE``), behind haproxy from Debian's packages running the
configuration of docs/deployment.md: round robin, a new backend connection per request,
no stickiness.

Eight clients at once, 200 calls each: ours in 2025-11-25 sessions and in ``auto`` mode
(2026-07-28), the official Python SDK's in its legacy and ``auto`` modes. A third of the
calls ask the calling client's model and a third its user, whose answers name the client
that gave them: every call is answered, none fails, and no answer comes from another
client's session. Meanwhile listeners of both eras and both clients (a session's GET
stream after ``resources/subscribe``, a ``subscriptions/listen`` stream), each held by
some worker, hear every tool list change and every update of the resource they watch,
made through the balancer on any worker, exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import msgspec
import pytest
from mcp import Client as SdkClient
from mcp import types as sdk

from mcpgen.runtime.client import ClientSession, http_client
from support.workers import workers
from support.wire_clients import our_client, plain

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
WORKERS = 4
CALLS = 200  # per client: a third ask the client's model, a third its user
CHANGES = 10  # tool list changes, and as many updates of the watched resource
WATCHED = "test://watched-resource"


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with workers("examples.everything.asgi:app", WORKERS, tmp_path_factory.mktemp("logs")) as up:
        yield up.url


def call_of(me: str, i: int) -> tuple[str, dict[str, Any], str]:
    """Call ``i`` of client ``me``: the tool, its arguments, what its answer must hold."""
    if i % 3 == 1:
        return "test_sampling", {"prompt": f"{me}-{i}"}, f"{me} heard {me}-{i}"
    if i % 3 == 2:
        return "test_elicitation", {"message": f"{me}-{i}"}, f'"username": "{me}"'
    return "test_simple_text", {}, "simple text response"


def judged(me: str, i: int, got: dict[str, Any], expected: str) -> list[str]:
    text = str(got.get("content"))
    if expected in text and not got.get("isError"):
        return []
    return [f"{me}, call {i}: expected {expected!r}, got {text[:200]}"]


def identified_handlers(version: str, me: str) -> tuple[Any, Any]:
    """Our client's handlers, answering as ``me``: the model repeats the prompt it heard,
    the user gives ``me`` as the username."""
    client_class, base = our_client(version)
    types = base.types

    async def create_message(self: Any, params: Any, ctx: Any) -> Any:
        asked = msgspec.to_builtins(params)["messages"][0]["content"]["text"]
        answer = {"role": "assistant", "content": {"type": "text", "text": f"{me} heard {asked}"}}
        return types.convert({**answer, "model": "fake-llm"}, types.CreateMessageResult)

    async def elicit(self: Any, params: Any, ctx: Any) -> Any:
        answer = {"action": "accept", "content": {"username": me, "email": f"{me}@example.com"}}
        return types.convert(answer, types.ElicitResult)

    methods = {"create_message": create_message, "elicit": elicit}
    handlers = type("Identified", (type(base),), methods)()
    handlers.types = types
    return client_class, handlers


async def ours(url: str, mode: str, me: str) -> list[str]:
    """One of our clients' calls; what went wrong, if anything."""
    version = "2025-11-25" if mode == "legacy" else "2026-07-28"
    client_class, handlers = identified_handlers(version, me)
    wrong: list[str] = []
    async with http_client(client_class, url, handlers=handlers, mode=mode) as client:  # type: ignore[arg-type]
        for i in range(CALLS):
            name, arguments, expected = call_of(me, i)
            got = plain(await client.call_tool(name=name, arguments=arguments))
            wrong += judged(me, i, got, expected)
    return wrong


async def sdk_client(url: str, mode: str, me: str) -> list[str]:
    """The official SDK client's calls in ``mode``, answering as ``me``."""

    async def sampling(context: Any, params: sdk.CreateMessageRequestParams) -> Any:
        content = params.messages[0].content
        asked = content.text if isinstance(content, sdk.TextContent) else ""
        return sdk.CreateMessageResult(
            role="assistant",
            content=sdk.TextContent(type="text", text=f"{me} heard {asked}"),
            model="fake-llm",
        )

    async def elicitation(context: Any, params: Any) -> sdk.ElicitResult:
        return sdk.ElicitResult(
            action="accept", content={"username": me, "email": f"{me}@example.com"}
        )

    wrong: list[str] = []
    async with SdkClient(
        url, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation
    ) as client:
        for i in range(CALLS):
            name, arguments, expected = call_of(me, i)
            got = plain(await client.call_tool(name, arguments))
            wrong += judged(me, i, got, expected)
    return wrong


class Heard:
    """What one listener heard: tool list changes and updates of the watched resource."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: Counter[str] = Counter()

    def done(self) -> bool:
        return self.counts["tools"] >= CHANGES and self.counts["updated"] >= CHANGES


def counting_handlers(version: str, heard: Heard) -> tuple[Any, Any]:
    client_class, base = our_client(version)

    async def on_tool_list_changed(self: Any, params: Any) -> None:
        heard.counts["tools"] += 1

    async def on_resource_updated(self: Any, params: Any) -> None:
        if msgspec.to_builtins(params).get("uri") == WATCHED:
            heard.counts["updated"] += 1

    methods = {"on_tool_list_changed": on_tool_list_changed}
    methods["on_resource_updated"] = on_resource_updated
    handlers = type("Counting", (type(base),), methods)()
    handlers.types = base.types
    return client_class, handlers


async def our_listener(url: str, mode: str, heard: Heard, ready: asyncio.Event) -> None:
    """Ours: a 2025-11-25 session's GET stream after ``resources/subscribe``, or a
    2026-07-28 ``subscriptions/listen`` stream; until cancelled."""
    version = "2025-11-25" if mode == "legacy" else "2026-07-28"
    client_class, handlers = counting_handlers(version, heard)
    async with http_client(client_class, url, handlers=handlers, mode=mode) as client:  # type: ignore[arg-type]
        if mode == "legacy":
            await client.subscribe(uri=WATCHED)
            ready.set()
            await asyncio.Event().wait()
        session = client.session
        assert isinstance(session, ClientSession) and session.session is not None
        wanted = {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]}
        listen = session.session.request(
            "subscriptions/listen", {"notifications": wanted}, timeout=600
        )
        ready.set()
        await listen


async def sdk_listener(url: str, mode: str, heard: Heard, ready: asyncio.Event) -> None:
    """The official SDK client: ``listen`` in ``auto`` mode (2026-07-28); in legacy mode
    ``subscribe_resource`` and the notifications its message handler gets (what the SDK
    has before 2026-07-28); until cancelled."""

    def count(kind: str, uri: object = WATCHED) -> None:
        if kind in ("ToolsListChanged", "ToolListChangedNotification"):
            heard.counts["tools"] += 1
        elif kind in ("ResourceUpdated", "ResourceUpdatedNotification") and uri == WATCHED:
            heard.counts["updated"] += 1

    async def on_message(message: Any) -> None:
        message = getattr(message, "root", message)
        params = getattr(message, "params", None)
        count(type(message).__name__, getattr(params, "uri", WATCHED))

    if mode == "legacy":
        async with SdkClient(url, mode=mode, message_handler=on_message) as client:
            await client.subscribe_resource(WATCHED)
            ready.set()
            await asyncio.Event().wait()
    async with SdkClient(url, mode=mode) as client:
        changes = client.listen(tools_list_changed=True, resource_subscriptions=[WATCHED])
        async with changes as stream:
            ready.set()
            async for event in stream:
                count(type(event).__name__, getattr(event, "uri", WATCHED))


async def changes(url: str) -> None:
    """The changes, each made through the balancer (so on some worker)."""
    client_class, handlers = our_client("2026-07-28")
    async with http_client(client_class, url, handlers=handlers, mode="auto") as client:  # type: ignore[arg-type]
        for _ in range(CHANGES):
            await client.call_tool(name="test_trigger_tool_change", arguments={})
            await client.call_tool(name="test_trigger_resource_update", arguments={})
            await asyncio.sleep(0.2)


def test_eight_clients_two_hundred_calls_each_and_every_listener_hears_each_change_once(
    balanced: str,
) -> None:
    async def scenario() -> tuple[list[str], list[Heard]]:
        listeners = [Heard(n) for n in ("ours-legacy", "ours-2026", "sdk-legacy", "sdk-auto")]
        readies = [asyncio.Event() for _ in listeners]
        listening = [
            asyncio.create_task(our_listener(balanced, "legacy", listeners[0], readies[0])),
            asyncio.create_task(our_listener(balanced, "auto", listeners[1], readies[1])),
            asyncio.create_task(sdk_listener(balanced, "legacy", listeners[2], readies[2])),
            asyncio.create_task(sdk_listener(balanced, "auto", listeners[3], readies[3])),
        ]
        with anyio.fail_after(300):
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)
            await asyncio.sleep(1.0)  # each listener's stream open on its worker
            jobs: list[Any] = [ours(balanced, "legacy", f"ours{n}") for n in range(3)]
            jobs += [ours(balanced, "auto", f"ours{n}") for n in range(3, 6)]
            jobs += [sdk_client(balanced, "legacy", "sdk6"), sdk_client(balanced, "auto", "sdk7")]
            jobs.append(changes(balanced))
            results = await asyncio.gather(*jobs, return_exceptions=True)
            for _ in range(100):
                if all(heard.done() for heard in listeners):
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)  # a duplicate would have come by now
        for task in listening:
            task.cancel()
        await asyncio.gather(*listening, return_exceptions=True)
        wrong: list[str] = []
        for result in results:
            if isinstance(result, BaseException):
                wrong.append(f"a client failed: {type(result).__name__}: {result}")
            elif result:
                wrong += result
        return wrong, listeners

    wrong, listeners = asyncio.run(scenario())
    assert not wrong, f"{len(wrong)} wrong:\n" + "\n".join(wrong[:20])
    heard = {h.name: dict(h.counts) for h in listeners}
    assert heard == {h.name: {"tools": CHANGES, "updated": CHANGES} for h in listeners}, heard
