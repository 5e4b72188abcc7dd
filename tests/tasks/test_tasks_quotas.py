"""Per-owner bounds on tasks, over the HTTP app in process (``asgi_driver``): one requester
flooding a server with tasks, running ones or kept ones, is refused with -32000 naming the
per-owner limit, while the others still create tasks and get their outcomes: another
principal on a protected endpoint; another legacy session, and an unauthenticated
2026-07-28 client, on an open one. The flooder is served again once its tasks end (running)
or expire (kept). And a client asking for a day of retention is granted the store's
longest, an hour by default, as the task's ``ttl`` says."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, MemoryTaskStore, Tasks
from mcpgen.runtime.http.auth import Principal, ResourceServer
from mcpgen.runtime.http.auth.principal import InvalidToken
from mcpgen.runtime.core.errors import SERVER_BUSY

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.asgi_driver import App as Asgi, call, initialize, request  # noqa: E402

ISSUER = "http://auth.test"
RESOURCE = "http://127.0.0.1:3001/mcp"
TASKS = "io.modelcontextprotocol/tasks"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
#: The per-owner bound each test sets (small, so a flood is quick).
QUOTA = 3


class Tokens:
    """A verifier knowing a fixed token per principal (as a real one maps a signed JWT)."""

    PRINCIPALS = {
        name: Principal(name, ["mcp"], client_id="agent", issuer=ISSUER)
        for name in ("alice", "bob")
    }

    async def verify(self, token: str) -> Principal:
        try:
            return self.PRINCIPALS[token]
        except KeyError:
            raise InvalidToken("unknown token") from None


class Clock:
    """Real time, moved forward on demand (for the store's TTLs)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


class World:
    """An app whose tools run as tasks (``hold`` until released, ``quick`` at once), open
    or protected, with a per-owner bound on running or on kept tasks."""

    def __init__(self, protected: bool, bound: str, store_class: type = MemoryTaskStore) -> None:
        self.clock = Clock()
        kept, running = (QUOTA, 1_000) if bound == "kept" else (1_000, QUOTA)
        store = store_class(clock=self.clock, max_tasks_per_owner=kept)
        tasks = Tasks(store, immediate_ms=0, max_running_per_owner=running)
        auth = None
        if protected:
            auth = ResourceServer(Tokens(), resource=RESOURCE, authorization_servers=[ISSUER])
        app = App("quotas", binding=stubs, tasks=tasks, auth=auth)
        self.release = asyncio.Event()

        @app.tool(task="optional")
        async def hold(label: str) -> str:
            """Hold until the test releases it."""
            await self.release.wait()
            return f"held {label}"

        @app.tool(task="optional")
        def quick(label: str) -> str:
            """Done at once."""
            return f"quick {label}"

        self.asgi: Asgi = app.http_app()


class Requester:
    """One requester of the world's app: modern (stateless) or a legacy session, with a
    token or none. ``start`` calls a tool as a task: its id, or the error refusing it."""

    def __init__(self, world: World, era: str, token: str | None = None) -> None:
        self.asgi, self.era, self.rid = world.asgi, era, 0
        self.headers = {"authorization": f"Bearer {token}"} if token else {}

    async def open(self) -> Requester:
        if self.era == LEGACY:
            reply = await call(self.asgi, body=initialize(LEGACY), headers=self.headers)
            assert reply.status == 200, reply
            self.headers["mcp-session-id"] = reply.headers["mcp-session-id"]
            self.headers["mcp-protocol-version"] = LEGACY
            note = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
            assert (await call(self.asgi, body=note, headers=self.headers)).status == 202
        return self

    async def ask(self, method: str, params: dict[str, Any], name: str | None = None) -> Any:
        self.rid += 1
        headers = dict(self.headers)
        if self.era == MODERN:
            meta = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
            }
            params = {**params, "_meta": meta}
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": method})
            if name is not None:
                headers["mcp-name"] = name
        reply = await call(self.asgi, body=request(self.rid, method, params), headers=headers)
        (message,) = reply.messages()
        return message

    async def start(self, tool: str, label: str) -> tuple[str | None, dict[str, Any] | None]:
        params: dict[str, Any] = {"name": tool, "arguments": {"label": label}}
        if self.era == LEGACY:
            params["task"] = {}
        answer = await self.ask("tools/call", params, tool)
        if "error" in answer:
            return None, answer["error"]
        result = answer["result"]
        return (result["task"] if self.era == LEGACY else result)["taskId"], None

    async def outcome(self, task_id: str) -> str:
        """The task's result text, once it ended (legacy: ``tasks/result`` waits for it;
        modern: ``tasks/get`` until it is terminal, as its requester does)."""
        if self.era == LEGACY:
            answer = await self.ask("tasks/result", {"taskId": task_id})
            return answer["result"]["content"][0]["text"]
        for _ in range(500):
            task = (await self.ask("tasks/get", {"taskId": task_id}, task_id))["result"]
            if task["status"] == "completed":
                return task["result"]["content"][0]["text"]
            await asyncio.sleep(0.01)
        raise AssertionError(f"task {task_id} did not complete")

    async def completes(self, tool: str, label: str) -> None:
        """A task of ``tool`` is made and completes with its own result."""
        task_id, refused = await self.start(tool, label)
        assert task_id is not None, refused
        assert await self.outcome(task_id) == f"{'held' if tool == 'hold' else 'quick'} {label}"


async def flood(requester: Requester, tool: str) -> list[str]:
    """Tasks of ``tool`` until one is refused: the ones made (the refusal checked)."""
    made: list[str] = []
    for n in range(QUOTA + 1):
        task_id, refused = await requester.start(tool, f"flood {n}")
        if task_id is None:
            assert refused is not None
            assert refused["code"] == SERVER_BUSY, refused
            limit = "max_running_per_owner" if tool == "hold" else "max_tasks_per_owner"
            assert f"at most {QUOTA} per owner: {limit}" in refused["message"], refused
            assert "retry" in refused["message"], refused
            return made
        made.append(task_id)
    raise AssertionError(f"{QUOTA + 1} tasks made: no per-owner bound")


def run(scenario: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario, 30))


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_a_principal_flooding_running_tasks_is_refused_while_another_still_runs_them(
    era: str,
) -> None:
    async def scenario() -> None:
        world = World(protected=True, bound="running")
        alice = await Requester(world, era, "alice").open()
        bob = await Requester(world, era, "bob").open()
        held = await flood(alice, "hold")
        assert len(held) == QUOTA
        await bob.completes("quick", "bob's")  # created and completed: not alice's quota
        bobs = [await bob.start("hold", f"b{n}") for n in range(QUOTA)]  # bob's own quota
        assert all(task_id is not None for task_id, _ in bobs), bobs
        world.release.set()  # alice's tasks end: she is served again
        assert [await alice.outcome(task_id) for task_id in held] == [
            f"held flood {n}" for n in range(QUOTA)
        ]
        await alice.completes("hold", "again")

    run(scenario())


class SlowStore(MemoryTaskStore):
    """A store whose create takes a turn of the loop, as a networked one (Redis) does."""

    async def create(self, method: str, owner: str = "", ttl_ms: int | None = None) -> Any:
        await asyncio.sleep(0.01)
        return await super().create(method, owner, ttl_ms)


def test_concurrent_requests_of_one_owner_cannot_slip_past_its_running_bound() -> None:
    """Many task calls of one principal at once, while the store takes its time: no more
    run than its bound (each is counted from the check, not once the store answers)."""

    async def scenario() -> None:
        world = World(protected=True, bound="running", store_class=SlowStore)
        alice = await Requester(world, MODERN, "alice").open()
        started = await asyncio.gather(*(alice.start("hold", f"a{n}") for n in range(QUOTA * 3)))
        made = [task_id for task_id, _ in started if task_id is not None]
        assert len(made) == QUOTA, started
        world.release.set()
        await alice.completes("quick", "after")

    run(scenario())


def test_a_legacy_session_flooding_running_tasks_leaves_other_clients_served() -> None:
    async def scenario() -> None:
        world = World(protected=False, bound="running")
        flooder = await Requester(world, LEGACY).open()
        other_session = await Requester(world, LEGACY).open()
        stateless = Requester(world, MODERN)  # unauthenticated: nobody in particular
        held = await flood(flooder, "hold")
        await other_session.completes("quick", "other session")
        await stateless.completes("quick", "stateless")
        world.release.set()
        for task_id in held:
            assert (await flooder.outcome(task_id)).startswith("held flood")
        await flooder.completes("quick", "again")

    run(scenario())


def test_requesters_nothing_tells_apart_share_no_per_owner_quota() -> None:
    """Unauthenticated 2026-07-28 requests are nobody in particular: more of their tasks
    run at once than one owner may run, up to the bound for everyone."""

    async def scenario() -> None:
        world = World(protected=False, bound="running")
        stateless = Requester(world, MODERN)
        held = [await stateless.start("hold", f"s{n}") for n in range(QUOTA * 2)]
        assert all(task_id is not None for task_id, _ in held), held
        world.release.set()
        await stateless.completes("quick", "after")

    run(scenario())


@pytest.mark.parametrize("protected", [True, False], ids=["principals", "sessions"])
def test_an_owner_flooding_kept_tasks_is_refused_until_they_expire_and_others_are_not(
    protected: bool,
) -> None:
    async def scenario() -> None:
        world = World(protected=protected, bound="kept")
        token = "alice" if protected else None
        flooder = await Requester(world, LEGACY, token).open()
        others = [await Requester(world, LEGACY, "bob" if protected else None).open()]
        if not protected:
            others.append(Requester(world, MODERN))  # unauthenticated, stateless
        kept = await flood(flooder, "quick")  # each ends at once, and is kept for its TTL
        for task_id in kept:
            assert (await flooder.outcome(task_id)).startswith("quick flood")
        for n, other in enumerate(others):
            for k in range(QUOTA):  # their own quota each, untouched by the flood
                await other.completes("quick", f"other {n}.{k}")
        still, refused = await flooder.start("quick", "too soon")
        assert still is None and refused is not None and refused["code"] == SERVER_BUSY
        world.clock.ahead = 3_600 + 1  # past the TTL: the flood's tasks are gone
        await flooder.completes("quick", "after expiry")

    run(scenario())


def test_a_day_of_retention_asked_for_is_granted_the_longest_an_hour() -> None:
    async def scenario() -> None:
        world = World(protected=False, bound="kept")
        legacy = await Requester(world, LEGACY).open()
        params = {"name": "quick", "arguments": {"label": "l"}, "task": {"ttl": 86_400_000}}
        made = (await legacy.ask("tools/call", params))["result"]["task"]
        assert made["ttl"] == 3_600_000
        polled = (await legacy.ask("tasks/get", {"taskId": made["taskId"]}))["result"]
        assert polled["ttl"] == 3_600_000
        bad = {"name": "quick", "arguments": {"label": "l"}, "task": {"ttl": "forever"}}
        unread = (await legacy.ask("tools/call", bad))["result"]["task"]  # not a number: none
        assert unread["ttl"] == 3_600_000
        modern = Requester(world, MODERN)
        task_id, _ = await modern.start("quick", "m")
        assert task_id is not None
        task = (await modern.ask("tasks/get", {"taskId": task_id}, task_id))["result"]
        assert task["ttlMs"] == 3_600_000
        await legacy.completes("quick", "good")

    run(scenario())
