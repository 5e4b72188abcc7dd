"""Our client's tasks on the wire, against a raw JSON-RPC server over in-memory transports.

The receiver role of 2025-11-25: a client made with ``tasks=Tasks()`` declares
``capabilities.tasks`` for the requests its handlers answer, runs a task-augmented
``elicitation/create`` or ``sampling/createMessage`` as a task (``CreateTaskResult`` at
once) and serves the server's ``tasks/get``, ``tasks/list``, ``tasks/result`` and
``tasks/cancel``; every answer is checked against the official 2025-11-25 schema.

Bad input: a server answering garbage task forms (2025-11-25 and 2026-07-28) gets a
clear error raised to the caller, and the client's next request works."""

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import client as client25
from mcpgen.generated.v2026_07_28 import client as client26
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime import McpError
from mcpgen.runtime.aio.memory import memory_pair
from mcpgen.runtime.tasks.engine import Tasks

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import RawPeer, ask, legacy_client, request, run  # noqa: E402
from support.wire_oracle import Schema  # noqa: E402

SCHEMA = Schema("2025-11-25", ROOT / "schema" / "2025-11-25" / "schema.json")
RELATED = "io.modelcontextprotocol/related-task"
TASKS = "io.modelcontextprotocol/tasks"
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
NOW = "2026-01-01T00:00:00Z"


def valid(definition: str, instance: Any) -> Any:
    problem = SCHEMA.error_of(definition, instance)
    assert problem is None, problem
    return instance


class Handlers(client25.ClientHandlers):
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.cancelled = 0

    async def elicit(self, params: Any, ctx: Any) -> Any:
        await self.release.wait()
        return client25.t.ElicitResult(action="accept", content={"name": "Ada"})

    async def create_message(self, params: Any, ctx: Any) -> Any:
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


#: What the raw server offers: tools, and tools called as tasks.
OFFERED = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}


def test_the_client_runs_a_servers_task_augmented_requests_as_tasks() -> None:
    async def scenario() -> None:
        handlers = Handlers()
        session = ClientSession(client25.BINDING, handlers, tasks=Tasks())
        async with legacy_client(session, OFFERED) as (peer, declared):
            assert declared["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}},
            }
            valid("ClientCapabilities", declared)
            elicit = {"message": "Name?", "requestedSchema": FORM, "task": {"ttl": 60_000}}
            created = valid(
                "CreateTaskResult", (await ask(peer, 1, "elicitation/create", elicit))["result"]
            )
            task_id = created["task"]["taskId"]
            assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60_000
            got = valid(
                "GetTaskResult", (await ask(peer, 2, "tasks/get", {"taskId": task_id}))["result"]
            )
            assert got["status"] == "working"
            await peer.send(request(3, "tasks/result", {"taskId": task_id}))
            assert [m for m in await peer.quiet(0.05) if m.get("id") == 3] == []  # blocks
            handlers.release.set()
            payload = (await peer.answer_to(3))["result"]
            assert valid("ElicitResult", payload)["content"] == {"name": "Ada"}
            assert payload["_meta"][RELATED] == {"taskId": task_id}
            statuses = [m for m in peer.backlog if m.get("method") == "notifications/tasks/status"]
            assert statuses and statuses[-1]["params"]["status"] == "completed"
            for note in statuses:
                valid("TaskStatusNotification", note)

            sample = {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
                "task": {},
            }
            sampled = valid(
                "CreateTaskResult", (await ask(peer, 4, "sampling/createMessage", sample))["result"]
            )
            sample_id = sampled["task"]["taskId"]
            listed = valid("ListTasksResult", (await ask(peer, 5, "tasks/list", {}))["result"])
            assert [t["taskId"] for t in listed["tasks"]] == [task_id, sample_id]
            cancelled = valid(
                "CancelTaskResult",
                (await ask(peer, 6, "tasks/cancel", {"taskId": sample_id}))["result"],
            )
            assert cancelled["status"] == "cancelled"
            await asyncio.sleep(0.01)
            assert handlers.cancelled == 1
            again = await ask(peer, 7, "tasks/cancel", {"taskId": sample_id})
            assert valid("JSONRPCErrorResponse", again)["error"]["code"] == -32602
            unknown = await ask(peer, 8, "tasks/get", {"taskId": "nope"})
            assert unknown["error"]["code"] == -32602
            # without params.task, the same request is answered as ever
            plain = {"message": "Again?", "requestedSchema": FORM}
            answer = valid(
                "ElicitResult", (await ask(peer, 9, "elicitation/create", plain))["result"]
            )
            assert answer["action"] == "accept" and "_meta" not in answer

    run(scenario())


def test_a_client_without_tasks_answers_augmented_requests_as_ever_and_serves_no_tasks() -> None:
    async def scenario() -> None:
        handlers = Handlers()
        handlers.release.set()
        session = ClientSession(client25.BINDING, handlers)
        async with legacy_client(session, OFFERED) as (peer, declared):
            assert "tasks" not in declared
            elicit = {"message": "Name?", "requestedSchema": FORM, "task": {}}
            answer = (await ask(peer, 1, "elicitation/create", elicit))["result"]
            assert valid("ElicitResult", answer)["action"] == "accept"
            refused = await ask(peer, 2, "tasks/get", {"taskId": "x"})
            assert refused["error"]["code"] == -32601

    run(scenario())


def legacy_task(**changes: Any) -> dict[str, Any]:
    task = {"taskId": "t1", "status": "working", "createdAt": NOW, "lastUpdatedAt": NOW}
    return {**task, "ttl": None, "pollInterval": 10, **changes}


#: What a hostile 2025-11-25 server answers, in order, and what the client then raises.
LEGACY_GARBAGE: list[tuple[str, list[Any], str]] = [
    ("a task with no id", [{"task": {"status": "working"}}], "Invalid result of tools/call"),
    ("a task that is no object", [{"task": "t1"}], "Invalid result of tools/call"),
    (
        "an unknown status",
        [{"task": legacy_task()}, legacy_task(status="exploded")],
        "Invalid result of tasks/get",
    ),
    ("no ttl key", [{"task": legacy_task()}, {"taskId": "t1"}], "Invalid result of tasks/get"),
    (
        "a payload that is no result",
        [{"task": legacy_task()}, legacy_task(status="completed"), {"content": "nope"}],
        "Invalid result of tools/call",
    ),
]


@pytest.mark.parametrize("case", LEGACY_GARBAGE, ids=[c[0] for c in LEGACY_GARBAGE])
def test_garbage_legacy_task_forms_raise_a_clear_error_and_the_client_goes_on(
    case: tuple[str, list[Any], str],
) -> None:
    _, answers, expected = case

    async def serve(peer: RawPeer) -> None:
        for answer in answers:
            message = await peer.read()
            await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})

    async def scenario() -> None:
        # The wire is scripted: no tools/list to learn the tools' output schemas.
        session = ClientSession(client25.BINDING, output_validation="off")
        async with legacy_client(session, OFFERED) as (peer, _):
            serving = asyncio.ensure_future(serve(peer))

            async def follow() -> Any:
                handle = await session.call_tool_as_task("tool")
                return await handle.result(max_wait=2)

            with pytest.raises(McpError) as raised:
                await follow()
            assert raised.value.code == -32603 and expected in raised.value.message
            await serving
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "ok"}))
            message = await peer.read()
            assert "task" not in message["params"]  # an ordinary call
            fine = {"content": [{"type": "text", "text": "fine"}]}
            await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": fine})
            assert (await calling).content[0].text == "fine"

    run(scenario())


CREATED = {"resultType": "task", **legacy_task(), "ttlMs": None}
DONE = {"resultType": "complete", **legacy_task(status="completed"), "ttlMs": None}
MODERN_GARBAGE: list[tuple[str, list[Any], str]] = [
    ("a task with no id", [{"resultType": "task", "status": "working"}], "Invalid result"),
    (
        "failed with no outcome",
        [CREATED, {**DONE, "status": "failed"}],
        "failed with no result nor",
    ),
    (
        "failed with a garbage error",
        [CREATED, {**DONE, "status": "failed", "error": {"message": 5}}],
        "failed with no valid error",
    ),
    ("completed with no result", [CREATED, DONE], "completed with no result"),
    ("a status no era has", [CREATED, {**DONE, "status": "exploded"}], "unknown status"),
    ("no ttlMs key", [CREATED, {"resultType": "complete", "taskId": "t1"}], "Invalid result"),
]


@pytest.mark.parametrize("case", MODERN_GARBAGE, ids=[c[0] for c in MODERN_GARBAGE])
def test_garbage_modern_task_forms_raise_a_clear_error_and_the_client_goes_on(
    case: tuple[str, list[Any], str],
) -> None:
    _, answers, expected = case

    async def scenario() -> None:
        client_end, server_end = memory_pair()
        peer = RawPeer(server_end)
        # The wire is scripted: no tools/list to learn the tools' output schemas.
        session = ClientSession(client26.BINDING, output_validation="off")
        connecting = asyncio.ensure_future(session.connect(client_end, mode="modern"))
        discover = await peer.read()
        found = {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
        }
        await peer.send({"jsonrpc": "2.0", "id": discover["id"], "result": found})
        await connecting
        asked: list[Any] = []

        async def serve() -> None:
            for answer in answers:
                message = await peer.read()
                asked.append(message)
                await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})

        serving = asyncio.ensure_future(serve())
        with pytest.raises(McpError) as raised:
            await (await session.call_tool_as_task("tool")).result(max_wait=2)
        assert raised.value.code == -32603 and expected in raised.value.message, raised.value
        await serving
        declared = asked[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert TASKS in declared["extensions"]  # opted in for that request alone
        calling = asyncio.ensure_future(session.request("tools/call", {"name": "ok"}))
        message = await peer.read()
        caps = message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert TASKS not in caps.get("extensions", {})
        fine = {"resultType": "complete", "content": [{"type": "text", "text": "fine"}]}
        await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": fine})
        assert (await calling).content[0].text == "fine"
        await session.close()
        await client_end.close()

    run(scenario())


class Handlers26(client26.ClientHandlers):
    async def elicit(self, params: Any, ctx: Any) -> Any:
        return client26.t.ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize("typed", ["2025-11-25", "2026-07-28"])
def test_answers_to_a_tasks_requests_are_tied_to_it_whatever_the_clients_types(
    typed: str,
) -> None:
    async def scenario() -> None:
        handlers: Any = Handlers() if typed == "2025-11-25" else Handlers26()
        if typed == "2025-11-25":
            handlers.release.set()
        binding = client25.BINDING if typed == "2025-11-25" else client26.BINDING
        async with legacy_client(ClientSession(binding, handlers), OFFERED) as (peer, _):
            meta = {RELATED: {"taskId": "server-task-1"}}
            elicit = {"message": "Name?", "requestedSchema": FORM, "_meta": meta}
            answer = valid(
                "ElicitResult", (await ask(peer, 1, "elicitation/create", elicit))["result"]
            )
            assert answer["_meta"] == meta and answer["content"] == {"name": "Ada"}

    run(scenario())
