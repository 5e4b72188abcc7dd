"""OpenTelemetry for a server (``runtime.server.telemetry``), read back through the
OpenTelemetry SDK's in-memory exporter and metric reader: a SERVER span per request,
named and attributed as OpenTelemetry's MCP conventions have it, whose parent is the
official Python SDK client's span when that client sends the W3C trace context in
``_meta`` over HTTP; errors marked; the duration histogram counting calls and errors;
the HTTP app's sessions and streams as gauges; garbage trace context ignored, the request
still served; and ``MCPGEN_TELEMETRY`` turning it on, garbage there refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client as SdkClient
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.app.app import TELEMETRY_ENV
from mcpgen.runtime.core.errors import McpError
from mcpgen.runtime.server.telemetry import Telemetry
from support.http_endpoint import Endpoint, open_session, request
from support.http_servers import ThreadedUvicorn

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SPANS = InMemorySpanExporter()
TRACING = TracerProvider()
TRACING.add_span_processor(SimpleSpanProcessor(SPANS))
# The official SDK traces with the global provider: make it ours (once per process).
trace.set_tracer_provider(TRACING)


def app(**options: Any) -> App:
    made = App("traced", binding=stubs, shared=None, **options)

    @made.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @made.tool
    def broken() -> str:
        """Fail as a tool does: an error result."""
        raise ValueError("no good")

    @made.tool
    def refused() -> str:
        """Fail with a protocol error."""
        raise McpError(-32002, "not here")

    return made


class Traced(ThreadedUvicorn):
    """An app with telemetry served by uvicorn, and what reads its metrics."""

    reader: InMemoryMetricReader


@pytest.fixture
def traced() -> Iterator[Traced]:
    SPANS.clear()
    reader = InMemoryMetricReader()
    metering = MeterProvider(metric_readers=[reader])
    telemetry = Telemetry(tracer_provider=TRACING, meter_provider=metering)
    running = Traced(app(telemetry=telemetry).http_app())
    running.reader = reader
    running.start()
    yield running
    running.stop()


def server_spans() -> list[Any]:
    return [s for s in SPANS.get_finished_spans() if s.kind is SpanKind.SERVER]


def metric(traced: Traced, name: str) -> list[Any]:
    data = traced.reader.get_metrics_data()
    assert data is not None
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for found in scope.metrics
        if found.name == name
        for point in found.data.data_points
    ]


def test_the_sdk_clients_span_is_the_parent_of_the_servers_over_http(
    traced: Traced,
) -> None:
    url = f"http://127.0.0.1:{traced.port}/mcp"

    async def calls() -> None:
        async with SdkClient(url, mode="legacy") as client:
            await client.call_tool("add", {"a": 2, "b": 3})

    asyncio.run(asyncio.wait_for(calls(), 30))
    ours = [s for s in server_spans() if s.name == "tools/call add"]
    assert len(ours) == 1, [s.name for s in SPANS.get_finished_spans()]
    span = ours[0]
    theirs = [
        s
        for s in SPANS.get_finished_spans()
        if s.kind is SpanKind.CLIENT and "tools/call" in s.name
    ]
    assert theirs, [s.name for s in SPANS.get_finished_spans()]
    parent, client = span.parent, theirs[0].context
    assert parent is not None and client is not None and span.context is not None
    assert parent.span_id == client.span_id
    assert span.context.trace_id == client.trace_id
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert span.attributes["gen_ai.tool.name"] == "add"
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["mcp.protocol.version"] == "2025-11-25"
    assert span.status.status_code is StatusCode.UNSET


def test_errors_mark_the_span_and_the_histogram_counts_calls_and_errors(
    traced: Traced,
) -> None:
    session = open_session(Endpoint(traced.port), "2025-11-25")
    before = {
        str(p.attributes.get("error.type")): p.count
        for p in metric(traced, "mcp.server.operation.duration")
        if p.attributes.get("gen_ai.tool.name") in ("broken", "refused", "add")
    }
    for name in ("add", "broken", "refused"):
        session.post(request(1, "tools/call", {"name": name, "arguments": {"a": 1, "b": 1}}))
    spans = {s.name: s for s in server_spans()}
    assert spans["tools/call broken"].attributes["error.type"] == "tool_error"
    assert spans["tools/call broken"].status.status_code is StatusCode.ERROR
    assert spans["tools/call refused"].attributes["error.type"] == "-32002"
    assert "error.type" not in spans["tools/call add"].attributes
    after = {
        str(p.attributes.get("error.type")): p.count
        for p in metric(traced, "mcp.server.operation.duration")
        if p.attributes.get("gen_ai.tool.name") in ("broken", "refused", "add")
    }
    grew = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    assert grew == {"None": 1, "tool_error": 1, "-32002": 1}, grew


def test_the_http_apps_sessions_and_streams_are_gauges(traced: Traced) -> None:
    session = open_session(Endpoint(traced.port), "2025-11-25")
    with session.stream(None, method="GET") as response:
        assert response.status_code == 200
        sessions = [p.value for p in metric(traced, "mcpgen.http.sessions")]
        streams = [p.value for p in metric(traced, "mcpgen.http.streams")]
    assert sessions and sessions[-1] >= 1
    assert streams and streams[-1] >= 1


@pytest.mark.parametrize(
    "meta",
    [
        {"traceparent": "garbage"},
        {"traceparent": 5},
        {"traceparent": "00-" + "0" * 32 + "-" + "0" * 16 + "-01"},
        {"traceparent": "x" * 10_000, "tracestate": ["no"]},
    ],
)
def test_garbage_trace_context_is_ignored_and_the_request_served(
    traced: Traced, meta: dict[str, Any]
) -> None:
    session = open_session(Endpoint(traced.port), "2025-11-25")
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}
    answered = session.post(request(2, "tools/call", params))
    assert answered.status_code == 200 and '"result":3' in answered.text.replace(" ", "")
    span = next(s for s in reversed(server_spans()) if s.name == "tools/call add")
    assert span.parent is None  # a root, not a child of nonsense
    assert httpx.get(f"http://127.0.0.1:{traced.port}/readyz").status_code == 200


def test_the_environment_turns_it_on_and_garbage_there_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TELEMETRY_ENV, "1")
    assert any(isinstance(m, Telemetry) for m in app().server.middleware.items)
    monkeypatch.setenv(TELEMETRY_ENV, "0")
    assert not any(isinstance(m, Telemetry) for m in app().server.middleware.items)
    monkeypatch.setenv(TELEMETRY_ENV, "maybe")
    with pytest.raises(ValueError, match=TELEMETRY_ENV):
        app()
    monkeypatch.delenv(TELEMETRY_ENV)
    assert not app().server.middleware.items  # off: nothing on the path


def test_our_clients_span_is_the_parent_of_the_official_sdk_servers() -> None:
    """Our client with telemetry, calling the official SDK's server (which traces by
    default) over HTTP: its server span is the child of our client span."""
    from peers.sdk_http_server import server as sdk_server

    from mcpgen.generated.v2025_11_25 import client as c
    from mcpgen.runtime.client import http_client

    SPANS.clear()
    running = ThreadedUvicorn(
        sdk_server.streamable_http_app(stateless_http=False, json_response=False)
    )
    running.start()
    try:
        url = f"http://127.0.0.1:{running.port}/mcp"
        telemetry = Telemetry(tracer_provider=TRACING)

        async def call() -> None:
            async with http_client(c.Client, url, mode="legacy", telemetry=telemetry) as client:
                await client.call_tool(name="echo", arguments={"text": "hi"})

        asyncio.run(asyncio.wait_for(call(), 30))
    finally:
        running.stop()
    finished = SPANS.get_finished_spans()
    ours = [s for s in finished if s.kind is SpanKind.CLIENT and s.name == "tools/call echo"]
    theirs = [s for s in finished if s.kind is SpanKind.SERVER and "tools/call" in s.name]
    assert len(ours) == 1 and theirs, [(s.name, s.kind) for s in finished]
    parent, mine = theirs[0].parent, ours[0].context
    assert parent is not None and mine is not None
    assert parent.span_id == mine.span_id and parent.trace_id == mine.trace_id
