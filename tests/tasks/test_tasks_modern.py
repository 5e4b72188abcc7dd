"""Tasks in protocol 2026-07-28: the ``io.modelcontextprotocol/tasks`` extension, served
by an ``App`` whose tools say ``task=``, to a raw JSON-RPC peer over in-memory transports.
The server decides: a quick call is answered as it is, a long one becomes a task; a tool
that must run as one needs the client's opt-in (-32021 naming the extension otherwise).
``tasks/get`` inlines the outcome or what the task waits for, ``tasks/update`` answers
it (unknown keys ignored), ``tasks/cancel`` acknowledges. Every answer is checked
against the official 2026-07-28 schema's ``Result`` (and ``CallToolResult`` where one is
inlined); bad input gets the extension's error, then a good call works."""

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import RawPeer, modern, run, serving  # noqa: E402
from support.task_apps import OPTED, TASKS, make_app  # noqa: E402
from support.wire_oracle import Schema  # noqa: E402

SCHEMA = Schema("2026-07-28", ROOT / "schema" / "2026-07-28" / "schema.json")
ENVELOPE = {"taskId", "status", "result", "error", "inputRequests"}


def valid(definition: str, instance: Any) -> Any:
    problem = SCHEMA.error_of(definition, instance)
    assert problem is None, problem
    return instance


async def call(peer: RawPeer, rid: int, method: str, params: Any, caps: Any = OPTED) -> Any:
    await peer.send(modern(rid, method, params, capabilities=caps))
    return await peer.answer_to(rid)


async def result_of(peer: RawPeer, rid: int, method: str, params: Any, caps: Any = OPTED) -> Any:
    answer = await call(peer, rid, method, params, caps)
    assert "result" in answer, answer
    return valid("Result", answer["result"])


async def until(peer: RawPeer, rid: int, task_id: str, done: Any) -> Any:
    task: Any = None
    for attempt in range(200):
        task = await result_of(peer, rid * 1000 + attempt, "tasks/get", {"taskId": task_id})
        if done(task):
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} never got there: {task}")


def terminal(task: Any) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def test_quick_calls_are_answered_as_they_are_and_long_ones_become_tasks() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            sync = await result_of(
                peer, 1, "tools/call", {"name": "greet", "arguments": {"name": "W"}}
            )
            assert valid("CallToolResult", sync)["content"][0]["text"] == "Hello, W!"
            quick = await result_of(
                peer,
                2,
                "tools/call",
                {"name": "slow_compute", "arguments": {"seconds": 0, "label": "q"}},
            )
            assert quick["resultType"] == "complete" and "taskId" not in quick
            params = {"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "long"}}
            made = await result_of(peer, 3, "tools/call", params)
            assert made["resultType"] == "task" and "task" not in made
            assert not {"result", "error", "inputRequests", "ttl", "pollInterval"} & set(made)
            assert made["status"] == "working" and made["ttlMs"] > 0 and made["pollIntervalMs"] > 0
            polled = await result_of(peer, 4, "tasks/get", {"taskId": made["taskId"]})
            assert polled["resultType"] == "complete" and polled["taskId"] == made["taskId"]
            done = await until(peer, 5, made["taskId"], terminal)
            assert done["status"] == "completed"
            assert valid("CallToolResult", done["result"])["content"][0]["text"].startswith("long")
            assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})
            # without the opt-in, the same tool is an ordinary call
            plain = await result_of(peer, 6, "tools/call", params, caps={})
            assert plain["resultType"] == "complete" and plain["content"]

    run(scenario())


def test_tool_errors_complete_and_request_errors_fail() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            job = await result_of(peer, 1, "tools/call", {"name": "failing_job", "arguments": {}})
            done = await until(peer, 2, job["taskId"], terminal)
            assert done["status"] == "completed" and done["result"]["isError"] is True
            job = await result_of(
                peer, 3, "tools/call", {"name": "protocol_error_job", "arguments": {}}
            )
            done = await until(peer, 4, job["taskId"], terminal)
            assert done["status"] == "failed" and "result" not in done
            assert isinstance(done["error"]["code"], int) and done["error"]["message"]
            assert done["statusMessage"] == done["error"]["message"]  # says why

    run(scenario())


def test_cancel_acknowledges_stops_the_task_and_acknowledges_again() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            params = {"name": "slow_compute", "arguments": {"seconds": 60, "label": "c"}}
            job = await result_of(peer, 1, "tools/call", params)
            ack = await result_of(peer, 2, "tasks/cancel", {"taskId": job["taskId"]})
            assert ack == {"resultType": "complete"} or not ENVELOPE & set(ack)
            done = await until(peer, 3, job["taskId"], terminal)
            assert done["status"] == "cancelled"
            again = await result_of(peer, 4, "tasks/cancel", {"taskId": job["taskId"]})
            assert not ENVELOPE & set(again)

    run(scenario())


def test_input_requests_are_answered_in_parts_and_unknown_keys_ignored() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            job = await result_of(peer, 1, "tools/call", {"name": "multi_input", "arguments": {}})
            waiting = await until(
                peer, 2, job["taskId"], lambda t: len(t.get("inputRequests", {})) == 2
            )
            assert waiting["status"] == "input_required"
            first, second = list(waiting["inputRequests"])
            for request in waiting["inputRequests"].values():
                valid("ElicitRequest", {"jsonrpc": "2.0", "id": 0, **request})
            answer = {"action": "accept", "content": {"name": "one"}}
            ack = await result_of(
                peer,
                3,
                "tasks/update",
                {"taskId": job["taskId"], "inputResponses": {first: answer, "nope": {}}},
            )
            assert not ENVELOPE & set(ack)
            now = await result_of(peer, 4, "tasks/get", {"taskId": job["taskId"]})
            assert now["status"] == "input_required" and list(now["inputRequests"]) == [second]
            answer = {"action": "accept", "content": {"name": "two"}}
            await result_of(
                peer,
                5,
                "tasks/update",
                {"taskId": job["taskId"], "inputResponses": {second: answer}},
            )
            done = await until(peer, 6, job["taskId"], terminal)
            assert done["status"] == "completed"
            assert done["result"]["content"][0]["text"] == "one & two"

    run(scenario())


def test_multi_round_input_comes_before_the_task() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            params: dict[str, Any] = {"name": "test_tool_with_task", "arguments": {}}
            first = await result_of(peer, 1, "tools/call", params)
            assert first["resultType"] == "input_required" and "taskId" not in first
            key = next(iter(first["inputRequests"]))
            params["inputResponses"] = {key: {"action": "accept", "content": {"name": "Alice"}}}
            if "requestState" in first:
                params["requestState"] = first["requestState"]
            made = await result_of(peer, 2, "tools/call", params)
            assert made["resultType"] == "task"
            assert "requestState" not in made and "inputRequests" not in made
            done = await until(peer, 3, made["taskId"], terminal)
            assert "Alice" in done["result"]["content"][0]["text"]

    run(scenario())


def test_bad_task_requests_get_the_extensions_errors_and_the_server_goes_on() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            bad: list[tuple[str, Any, Any, int]] = [
                ("tasks/get", {"taskId": "gate-test"}, {}, -32021),
                ("tasks/update", {"taskId": "gate-test", "inputResponses": {}}, {}, -32021),
                ("tasks/cancel", {"taskId": "gate-test"}, {}, -32021),
                ("tools/call", {"name": "failing_job", "arguments": {}}, {}, -32021),
                ("tasks/get", {"taskId": "no-such-task"}, OPTED, -32602),
                ("tasks/update", {"taskId": "no-such-task", "inputResponses": {}}, OPTED, -32602),
                ("tasks/cancel", {"taskId": "no-such-task"}, OPTED, -32602),
                ("tasks/get", {}, OPTED, -32602),
                ("tasks/update", {"taskId": 7}, OPTED, -32602),
                ("tasks/result", {"taskId": "x"}, OPTED, -32601),
                ("tasks/list", {}, OPTED, -32601),
            ]
            for rid, (method, params, caps, code) in enumerate(bad, start=1):
                answer = await call(peer, rid, method, params, caps)
                assert answer.get("error", {}).get("code") == code, (method, params, answer)
                valid("JSONRPCErrorResponse", answer)
                if code == -32021:
                    wanted = answer["error"]["data"]["requiredCapabilities"]
                    assert wanted == {"extensions": {TASKS: {}}}
                good = await result_of(
                    peer, 100 + rid, "tools/call", {"name": "greet", "arguments": {"name": "x"}}
                )
                assert good["content"][0]["text"] == "Hello, x!"
            # the legacy task param is an unknown field here: ignored
            legacy = {"name": "greet", "arguments": {"name": "l"}, "task": {"ttl": 60000}}
            ignored = await result_of(peer, 200, "tools/call", legacy)
            assert ignored["content"][0]["text"] == "Hello, l!" and "taskId" not in ignored

    run(scenario())


def test_listen_streams_that_name_a_task_hear_its_status() -> None:
    async def scenario() -> None:
        async with serving(make_app().server) as peer:
            params = {"name": "slow_compute", "arguments": {"seconds": 60, "label": "heard"}}
            job = await result_of(peer, 1, "tools/call", params)
            refused = await call(
                peer,
                2,
                "subscriptions/listen",
                {"notifications": {"taskIds": [job["taskId"]]}},
                caps={},
            )
            assert refused["error"]["code"] == -32021
            assert refused["error"]["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}
            await peer.send(
                modern(
                    3,
                    "subscriptions/listen",
                    {"notifications": {"taskIds": [job["taskId"]]}},
                    capabilities=OPTED,
                )
            )
            ack = await peer.read()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["notifications"] == {"taskIds": [job["taskId"]]}
            other = await result_of(
                peer, 4, "tools/call", {**params, "arguments": {"seconds": 60, "label": "unheard"}}
            )
            await result_of(peer, 5, "tasks/cancel", {"taskId": other["taskId"]})
            await result_of(peer, 6, "tasks/cancel", {"taskId": job["taskId"]})
            heard = [
                m
                for m in peer.backlog + await peer.quiet(0.2)
                if m.get("method") == "notifications/tasks"
            ]
            assert [n["params"]["taskId"] for n in heard] == [job["taskId"]]  # only the one named
            note = heard[0]["params"]
            assert note["status"] == "cancelled" and "resultType" not in note
            assert note["_meta"]["io.modelcontextprotocol/subscriptionId"] == 3
            valid("Notification", {"method": "notifications/tasks", "params": note})

    run(scenario())


def test_a_server_without_tasks_refuses_them_in_both_eras_and_goes_on() -> None:
    async def scenario() -> None:
        app = App("plain", binding=stubs)

        @app.tool
        def greet(name: str) -> str:
            """Greet."""
            return f"Hello, {name}!"

        async with serving(app.server) as peer:  # modern: no such method here
            for rid, method in enumerate(("tasks/get", "tasks/update", "tasks/cancel"), start=1):
                answer = await call(peer, rid, method, {"taskId": "t", "inputResponses": {}})
                assert answer["error"]["code"] == -32601, answer
            made = await result_of(
                peer, 9, "tools/call", {"name": "greet", "arguments": {"name": "x"}}
            )
            assert made["resultType"] == "complete" and "taskId" not in made
        async with serving(app.server) as peer:  # legacy: the capability was not offered
            await peer.handshake("2025-11-25")
            for rid, method in enumerate(
                ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"), start=1
            ):
                await peer.send(
                    {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"taskId": "t"}}
                )
                assert (await peer.answer_to(rid))["error"]["code"] == -32601
            params = {"name": "greet", "arguments": {"name": "y"}, "task": {"ttl": 1000}}
            await peer.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
            plain = (await peer.answer_to(9))["result"]  # no task support: the call as it is
            assert plain["content"][0]["text"] == "Hello, y!"

    run(scenario())
