"""Several upstreams behind one proxy, each under a prefix: lists merged and paged, each
request routed to the upstream its name belongs to and renamed back, answers and
notifications renamed on the way out, tools filtered per upstream, and mounts whose names
could be confused refused at start-up. In process, one upstream legacy and one 2026-07-28,
each client era."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, McpError
from mcpgen.runtime.client import Mode
from mcpgen.runtime.core.errors import INVALID_PARAMS
from mcpgen.runtime.gateway import Mount, Proxy, Upstream
from mcpgen.runtime.testing import connect
from support.app_scenarios import plain, run


def weather() -> App:
    app = App("weather", binding=stubs, instructions="Ask about the weather.")

    @app.tool
    def forecast(city: str) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}"

    @app.tool
    def alerts() -> str:
        """Warnings in force."""
        return "none"

    @app.resource("docs://guide", mime_type="text/plain")
    def guide() -> str:
        return "the weather guide"

    @app.resource("docs://{page}", mime_type="text/plain")
    def doc(page: str) -> str:
        return f"weather page {page}"

    @app.prompt
    def summary(city: str) -> str:
        """Summarise the weather."""
        return f"Summarise the weather in {city}"

    @app.completion(prompt="summary", argument="city")
    async def cities(value: str, given: dict[str, str]) -> list[str]:
        return [c for c in ("Oslo", "Osaka", "Lima") if c.startswith(value)]

    return app


def files() -> App:
    app = App("files", binding=stubs, instructions="Read files.")

    @app.tool
    def forecast(path: str) -> str:  # the same name as weather's: prefixes keep them apart
        """Read a file (a name clash on purpose)."""
        return f"contents of {path}"

    @app.resource("file:///notes.txt", mime_type="text/plain")
    def notes() -> str:
        return "some notes"

    return app


def mounted(**options: Any) -> Proxy:
    return Proxy(
        [
            Upstream(name="weather", server=weather(), mode="legacy"),
            Upstream(name="files", server=files(), mode="modern"),
        ],
        **options,
    )


def names(result: Any, key: str, field: str = "name") -> list[str]:
    return [item[field] for item in plain(result)[key]]


@pytest.mark.parametrize("down", ["legacy", "auto"])
def test_two_upstreams_under_their_names_merge_and_route(down: Mode) -> None:
    """Both upstreams' tools, resources, templates and prompts under their prefixes;
    each call, read, prompt and completion reaches its own upstream by its own name;
    capabilities are the union, instructions each under its prefix."""

    async def scenario() -> None:
        async with mounted() as proxy:
            assert proxy.server.info["name"] == "mcpgen-proxy"
            assert proxy.server.instructions == (
                "weather: Ask about the weather.\n\nfiles: Read files."
            )
            assert {"tools", "resources", "prompts", "completions"} <= set(
                proxy.server.capabilities
            )
            async with connect(proxy.server, mode=down) as client:
                tools = names(await client.list_tools(), "tools")
                assert tools == ["weather_forecast", "weather_alerts", "files_forecast"]
                said = await client.call_tool(name="weather_forecast", arguments={"city": "Oslo"})
                assert plain(said)["content"][0]["text"] == "sunny in Oslo"
                read = await client.call_tool(name="files_forecast", arguments={"path": "/a"})
                assert plain(read)["content"][0]["text"] == "contents of /a"
                resources = names(await client.list_resources(), "resources", "uri")
                assert resources == ["docs://weather/guide", "file://files//notes.txt"]
                templates = await client.list_resource_templates()
                assert names(templates, "resourceTemplates", "uriTemplate") == [
                    "docs://weather/{page}"
                ]
                guide = plain(await client.read_resource(uri="docs://weather/guide"))
                assert guide["contents"] == [
                    {
                        "uri": "docs://weather/guide",
                        "mimeType": "text/plain",
                        "text": "the weather guide",
                    }
                ]
                page = plain(await client.read_resource(uri="docs://weather/rain"))
                assert page["contents"][0]["text"] == "weather page rain"
                assert page["contents"][0]["uri"] == "docs://weather/rain"
                notes = plain(await client.read_resource(uri="file://files//notes.txt"))
                assert notes["contents"][0]["text"] == "some notes"
                prompts = names(await client.list_prompts(), "prompts")
                assert prompts == ["weather_summary"]
                got = plain(
                    await client.get_prompt(name="weather_summary", arguments={"city": "Lima"})
                )
                assert "Summarise the weather in Lima" in str(got["messages"])
                completed = await client.complete(
                    ref=t.PromptReference(name="weather_summary"),
                    argument=t.CompleteRequestParamsArgument(name="city", value="O"),
                )
                assert plain(completed)["completion"]["values"] == ["Oslo", "Osaka"]
                for bad in ("forecast", "nobody_forecast", "weather_"):
                    with pytest.raises(McpError) as refused:
                        await client.call_tool(name=bad, arguments={})
                    assert refused.value.code == INVALID_PARAMS and bad in refused.value.message
                with pytest.raises(McpError):
                    await client.read_resource(uri="docs://guide")

    run(scenario())


def test_tools_left_out_of_a_mount_are_neither_listed_nor_called() -> None:
    async def scenario() -> None:
        only = Mount(Upstream(name="weather", server=weather()), tools=frozenset({"forecast"}))
        hidden = Mount(Upstream(name="files", server=files()), hidden_tools=frozenset({"forecast"}))
        async with Proxy([only, hidden]) as proxy:
            async with connect(proxy.server) as client:
                assert names(await client.list_tools(), "tools") == ["weather_forecast"]
                for left_out in ("weather_alerts", "files_forecast"):
                    with pytest.raises(McpError) as refused:
                        await client.call_tool(name=left_out, arguments={})
                    assert refused.value.code == INVALID_PARAMS

    run(scenario())


def test_a_long_merged_list_is_served_in_pages() -> None:
    """160 tools from two upstreams (one paging its own list) in pages of 100."""

    def many(name: str, count: int) -> App:
        app = App(name, binding=stubs, page_size=30)
        for n in range(count):
            app.add_tool(lambda: "ok", name=f"t{n}")
        return app

    async def scenario() -> None:
        ups = [Upstream(name="a", server=many("a", 150)), Upstream(name="b", server=many("b", 10))]
        async with Proxy(ups, page_size=100) as proxy:
            async with connect(proxy.server) as client:
                first = plain(await client.list_tools())
                assert len(first["tools"]) == 100 and first["nextCursor"]
                second = plain(await client.list_tools(cursor=first["nextCursor"]))
                assert len(second["tools"]) == 60 and "nextCursor" not in second
                every = [tool["name"] for tool in first["tools"] + second["tools"]]
                assert every[:2] == ["a_t0", "a_t1"] and every[-1] == "b_t9"

    run(scenario())


@pytest.mark.parametrize("down", ["legacy", "auto"])
def test_a_mounted_upstreams_changes_come_back_under_its_prefix(down: Mode) -> None:
    class Hearing(c.ClientHandlers):
        def __init__(self) -> None:
            self.heard: list[str] = []

        async def on_resource_updated(self, params: t.ResourceUpdatedNotificationParams) -> None:
            self.heard.append(params.uri)

        async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
            self.heard.append("tools")

    async def scenario() -> None:
        sky, handlers = weather(), Hearing()
        ups = [Upstream(name="weather", server=sky), Upstream(name="files", server=files())]
        async with Proxy(ups) as proxy:
            async with connect(proxy.server, mode=down, handlers=handlers) as client:
                listening = None
                if down == "legacy":
                    await client.session.request(
                        "resources/subscribe", {"uri": "docs://weather/guide"}
                    )
                else:
                    wanted = {
                        "toolsListChanged": True,
                        "resourceSubscriptions": ["docs://weather/guide"],
                    }
                    listening = asyncio.create_task(
                        client.session.session.request(
                            "subscriptions/listen", {"notifications": wanted}, timeout=60
                        )
                    )
                for _ in range(100):
                    links = proxy.pools[0].shared_links()
                    if any("docs://guide" in link.subscriptions for link in links):
                        break
                    await asyncio.sleep(0.02)
                await sky.resource_updated("docs://guide")
                sky.add_tool(lambda: "new", name="new")
                for _ in range(100):
                    if len(handlers.heard) >= 2:
                        break
                    await asyncio.sleep(0.02)
                assert sorted(handlers.heard) == ["docs://weather/guide", "tools"]
                if listening is not None:
                    listening.cancel()

    run(scenario())


@pytest.mark.parametrize(
    ("prefixes", "said"),
    [
        (("svc", "svc"), "both mounted at 'svc'"),
        (("svc", "svc_admin"), "claim each other's names"),
        (("", "other"), "claim each other's names"),
    ],
)
def test_mounts_whose_names_could_be_confused_are_refused_at_start(
    prefixes: tuple[str, str], said: str
) -> None:
    mounts = [
        Mount(Upstream(name=f"up{n}", server=files()), prefix=prefix)
        for n, prefix in enumerate(prefixes)
    ]
    with pytest.raises(ValueError, match=said):
        Proxy(mounts)
