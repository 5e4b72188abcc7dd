"""A ``Proxy`` in front of an in-process ``App``, with a real client in front of the proxy,
for every pair of eras (upstream × downstream): what the upstream offers passes through
with its errors' codes, what it asks of its client reaches the downstream client (across
a 2026-07-28 client's input rounds too), progress, logs, list changes and resource updates
come back, and cancellations travel both ways. No subprocess, no socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, Limits, McpError, Tasks
from mcpgen.runtime.client import Mode
from mcpgen.runtime.client.session import ClientSession
from mcpgen.runtime.core.errors import INVALID_PARAMS
from mcpgen.runtime.gateway import ClientQuota, Proxy, Upstream
from mcpgen.runtime.gateway.link import Link
from mcpgen.runtime.testing import connect
from support.app_scenarios import Answering as AdaAnswers
from support.app_scenarios import plain, run

#: (upstream era, downstream client mode): every pair.
PAIRS: list[tuple[Mode, Mode]] = [
    ("legacy", "legacy"),
    ("legacy", "auto"),
    ("modern", "legacy"),
    ("modern", "auto"),
]
IDS = [f"{up}-upstream-{down}-client" for up, down in PAIRS]


class Signals:
    """What the upstream's slow tool tells a test (made in the test's event loop)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def name_form() -> t.ElicitRequestFormParams:
    """The form the upstream tools here ask with: a name."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    return t.ElicitRequestFormParams(
        message="Name?",
        requested_schema=t.convert(schema, t.ElicitRequestFormParamsRequestedSchema),
    )


def upstream_app(signals: Signals | None = None) -> App:
    signals = signals or Signals()
    app = App("upstream-app", "2.5.0", binding=stubs, instructions="Use add to add.")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool
    async def greet(ctx: stubs.Context) -> str:
        """Ask the user's name, then the model for a greeting; report and log meanwhile."""
        form = name_form()
        answer = await ctx.elicit(form, key="name")
        name = (answer.content or {}).get("name")
        await ctx.report_progress(1, 2, "asked")
        await ctx.log("info", f"greeting {name}")
        question = t.SamplingMessage(role="user", content=t.TextContent(text=f"Greet {name}"))
        said = await ctx.create_message(
            t.CreateMessageRequestParams(messages=[question], max_tokens=10), key="greeting"
        )
        assert isinstance(said.content, t.TextContent)
        return said.content.text

    @app.tool
    async def slow(ctx: stubs.Context) -> str:
        """Wait until cancelled."""
        signals.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            signals.cancelled.set()
            raise
        return "finished"

    @app.resource("mem://note", mime_type="text/plain")
    def note() -> str:
        return "a note"

    @app.prompt
    def explain(code: str) -> str:
        """Explain some code."""
        return f"Explain: {code}"

    return app


class Answering(AdaAnswers):
    """A downstream client that answers what the upstream asks, and notes what it hears."""

    def __init__(self) -> None:
        self.heard: list[Any] = []

    async def on_logging_message(self, params: t.LoggingMessageNotificationParams) -> None:
        self.heard.append(("log", params.level, params.data))

    async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
        self.heard.append("tools changed")

    async def on_resource_updated(self, params: t.ResourceUpdatedNotificationParams) -> None:
        self.heard.append(("updated", params.uri))


class AnsweringAll(Answering):
    """A client that can be asked all the proxy relays (its roots too): it shares the
    proxy's connection declaring everything."""

    async def list_roots(
        self, params: t.ListRootsRequestParams, ctx: c.RequestContext
    ) -> t.ListRootsResult:
        return t.ListRootsResult(roots=[])


@asynccontextmanager
async def proxied(
    up: Mode, down: Mode, app: App | None = None, handlers: Any = None, **options: Any
) -> AsyncIterator[tuple[Any, Proxy]]:
    """A client (``down`` mode) of a proxy of ``app`` spoken to in the ``up`` era."""
    async with Proxy(Upstream(server=app or upstream_app(), mode=up), **options) as proxy:
        async with connect(proxy.server, mode=down, handlers=handlers) as client:
            yield client, proxy


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_what_the_upstream_offers_passes_through_in_every_pair_of_eras(
    up: Mode, down: Mode
) -> None:
    """Tools, resources, prompts and the upstream's identity reach the client, answers
    re-shaped to its version; the upstream's errors keep their codes."""

    async def scenario() -> None:
        async with proxied(up, down) as (client, proxy):
            assert client.session.era == ("modern" if down == "auto" else "legacy")
            assert proxy.server.info == {"name": "upstream-app", "version": "2.5.0"}
            assert client.session.server_info["name"] == "upstream-app"
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["add", "greet", "slow"]
            added = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
            assert plain(added)["structuredContent"] == {"result": 5}
            read = await client.read_resource(uri="mem://note")
            assert plain(read)["contents"][0]["text"] == "a note"
            prompt = await client.get_prompt(name="explain", arguments={"code": "x = 1"})
            assert "Explain: x = 1" in str(plain(prompt)["messages"])
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="absent", arguments={})
            assert refused.value.code == INVALID_PARAMS and "absent" in refused.value.message
            added = await client.call_tool(name="add", arguments={"a": 1, "b": 1})
            assert plain(added)["structuredContent"] == {"result": 2}

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_what_the_upstream_asks_reaches_the_client_in_every_pair_of_eras(
    up: Mode, down: Mode
) -> None:
    """Elicitation and sampling in the middle of a call reach the downstream client,
    whatever the eras (a legacy upstream's requests become a 2026-07-28 client's input
    rounds), with the call's progress and log message."""

    async def scenario() -> None:
        handlers = Answering()
        async with proxied(up, down, handlers=handlers) as (client, _):
            if down == "legacy":
                await client.session.request("logging/setLevel", {"level": "info"})
            else:
                client.session.set_log_level("info")
            progress: list[tuple[float, float | None, str | None]] = []

            async def noted(done: float, total: float | None, message: str | None) -> None:
                progress.append((done, total, message))

            params = {"name": "greet", "arguments": {}}
            result = await client.session.request("tools/call", params, progress=noted)
            assert plain(result)["content"] == [{"type": "text", "text": "Greet Ada!"}]
            # (a 2026-07-28 upstream runs the tool again each round: it may report twice)
            assert set(progress) == {(1.0, 2.0, "asked")}
            assert ("log", "info", "greeting Ada") in handlers.heard

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_list_changes_and_resource_updates_come_back_in_every_pair_of_eras(
    up: Mode, down: Mode
) -> None:
    """A tool added upstream and a resource updated upstream are announced downstream:
    to a legacy client's session (it subscribed), to a 2026-07-28 client's listen stream."""

    async def scenario() -> None:
        app, handlers = upstream_app(), Answering()
        async with proxied(up, down, app=app, handlers=handlers) as (client, proxy):
            caps = proxy.server.capabilities
            assert caps["tools"] == {"listChanged": True}
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            listening = None
            if down == "legacy":
                await client.session.request("resources/subscribe", {"uri": "mem://note"})
            else:
                filters = {"toolsListChanged": True, "resourceSubscriptions": ["mem://note"]}
                listening = asyncio.create_task(
                    client.session.session.request(
                        "subscriptions/listen", {"notifications": filters}, timeout=60
                    )
                )
            for _ in range(100):  # until the upstream subscription is made
                await asyncio.sleep(0.02)
                links = proxy.pools[0].shared_links()
                if any("mem://note" in link.subscriptions for link in links):
                    break
            app.add_tool(lambda: 2, name="two")
            await app.resource_updated("mem://note")
            for _ in range(100):
                if len(handlers.heard) >= 2:
                    break
                await asyncio.sleep(0.02)
            assert sorted(map(str, handlers.heard)) == [
                "('updated', 'mem://note')",
                "tools changed",
            ]
            if listening is not None:
                listening.cancel()

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_a_cancelled_call_is_cancelled_upstream(up: Mode, down: Mode) -> None:
    """The downstream client gives up on a call: the upstream's handler is cancelled,
    and the proxy serves the next call."""

    async def scenario() -> None:
        signals = Signals()
        async with proxied(up, down, app=upstream_app(signals)) as (client, _):
            call = asyncio.create_task(client.call_tool(name="slow", arguments={}))
            await asyncio.wait_for(signals.started.wait(), 5)
            call.cancel()
            await asyncio.wait_for(signals.cancelled.wait(), 5)
            added = await client.call_tool(name="add", arguments={"a": 4, "b": 4})
            assert plain(added)["structuredContent"] == {"result": 8}

    run(scenario())


def test_a_legacy_upstreams_question_unanswered_across_rounds_times_out() -> None:
    """A 2026-07-28 client that never comes back with its answer: the upstream's question
    fails after the proxy's ``Limits.request_timeout`` (the tool's result says so), and
    the proxy serves on."""

    async def scenario() -> None:
        limits = Limits(request_timeout=0.3)
        async with proxied("legacy", "auto", handlers=Answering(), limits=limits) as (
            client,
            proxy,
        ):
            params = {"name": "greet", "arguments": {}}
            raw = client.session.session  # a client that does not come back: no rounds
            first = await raw.request("tools/call", params)
            (key,) = first.requests  # the upstream's question, keyed by the parked call
            assert first.requests[key]["method"] == "elicitation/create"
            assert len(proxy.parking.calls) == 1
            parked = next(iter(proxy.parking.calls.values()))
            with pytest.raises(McpError) as failed:  # the question timed out upstream
                await asyncio.wait_for(parked.task, 5)
            assert "did not answer elicitation/create within 0.3 s" in failed.value.message
            added = await client.call_tool(name="add", arguments={"a": 1, "b": 2})
            assert plain(added)["structuredContent"] == {"result": 3}

    run(scenario())


def barrier_app(parties: int) -> App:
    """An upstream whose ``ask`` tool waits until ``parties`` calls are in flight, then
    asks each caller's name."""
    app = App("barrier", binding=stubs)
    arrived: list[asyncio.Event] = []

    @app.tool
    async def ask(ctx: stubs.Context) -> str:
        """Wait for the others, then ask the user's name."""
        if not arrived:
            arrived.append(asyncio.Event())
        arrived.append(asyncio.Event())
        if len(arrived) > parties:
            arrived[0].set()
        await asyncio.wait_for(arrived[0].wait(), 5)
        form = name_form()
        answer = await ctx.elicit(form)
        return str((answer.content or {}).get("name"))

    return app


class Named(Answering):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    async def elicit(self, params: t.ElicitRequestParams, ctx: c.RequestContext) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"name": self.name})


def test_per_session_upstreams_route_each_question_to_its_own_client() -> None:
    """With ``per_session``, each legacy client gets an upstream connection of its own:
    two calls in flight at once, each asked a question by a legacy upstream, reach their
    own clients; a client that leaves has its connection closed."""

    async def scenario() -> None:
        app = barrier_app(2)
        upstream = Upstream(server=app, mode="legacy", per_session=True)
        async with Proxy(upstream) as proxy:
            assert len(app.server.sessions) == 0  # the probe at start was closed
            async with connect(proxy.server, mode="legacy", handlers=Named("ada")) as ada:
                async with connect(proxy.server, mode="legacy", handlers=Named("bob")) as bob:
                    answers = await asyncio.gather(
                        ada.call_tool(name="ask", arguments={}),
                        bob.call_tool(name="ask", arguments={}),
                    )
                    assert [text_of(a) for a in answers] == ["ada", "bob"]
                    assert len(app.server.sessions) == 2
            async with connect(proxy.server, mode="legacy", handlers=Named("cy")) as cy:
                await cy.list_tools()  # opening its link sweeps those of the clients gone
                await asyncio.sleep(0.1)
                assert len(app.server.sessions) == 1

    run(scenario())


def test_a_shared_legacy_upstream_asking_during_two_calls_says_to_serve_it_per_session() -> None:
    """One upstream connection for all: a legacy upstream's question while two calls are
    in flight cannot be routed for certain, and the error says what to do."""

    async def scenario() -> None:
        upstream = Upstream(server=barrier_app(2), mode="legacy")
        async with Proxy(upstream) as proxy:
            async with connect(proxy.server, mode="legacy", handlers=Named("ada")) as ada:
                async with connect(proxy.server, mode="legacy", handlers=Named("bob")) as bob:
                    outcomes = await asyncio.gather(
                        ada.call_tool(name="ask", arguments={}),
                        bob.call_tool(name="ask", arguments={}),
                        return_exceptions=True,
                    )
                    for outcome in outcomes:
                        assert isinstance(outcome, McpError), outcome
                        assert "per_session" in outcome.message

    run(scenario())


def text_of(result: Any) -> str:
    return str(plain(result)["content"][0]["text"])


def test_an_upstream_that_gives_up_on_its_question_cancels_the_clients() -> None:
    """A legacy upstream's question that its client takes too long over is cancelled by
    the upstream (its request timeout): the proxy cancels the question it relayed, and the
    downstream client's handler stops."""

    class Stalling(Answering):
        def __init__(self) -> None:
            super().__init__()
            self.cancelled = asyncio.Event()

        async def elicit(
            self, params: t.ElicitRequestParams, ctx: c.RequestContext
        ) -> t.ElicitResult:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            raise AssertionError("not cancelled")

    async def scenario() -> None:
        app = upstream_app()
        app.server.limits = Limits(request_timeout=0.3)
        handlers = Stalling()
        async with proxied("legacy", "legacy", app=app, handlers=handlers) as (client, _):
            gave_up = plain(await client.call_tool(name="greet", arguments={}))
            assert gave_up["isError"] is True
            assert "did not answer elicitation/create" in gave_up["content"][0]["text"]
            await asyncio.wait_for(handlers.cancelled.wait(), 5)
            added = await client.call_tool(name="add", arguments={"a": 1, "b": 1})
            assert plain(added)["structuredContent"] == {"result": 2}

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_a_tool_the_upstream_runs_only_as_a_task_is_a_call_or_a_task_of_the_proxy(
    up: Mode, down: Mode
) -> None:
    """A tool its upstream runs only as a task: called plainly, the proxy follows the
    upstream's task and answers the call (with ``strict_tasks``, the call is refused as
    its era says: -32601 in 2025-11-25, -32021 naming the extension in 2026-07-28); asked
    as a task, the client gets the proxy's task, whose result is the upstream task's."""

    async def scenario() -> None:
        app = App("tasking", binding=stubs, tasks=Tasks())

        @app.tool(task="required")
        async def report(quarter: str) -> str:
            """Only as a task."""
            await asyncio.sleep(0.3)
            return f"report for {quarter}"

        async with proxied(up, down, app=app) as (client, proxy):
            assert "tasks" in proxy.server.capabilities
            assert proxy.task_support("report") == "optional"
            called = await client.call_tool(name="report", arguments={"quarter": "Q3"})
            assert text_of(called) == "report for Q3"
        async with proxied(up, down, app=app, strict_tasks=True) as (client, proxy):
            assert proxy.task_support("report") == "required"
            if down == "legacy":  # (2026-07-28 tools say nothing of tasks)
                listed = plain(await client.session.request("tools/list", {}))
                assert listed["tools"][0]["execution"] == {"taskSupport": "required"}
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="report", arguments={"quarter": "Q3"})
            assert refused.value.code == (-32601 if down == "legacy" else -32021)
            handle = await client.session.call_tool_as_task("report", {"quarter": "Q4"})
            assert not handle.immediate
            assert handle.task_id
            assert text_of(await handle.result()) == "report for Q4"
            status = await handle.status()
            assert status.status == "completed"

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_a_slow_call_becomes_a_task_of_the_proxy_after_task_after_ms(up: Mode, down: Mode) -> None:
    """``task_after_ms`` in front of an upstream that runs no tasks: a call slower than it
    becomes the proxy's task for a client that takes tasks, its result kept until asked;
    a quicker call is answered as it is; cancelling the task cancels the upstream call."""

    async def scenario() -> None:
        signals = Signals()
        app = upstream_app(signals)

        @app.tool
        async def pause(seconds: float) -> str:
            """Sleep a while."""
            await asyncio.sleep(seconds)
            return f"slept {seconds}"

        async with proxied(up, down, app=app, task_after_ms=400) as (client, proxy):
            assert proxy.task_support("add") == "optional"
            quick = await client.session.call_tool_as_task("add", {"a": 1, "b": 2})
            if down == "auto":  # the server decides: answered at once
                assert quick.immediate
            assert plain(await quick.result())["structuredContent"] == {"result": 3}
            slow = await client.session.call_tool_as_task("pause", {"seconds": 1.0})
            assert not slow.immediate
            assert text_of(await slow.result()) == "slept 1.0"
            hanging = await client.session.call_tool_as_task("slow", {})
            assert not hanging.immediate
            await asyncio.wait_for(signals.started.wait(), 5)
            await hanging.cancel()
            await asyncio.wait_for(signals.cancelled.wait(), 5)
            assert (await hanging.status()).status == "cancelled"
            added = await client.call_tool(name="add", arguments={"a": 2, "b": 2})
            assert plain(added)["structuredContent"] == {"result": 4}

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_a_question_asked_during_a_task_of_the_proxy_reaches_the_client(
    up: Mode, down: Mode
) -> None:
    """A call running as the proxy's task whose upstream asks the user something: the
    task waits for input (``input_required``), the client's answer reaches the upstream,
    and the task completes with the upstream's answer."""

    async def scenario() -> None:
        async with proxied(up, down, handlers=Answering(), task_after_ms=0) as (client, _):
            handle = await client.session.call_tool_as_task("greet", {})
            assert not handle.immediate
            result = await asyncio.wait_for(handle.result(), 10)
            assert plain(result)["content"] == [{"type": "text", "text": "Greet Ada!"}]

    run(scenario())


def test_each_client_is_bounded_in_rate_and_in_flight_and_others_are_served() -> None:
    """One client over its ``ClientQuota`` is refused at once (-32000, saying which bound
    and when to retry) while another client is served; it is served again once it waits
    (rate) or a call ends (in flight)."""

    async def scenario() -> None:
        signals = Signals()
        quota = ClientQuota(per_second=5, burst=3, in_flight=1)
        async with Proxy(Upstream(server=upstream_app(signals)), quota=quota) as proxy:
            # Checking results would list the tools first: one more request in the quota.
            async with connect(proxy.server, mode="legacy", output_validation="off") as greedy:
                for _ in range(3):
                    await greedy.call_tool(name="add", arguments={"a": 1, "b": 1})
                with pytest.raises(McpError) as refused:
                    await greedy.call_tool(name="add", arguments={"a": 1, "b": 1})
                assert refused.value.code == -32000
                assert "ClientQuota.per_second" in refused.value.message
                assert refused.value.data["retryAfterSeconds"] > 0
                async with connect(proxy.server, mode="legacy") as other:
                    added = await other.call_tool(name="add", arguments={"a": 2, "b": 2})
                    assert plain(added)["structuredContent"] == {"result": 4}
                await asyncio.sleep(refused.value.data["retryAfterSeconds"] + 0.05)
                slow = asyncio.create_task(greedy.call_tool(name="slow", arguments={}))
                await asyncio.wait_for(signals.started.wait(), 5)
                await asyncio.sleep(0.5)  # tokens back; the one in flight still runs
                with pytest.raises(McpError) as busy:
                    await greedy.call_tool(name="add", arguments={"a": 1, "b": 1})
                assert "ClientQuota.in_flight" in busy.value.message
                slow.cancel()
                await asyncio.wait_for(signals.cancelled.wait(), 5)
                await asyncio.sleep(0.05)
                added = await greedy.call_tool(name="add", arguments={"a": 3, "b": 3})
                assert plain(added)["structuredContent"] == {"result": 6}

    run(scenario())


def test_a_quota_is_a_setting_each_proxy_counts_for_itself() -> None:
    with pytest.raises(ValueError):
        ClientQuota(per_second=0)
    quota = ClientQuota(per_second=1, burst=1)
    assert quota.meter() is not quota.meter()


def test_a_connection_made_anew_subscribes_again_to_what_clients_wait_for() -> None:
    """The shared connection to the upstream ends for good: the next request opens a new
    one, which asks the upstream again for the updates a client subscribed to."""

    async def scenario() -> None:
        app, handlers = upstream_app(), AnsweringAll()
        async with proxied("legacy", "legacy", app=app, handlers=handlers) as (client, proxy):
            await client.session.request("resources/subscribe", {"uri": "mem://note"})
            first = proxy.pools[0].shared
            assert first is not None and first.session is not None
            assert first.session.session is not None
            await first.session.session.close()  # the upstream connection is gone
            added = await client.call_tool(name="add", arguments={"a": 1, "b": 2})
            assert plain(added)["structuredContent"] == {"result": 3}
            second = proxy.pools[0].shared
            assert second is not None and second is not first
            assert second.subscriptions == {"mem://note": 1}
            await app.resource_updated("mem://note")
            for _ in range(100):
                if handlers.heard:
                    break
                await asyncio.sleep(0.02)
            assert handlers.heard == [("updated", "mem://note")]

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_a_question_asked_inside_an_upstream_task_reaches_the_client(up: Mode, down: Mode) -> None:
    """A tool the upstream runs only as a task asks the user something while it runs: the
    question reaches the downstream client, in a plain call (a 2026-07-28 one in an input
    round, the upstream task followed across its rounds) and through the proxy's task (a
    request tied to it in 2025-11-25, its ``inputRequests`` in 2026-07-28); the answer
    reaches the upstream's task."""

    async def scenario() -> None:
        app = App("tasking", binding=stubs, tasks=Tasks())

        @app.tool(task="required")
        async def survey(ctx: stubs.Context) -> str:
            """Ask a name, as a task."""
            form = name_form()
            answer = await ctx.elicit(form, key="name")
            return f"surveyed {(answer.content or {}).get('name')}"

        async with proxied(up, down, app=app, handlers=Answering()) as (client, _):
            called = await client.call_tool(name="survey", arguments={})
            assert text_of(called) == "surveyed Ada"
            handle = await client.session.call_tool_as_task("survey", {})
            assert not handle.immediate
            assert text_of(await asyncio.wait_for(handle.result(), 10)) == "surveyed Ada"

    run(scenario())


def test_a_call_waiting_on_its_question_is_not_taken_for_the_one_asking_next() -> None:
    """A 2026-07-28 client leaves a legacy upstream's call parked on its question: a
    second call asking its own question while the first still waits is routed to the
    second, not refused as ambiguous."""

    async def scenario() -> None:
        limits = Limits(request_timeout=2.0)  # the first question's wait ends by the close
        async with proxied("legacy", "auto", handlers=Answering(), limits=limits) as (
            client,
            proxy,
        ):
            raw = client.session.session  # a round not followed by the client
            first = await raw.request("tools/call", {"name": "greet", "arguments": {}})
            assert first.requests  # parked, its question open
            second = await client.call_tool(name="greet", arguments={})
            assert text_of(second) == "Greet Ada!"
            assert len(proxy.parking.calls) == 1  # the first still waits for its client

    run(scenario())


def test_questions_a_legacy_upstream_asks_at_once_come_in_one_round() -> None:
    """A legacy upstream's handler asking three things at once (elicitation, sampling,
    roots): a 2026-07-28 client gets all three in one input round, then the answer."""

    async def scenario() -> None:
        app = App("asking", binding=stubs)

        @app.tool
        async def three(ctx: stubs.Context) -> str:
            """Ask three things at once."""
            form = name_form()
            question = t.SamplingMessage(role="user", content=t.TextContent(text="Hi"))
            sampling = t.CreateMessageRequestParams(messages=[question], max_tokens=5)
            named, said, _ = await asyncio.gather(
                ctx.elicit(form), ctx.create_message(sampling), ctx.list_roots()
            )
            assert isinstance(said.content, t.TextContent)
            return f"{(named.content or {}).get('name')} {said.content.text}"

        limits = Limits(request_timeout=2.0)  # the first round's wait ends by the close
        async with proxied("legacy", "auto", app=app, handlers=AnsweringAll(), limits=limits) as (
            client,
            _,
        ):
            first = await client.session.session.request("tools/call", {"name": "three"})
            methods = sorted(ask["method"] for ask in first.requests.values())
            assert methods == ["elicitation/create", "roots/list", "sampling/createMessage"]
            answered = await client.call_tool(name="three", arguments={})
            assert text_of(answered) == "Ada Hi!"

    run(scenario())


@pytest.mark.parametrize(("up", "down"), PAIRS, ids=IDS)
def test_the_upstream_judges_each_client_by_what_that_client_declares(up: Mode, down: Mode) -> None:
    """A client that cannot be asked for sampling is refused a tool that needs it
    (-32021, as the upstream refuses its own clients), while one that can is served: a
    legacy upstream sees, for each, a session declaring what that client declares; a
    2026-07-28 one, requests declaring it."""

    async def scenario() -> None:
        app = App("needs-sampling", binding=stubs)

        @app.tool
        async def summarize(ctx: stubs.Context) -> str:
            """Needs sampling."""
            ctx.require_capability("sampling")
            return "summarized"

        class NoSampling(c.ClientHandlers):
            async def list_roots(
                self, params: t.ListRootsRequestParams, ctx: c.RequestContext
            ) -> t.ListRootsResult:
                return t.ListRootsResult(roots=[])

        async with Proxy(Upstream(server=app, mode=up)) as proxy:
            async with connect(proxy.server, mode=down, handlers=NoSampling()) as lacking:
                with pytest.raises(McpError) as refused:
                    await lacking.call_tool(name="summarize", arguments={})
                assert refused.value.code == -32021 and "sampling" in refused.value.message
            async with connect(proxy.server, mode=down, handlers=Answering()) as able:
                done = await able.call_tool(name="summarize", arguments={})
                assert text_of(done) == "summarized"
            if up == "legacy":  # roots only; sampling and elicitation
                assert len(proxy.pools[0].by_capabilities) == 2

    run(scenario())


def test_a_resource_updated_twice_is_announced_twice() -> None:
    """Only the same change heard on two connections is announced once: two updates of
    one resource in quick succession reach the client as two."""

    async def scenario() -> None:
        app, handlers = upstream_app(), AnsweringAll()
        async with proxied("legacy", "legacy", app=app, handlers=handlers) as (client, _):
            await client.session.request("resources/subscribe", {"uri": "mem://note"})
            await app.resource_updated("mem://note")
            await app.resource_updated("mem://note")
            for _ in range(100):
                if len(handlers.heard) >= 2:
                    break
                await asyncio.sleep(0.02)
            assert handlers.heard == [("updated", "mem://note")] * 2

    run(scenario())


@pytest.mark.parametrize("down", ["legacy", "auto"])
def test_questions_of_upstream_tasks_in_flight_together_reach_their_own_clients(
    down: Mode,
) -> None:
    """Two clients call, at once, a tool a legacy upstream runs only as a task, over the
    proxy's one connection to it; each task asks its client's name: each question reaches
    the client whose call made the task (it names its task), and no answer crosses."""

    async def scenario() -> None:
        app = App("tasking", binding=stubs, tasks=Tasks())

        @app.tool(task="required")
        async def survey(ctx: stubs.Context) -> str:
            """Ask a name, as a task."""
            await asyncio.sleep(0.1)
            form = name_form()
            answer = await ctx.elicit(form, key="name")
            return f"surveyed {(answer.content or {}).get('name')}"

        async with Proxy(Upstream(server=app, mode="legacy")) as proxy:
            async with connect(proxy.server, mode=down, handlers=Named("Ada")) as ada:
                async with connect(proxy.server, mode=down, handlers=Named("Bob")) as bob:
                    both = await asyncio.gather(
                        ada.call_tool(name="survey", arguments={}),
                        bob.call_tool(name="survey", arguments={}),
                    )
        assert [text_of(r) for r in both] == ["surveyed Ada", "surveyed Bob"]

    run(scenario())


@pytest.mark.parametrize("down", ["legacy", "auto"])
def test_a_task_asking_before_its_call_has_noted_it_reaches_that_calls_client(
    down: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the proxy's one connection to a legacy upstream, Ada's call follows an upstream
    task that asks nothing when Bob's call makes one that asks at once. Bob's question
    (naming its task) is handled before his call has resumed from the answer that made
    the task, so before the proxy knows whose task it is (as on a loaded machine): it
    waits for that, and reaches Bob, rather than being refused as ambiguous between the
    two calls in flight (which failed Bob's task)."""

    async def scenario() -> None:
        app = App("tasking", binding=stubs, tasks=Tasks())
        running, release = asyncio.Event(), asyncio.Event()

        @app.tool(task="required")
        async def wait(ctx: stubs.Context) -> str:
            """Wait, as a task, asking nothing."""
            running.set()
            await release.wait()
            return "waited"

        @app.tool(task="required")
        async def survey(ctx: stubs.Context) -> str:
            """Ask a name at once, as a task."""
            form = name_form()
            answer = await ctx.elicit(form, key="name")
            return f"surveyed {(answer.content or {}).get('name')}"

        asked = asyncio.Event()
        ask, call_tool_as_task = Link.ask, ClientSession.call_tool_as_task

        async def question_first(link: Link, method: str, params: Any, ctx: Any) -> Any:
            asked.set()
            return await ask(link, method, params, ctx)

        async def resumed_late(session: ClientSession, name: str, *args: Any) -> Any:
            handle = await call_tool_as_task(session, name, *args)
            if name == "survey":  # the task's question is handled before the call resumes
                await asked.wait()
            return handle

        monkeypatch.setattr(Link, "ask", question_first)
        monkeypatch.setattr(ClientSession, "call_tool_as_task", resumed_late)
        async with Proxy(Upstream(server=app, mode="legacy")) as proxy:
            async with connect(proxy.server, mode=down, handlers=Named("Ada")) as ada:
                async with connect(proxy.server, mode=down, handlers=Named("Bob")) as bob:
                    waiting = asyncio.ensure_future(ada.call_tool(name="wait", arguments={}))
                    try:
                        await asyncio.wait_for(running.wait(), 5)
                        surveyed = await asyncio.wait_for(
                            bob.call_tool(name="survey", arguments={}), 10
                        )
                    except BaseException:
                        waiting.cancel()
                        raise
                    release.set()
                    waited = await asyncio.wait_for(waiting, 10)
        assert asked.is_set()
        assert (text_of(surveyed), text_of(waited)) == ("surveyed Bob", "waited")

    run(scenario())
