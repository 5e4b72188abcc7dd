"""``App`` resources, resource templates, prompts, completions and per-URI subscriptions,
through a real client over in-memory transports, in both eras. No subprocess, no socket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import client as legacy
from mcpgen.generated.v2026_07_28 import client as modern
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, File, Image, McpError
from mcpgen.runtime.core.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND
from support.app_scenarios import MODES, plain, run

app = App("library", binding=stubs, page_size=2)


@app.resource("books://index", mime_type="text/plain", description="Every book.")
def index() -> str:
    return "a\nb"


@app.resource("books://cover", mime_type="image/png")
def cover() -> bytes:
    return b"\x89PNG"


@app.resource("books://stats")
def stats() -> dict[str, int]:
    return {"books": 2}


@app.resource("books://{shelf}/{number}{?edition}")
async def book(shelf: str, number: int, edition: str = "first") -> list[Any]:
    """One book, by shelf and number."""
    return [f"{shelf} #{number} ({edition})", File(b"raw", uri=f"books://{shelf}/{number}.bin")]


@app.prompt(title="Summarize")
def summarize(topic: str, sentences: int = 3) -> str:
    """Ask for a summary.

    Args:
        topic: What to summarize.
        sentences: How long.
    """
    return f"Summarize {topic} in {sentences} sentences."


@app.prompt
async def dialogue(name: str) -> list[Any]:
    return [f"Hi, I am {name}.", ("assistant", "Hello!"), Image(b"\x89PNG")]


@app.prompt
def welcome() -> str:
    """Say hello (no arguments: the listing has none)."""
    return "Hello!"


@app.completion(prompt="summarize", argument="topic")
def topics(value: str, given: dict[str, str]) -> list[str]:
    return [topic for topic in ("history", "hiking", "math") if topic.startswith(value)]


@app.completion(resource="books://{shelf}/{number}{?edition}", argument="shelf")
async def shelves(value: str, given: dict[str, str]) -> list[str]:
    return [f"{value}{i}" for i in range(150)]


@pytest.mark.parametrize("mode", MODES)
def test_resources_and_templates_are_listed_paged_and_read(mode: str) -> None:
    async def scenario() -> None:
        async with app.test_client(mode=mode) as client:
            first = await client.list_resources()
            assert [r.uri for r in first.resources] == ["books://index", "books://cover"]
            rest = await client.list_resources(cursor=first.next_cursor)
            assert [r.uri for r in rest.resources] == ["books://stats"]
            (template,) = (await client.list_resource_templates()).resource_templates
            assert template.uri_template == "books://{shelf}/{number}{?edition}"
            assert template.description == "One book, by shelf and number."
            text = plain(await client.read_resource(uri="books://index"))["contents"]
            assert text == [{"uri": "books://index", "mimeType": "text/plain", "text": "a\nb"}]
            blob = plain(await client.read_resource(uri="books://cover"))["contents"][0]
            assert blob == {"uri": "books://cover", "mimeType": "image/png", "blob": "iVBORw=="}
            data = plain(await client.read_resource(uri="books://stats"))["contents"][0]
            assert data["mimeType"] == "application/json" and data["text"] == '{"books":2}'
            read = plain(await client.read_resource(uri="books://fiction/7?edition=second"))
            assert read["contents"][0]["text"] == "fiction #7 (second)"
            assert read["contents"][1] == {
                "uri": "books://fiction/7.bin",
                "mimeType": "application/octet-stream",
                "blob": "cmF3",
            }
            default = plain(await client.read_resource(uri="books://poetry/1"))
            assert default["contents"][0]["text"] == "poetry #1 (first)"

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_unknown_and_unmatched_resources_are_refused_and_the_next_read_works(mode: str) -> None:
    async def scenario() -> None:
        async with app.test_client(mode=mode) as client:
            for uri in ("books://nowhere", "shelves://x/1", "books://fiction/seven"):
                with pytest.raises(McpError) as refused:
                    await client.read_resource(uri=uri)
                assert refused.value.code in (RESOURCE_NOT_FOUND, INVALID_PARAMS)
            with pytest.raises(McpError) as bad:
                await client.list_resources(cursor="garbage")
            assert bad.value.code == INVALID_PARAMS
            assert (await client.read_resource(uri="books://index")).contents

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_prompts_are_listed_and_got_with_converted_arguments(mode: str) -> None:
    async def scenario() -> None:
        async with app.test_client(mode=mode) as client:
            first = await client.list_prompts()  # two per page
            rest = await client.list_prompts(cursor=first.next_cursor)
            prompts = {p.name: plain(p) for p in (*first.prompts, *rest.prompts)}
            assert prompts["summarize"]["title"] == "Summarize"
            assert prompts["summarize"]["arguments"] == [
                {"name": "topic", "description": "What to summarize.", "required": True},
                {"name": "sentences", "description": "How long.", "required": False},
            ]
            assert "arguments" not in prompts["welcome"]
            got = plain(
                await client.get_prompt(
                    name="summarize", arguments={"topic": "MCP", "sentences": "2"}
                )
            )
            assert got["messages"] == [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "Summarize MCP in 2 sentences."},
                }
            ]
            messages = plain(await client.get_prompt(name="dialogue", arguments={"name": "Ada"}))
            assert [m["role"] for m in messages["messages"]] == ["user", "assistant", "user"]
            assert messages["messages"][2]["content"]["type"] == "image"
            for name, arguments in (
                ("summarize", {}),
                ("summarize", {"topic": "x", "sentences": "many"}),
                ("nope", {}),
            ):
                with pytest.raises(McpError) as refused:
                    await client.get_prompt(name=name, arguments=arguments)
                assert refused.value.code == INVALID_PARAMS
            assert (await client.get_prompt(name="summarize", arguments={"topic": "y"})).messages

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_completions_for_prompt_arguments_and_template_variables(mode: str) -> None:
    async def scenario() -> None:
        async with app.test_client(mode=mode) as client:
            ref = t.PromptReference(name="summarize")
            argument = t.CompleteRequestParamsArgument(name="topic", value="hi")
            done = plain(await client.complete(ref=ref, argument=argument))["completion"]
            assert done == {"values": ["history", "hiking"], "total": 2, "hasMore": False}
            template = t.ResourceTemplateReference(uri="books://{shelf}/{number}{?edition}")
            shelf = t.CompleteRequestParamsArgument(name="shelf", value="f")
            many = plain(await client.complete(ref=template, argument=shelf))["completion"]
            assert len(many["values"]) == 100 and many["total"] == 150 and many["hasMore"]
            unknown = t.CompleteRequestParamsArgument(name="other", value="")
            assert (
                plain(await client.complete(ref=ref, argument=unknown))["completion"]["values"]
                == []
            )

    run(scenario())


def watched_app() -> App:
    watched = App("watched", binding=stubs)
    watched.add_resource("notes://a", lambda: "a")
    watched.add_resource("notes://b", lambda: "b")
    return watched


class Updates:
    """Client handlers' part that records ``notifications/resources/updated``."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.heard = asyncio.Event()

    async def on_resource_updated(self, params: Any) -> None:
        self.updated.append(params.uri)
        self.heard.set()


class LegacyListener(Updates, legacy.ClientHandlers):
    pass


class ModernListener(Updates, modern.ClientHandlers):
    pass


def test_a_resource_update_reaches_only_the_sessions_subscribed_to_it() -> None:
    watched = watched_app()

    async def scenario() -> None:
        subscriber, bystander = LegacyListener(), LegacyListener()
        options: dict[str, Any] = {"mode": "legacy", "client_class": legacy.Client}
        async with watched.test_client(handlers=subscriber, **options) as one:
            async with watched.test_client(handlers=bystander, **options):
                await one.subscribe(uri="notes://a")
                await watched.resource_updated("notes://b")  # nobody subscribed
                await watched.resource_updated("notes://a")
                await asyncio.wait_for(subscriber.heard.wait(), 5.0)
                await asyncio.sleep(0.05)
                assert subscriber.updated == ["notes://a"] and bystander.updated == []
                await one.unsubscribe(uri="notes://a")
                subscriber.heard.clear()
                await watched.resource_updated("notes://a")
                await asyncio.sleep(0.05)
                assert subscriber.updated == ["notes://a"]

    run(scenario())


def test_registration_mistakes_are_caught_at_registration() -> None:
    broken = App("broken", binding=stubs)
    with pytest.raises(TypeError):
        broken.add_resource("x://static", lambda name: name)  # a static resource with a parameter
    with pytest.raises(TypeError):
        broken.add_resource("x://{a}", lambda b: b)  # a variable that is no parameter
    with pytest.raises(ValueError):
        broken.add_resource("x://{a", lambda a: a)  # not a template
    with pytest.raises(ValueError):
        broken.completion(argument="x")


def test_a_modern_listen_stream_gets_updates_of_the_uris_it_named() -> None:
    """2026-07-28 has no ``resources/subscribe``: a ``subscriptions/listen`` request names
    the URIs it wants updates of, and only those reach its stream."""
    watched = watched_app()

    async def scenario() -> None:
        listener = ModernListener()
        async with watched.test_client(mode="auto", handlers=listener) as client:
            assert client.protocol_version == "2026-07-28"
            filters = {"notifications": {"resourceSubscriptions": ["notes://a"]}}
            stream = asyncio.create_task(client.session.request("subscriptions/listen", filters))
            (session,) = watched.server.sessions
            for _ in range(200):  # until the server has the stream open
                if session.listening:
                    break
                await asyncio.sleep(0.005)
            assert list(session.listening.values()) == [{"resourceSubscriptions": ["notes://a"]}]
            await watched.resource_updated("notes://b")  # not asked for
            await watched.resource_updated("notes://a")
            await asyncio.wait_for(listener.heard.wait(), 5.0)
            await asyncio.sleep(0.05)
            assert listener.updated == ["notes://a"]
            stream.cancel()  # the client stops listening
            with pytest.raises(asyncio.CancelledError):
                await stream
            assert (await client.read_resource(uri="notes://b")).contents  # still serving

    run(scenario())


def test_subscribing_to_a_uri_no_resource_or_template_names_is_refused() -> None:
    """Legacy ``resources/subscribe`` of a URI that names nothing gets -32002 "Resource
    not found" (those versions' code for it) and holds nothing; a resource's URI and one a
    template matches are taken, and unsubscribing lets go of one."""
    shelf = App("shelf", binding=stubs)
    shelf.add_resource("notes://index", lambda: "index")
    shelf.add_resource("notes://{folder}/{name}", lambda folder, name: f"{folder}/{name}")

    async def scenario() -> None:
        options: dict[str, Any] = {"mode": "legacy", "client_class": legacy.Client}
        async with shelf.test_client(**options) as client:
            with pytest.raises(McpError) as refused:
                await client.subscribe(uri="films://nowhere")
            assert refused.value.code == RESOURCE_NOT_FOUND
            assert refused.value.message == "Resource not found: films://nowhere"
            (session,) = shelf.server.sessions
            assert session.subscriptions == set()
            await client.subscribe(uri="notes://index")
            await client.subscribe(uri="notes://work/todo")
            assert session.subscriptions == {"notes://index", "notes://work/todo"}
            await client.unsubscribe(uri="notes://index")
            assert session.subscriptions == {"notes://work/todo"}
            assert (await client.read_resource(uri="notes://index")).contents

    run(scenario())
