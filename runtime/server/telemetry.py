"""OpenTelemetry for a server: a span and a duration per request, as middleware
(``runtime.aio.middleware``), plus what the transports hold as gauges; and for a client
(``ClientSession(telemetry=...)``), a span per request whose trace context goes with it.

Why OpenTelemetry rather than a Prometheus text endpoint: one API carries both traces and
metrics, the official SDKs speak it (W3C trace context in ``params._meta``: a client's
span is the parent of the server's), and the application chooses where it goes (OTLP,
Prometheus through ``opentelemetry-exporter-prometheus``, a console) by configuring the
OpenTelemetry SDK as it would for anything else. Without the ``otel`` extra, or with the
middleware not added, nothing here runs: a server pays nothing.

What is recorded follows OpenTelemetry's MCP semantic conventions:

* a ``SERVER`` span per request, named ``{method} {tool or prompt}``, with
  ``mcp.method.name``, ``mcp.protocol.version``, ``jsonrpc.request.id``, for a call
  ``gen_ai.operation.name`` (``execute_tool``) and ``gen_ai.tool.name``; a failure sets
  ``error.type`` (the JSON-RPC code, ``tool_error`` for a result with ``isError``, or the
  exception's type) and the span's status;
* ``mcp.server.operation.duration`` (histogram, seconds) with the same method, tool and
  ``error.type`` attributes: its count is the calls, those with ``error.type`` the errors;
* gauges a transport registers (:meth:`Telemetry.gauge`): ``mcpgen.http.sessions``,
  ``mcpgen.http.streams``, ``mcpgen.tasks.running``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any

import msgspec

try:
    from opentelemetry import metrics, propagate, trace
    from opentelemetry.context import Context
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.trace import SpanKind, StatusCode
except ImportError as missing:  # pragma: no cover - exercised without the extra installed
    raise ImportError("Telemetry needs OpenTelemetry: pip install 'mcpgen[otel]'") from missing

from ..aio.middleware import Call, Next
from ..core.errors import McpError

#: The instrumentation's name, as traces and metrics name where they come from.
SCOPE = "mcpgen"
TRACE_KEYS = ("traceparent", "tracestate", "baggage")


class _Meta(msgspec.Struct):
    meta: dict[str, Any] = msgspec.field(default_factory=dict[str, Any], name="_meta")


_raw_meta = msgspec.json.Decoder(_Meta).decode


class Telemetry:
    """Traces and metrics of a server's requests: ``server.use(Telemetry())`` (or
    ``App(telemetry=True)``). ``tracer_provider`` and ``meter_provider`` default to the
    global ones the application configured."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        self.meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.duration = self.meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="How long the server took to answer a request",
        )

    def gauge(self, name: str, read: Callable[[], int], description: str) -> None:
        """Report ``read()`` as the gauge ``name`` at each collection."""

        def observe(options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(read())]

        self.meter.create_observable_gauge(name, [observe], description=description)

    @contextlib.contextmanager
    def client_span(self, method: str, params: Any) -> Generator[dict[str, str], None, None]:
        """A CLIENT span around one request a client sends (``ClientSession(telemetry=)``),
        and the trace context to put in its ``_meta`` (W3C ``traceparent``), so that the
        server's span is its child."""
        name = _target(method, params)
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if name is not None:
            attributes[TARGETED[method]] = name
        with self.tracer.start_as_current_span(
            f"{method} {name}" if name is not None else method,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            try:
                yield carrier
            except McpError as exc:
                span.set_attribute("error.type", str(exc.code))
                span.set_status(StatusCode.ERROR, exc.message)
                raise
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR, str(exc))
                raise

    async def __call__(self, call: Call, call_next: Next) -> Any:
        method = call.method
        target = _target(method, call.params)
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if target is not None:
            attributes[TARGETED[method]] = target
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
        span_attributes = {
            **attributes,
            "mcp.protocol.version": call.protocol_version,
            "jsonrpc.request.id": str(call.request_id),
        }
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            f"{method} {target}" if target is not None else method,
            kind=SpanKind.SERVER,
            attributes=span_attributes,
            context=parent_of(call.meta, call.event.raw_params),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            error: str | None = None
            try:
                result = await call_next(call)
                if _is_error(result):
                    error = "tool_error"
                    span.set_status(StatusCode.ERROR)
                return result
            except McpError as exc:
                error = str(exc.code)
                span.set_attribute("rpc.response.status_code", error)
                span.set_status(StatusCode.ERROR, exc.message)
                raise
            except BaseException as exc:
                error = type(exc).__qualname__
                span.record_exception(exc)
                span.set_status(StatusCode.ERROR, str(exc))
                raise
            finally:
                if error is not None:
                    span.set_attribute("error.type", error)
                    attributes["error.type"] = error
                self.duration.record(time.perf_counter() - started, attributes)


#: The methods whose span names their target, and the attribute that holds it.
TARGETED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}


def parent_of(meta: Mapping[str, Any], raw: msgspec.Raw | None) -> Context | None:
    """The trace context a client put in the request's ``_meta`` (W3C ``traceparent``,
    ``tracestate``), as the official SDKs do; None without a valid one (the span then
    nests under whatever is current)."""
    carrier = {k: meta[k] for k in TRACE_KEYS if isinstance(meta.get(k), str)}
    if not carrier and raw is not None:
        try:
            found = _raw_meta(raw).meta
        except (msgspec.DecodeError, msgspec.ValidationError):
            found = {}
        carrier = {k: found[k] for k in TRACE_KEYS if isinstance(found.get(k), str)}
    if "traceparent" not in carrier:
        return None
    context = propagate.extract(carrier)
    if not trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context


def _target(method: str, params: Any) -> str | None:
    """The tool or prompt a request names (None for other methods)."""
    if method not in TARGETED:
        return None
    name: object = getattr(params, "name", None)
    if name is None and isinstance(params, Mapping):
        plain: Mapping[str, object] = params  # pyright: ignore[reportUnknownVariableType]
        name = plain.get("name")
    return name if isinstance(name, str) else None


def _is_error(result: Any) -> bool:
    """A tool's result that is an error (``isError``), however it is typed."""
    flagged: object = getattr(result, "is_error", None)
    if flagged is None and isinstance(result, Mapping):
        plain: Mapping[str, object] = result  # pyright: ignore[reportUnknownVariableType]
        flagged = plain.get("isError")
    return flagged is True


__all__ = ["SCOPE", "TARGETED", "Telemetry", "parent_of"]
