"""Tools from typed Python functions: schemas derived, arguments validated, results shaped.

A function's parameters become a msgspec Struct, so one ``msgspec.convert`` validates and
converts a call's arguments at C speed, and ``msgspec.json.schema`` gives the tool's
``inputSchema`` (JSON Schema 2020-12, ``$defs`` kept). Its return annotation decides the
result: ``str`` is text; content (and :mod:`runtime.app.content` helpers) goes out as it is;
anything else is ``structuredContent`` (scalars and lists wrapped in ``{"result": ...}``)
described by an ``outputSchema``, with a text block of the same JSON for older clients.
"""

from __future__ import annotations

import inspect
import logging
import types as types_module
from types import CoroutineType
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec

from . import content as helpers
from .docstrings import parse
from ..core.errors import INVALID_PARAMS, McpError, McpgenError, RequestTimeout
from ..core.modern import InputRequired
from ..aio.at_once import WAITS, at_once
from ..core.json_values import as_array, listed
from .schemas import (
    JSON_TYPES,
    RegistrationError,
    Signature,
    carried,
    awaitable,
    call,
    label,
    leaves,
    name_of,
    options_of,
    object_schema,
    type_hints,
    type_text,
    unsupported,
)

log = logging.getLogger("mcpgen.runtime.app.app")

#: From this protocol version on, arguments that fail validation are a tool execution
#: error (a result with ``isError``, which the model can read and correct) rather than a
#: JSON-RPC -32602 (SEP-1303). Later versions, whatever their names, sort after it.
INPUT_ERRORS_AS_RESULTS = "2025-11-25"
#: What ``task=`` may say of a tool (``execution.taskSupport``).
TASK_SUPPORT = ("forbidden", "optional", "required")


class ToolError(McpgenError):
    """Raise in a tool to answer with a tool execution error (``isError``) saying this."""


class Output(msgspec.Struct, frozen=True):
    """How a tool's return value becomes its result."""

    #: "text", "content", "structured", "none" or "dynamic" (decided by the value).
    kind: str
    #: The type the value is checked against (structured), wrapped or not.
    check: Any = None
    wrap: bool = False
    schema: dict[str, Any] | None = None


def _is_content(tp: Any, types: Any, nested: bool = False) -> bool:
    """Whether ``tp`` is content (a block, a list of blocks, a helper, a whole result);
    among other content, ``str`` is a text block."""
    origin = typing.get_origin(tp)
    if origin in (list, typing.Union, types_module.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return bool(args) and all(_is_content(a, types, True) for a in args)
    if tp is str:
        return nested
    blocks = (*typing.get_args(types.ContentBlock), types.CallToolResult)
    return isinstance(tp, type) and issubclass(tp, (*blocks, *helpers.Helper))


def output_of(returns: Any, types: Any, name: str, what: str = "tool") -> Output:
    """What a return annotation makes of a tool's results (``what``: the tool, as a
    :class:`RegistrationError` names it when the annotation is no result)."""
    if returns is inspect.Signature.empty or returns is Any:
        return Output("dynamic")
    if returns is None or returns is type(None):
        return Output("none")
    if returns is str:
        return Output("text")
    if _is_content(returns, types):
        return Output("content")
    bad = unsupported(returns)
    fix = (
        "return str (text), content (Image, Audio, File, the version's content blocks, or "
        f"a list of them) or data ({JSON_TYPES}), converting other values in the function"
    )
    if bad is not None:
        raise RegistrationError(f"{what}: {carried('its result', returns, bad)}; {fix}")
    if any(_is_content(leaf, types, True) for leaf in leaves(returns)):
        raise RegistrationError(
            f"{what}: its result is typed {type_text(returns)}, content mixed with data; {fix}, "
            "not one or the other"
        )
    info = msgspec.inspect.type_info(returns)
    wrap = not isinstance(
        info,
        (
            msgspec.inspect.StructType,
            msgspec.inspect.DataclassType,
            msgspec.inspect.TypedDictType,
            msgspec.inspect.DictType,
        ),
    )
    check = msgspec.defstruct(f"{name}Output", [("result", returns)]) if wrap else returns
    return Output("structured", check, wrap, object_schema(check))


class RegisteredTool:
    """One tool: its listing and how to call it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        types: Any,
        context_type: type | None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        blocking: bool = False,
        execution: Mapping[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        task: str | None = None,
        immediate_ms: int | None = None,
    ) -> None:
        self.name = name_of(fn, "tool", name)
        what = label("tool", self.name, fn)
        if task is not None:
            if task not in TASK_SUPPORT:
                raise RegistrationError(
                    f"{what}: task must be one of {', '.join(TASK_SUPPORT)}, not {task!r}"
                )
            execution = {**(execution or {}), "taskSupport": task}
        #: Whether it runs as a task: "forbidden" (never), "optional" or "required", and
        #: how long a modern call runs before it becomes one (None: ``Tasks.immediate_ms``).
        self.task_support = str((execution or {}).get("taskSupport", "forbidden"))
        if immediate_ms is not None and immediate_ms < 0:
            raise RegistrationError(f"{what}: immediate_ms must not be negative")
        self.immediate_ms = immediate_ms
        self.fn = fn
        self.blocking = blocking
        doc = parse(fn.__doc__)
        arguments_name = f"{_pascal(self.name)}Arguments"
        self.signature = Signature.of(fn, arguments_name, doc, context_type, what)
        hints = type_hints(fn, what)
        returns = hints.get("return", inspect.signature(fn).return_annotation)
        self.output = output_of(returns, types, _pascal(self.name), what)
        schema = dict(input_schema) if input_schema is not None else self.signature.schema
        listing: dict[str, Any] = {"name": self.name, "inputSchema": schema}
        for key, value in (
            ("title", title),
            ("description", description or doc.summary),
            ("outputSchema", self.output.schema),
            ("annotations", dict(annotations) if annotations else None),
            ("icons", [dict(i) for i in icons] if icons else None),
            ("_meta", dict(meta) if meta else None),
            ("execution", dict(execution) if execution else None),
        ):
            if value is not None:
                listing[key] = value
        self.definition = types.convert(listing, types.Tool)
        self.types = types
        structured = getattr(types.CallToolResult, "__struct_fields__", ())
        self._structured = "structured_content" in structured

    # -- calling ------------------------------------------------------------------------

    def call(self, arguments: Any, ctx: Any) -> Awaitable[Any]:
        """The tool's result for ``arguments``, or a tool execution error, to await. A
        function that is not ``blocking`` is called here and now, and an async one whose
        code cannot suspend (no ``await``) is run to its end here too: what it gave is
        awaited with nothing to wait for, so a session runs such a call where it read the
        request, without a task. A blocking one is called in a thread when awaited."""
        if self.blocking:
            return self._in_thread(arguments, ctx)
        try:
            kwargs = self.signature.arguments(arguments, ctx)
        except msgspec.ValidationError as exc:
            return _given(self._invalid(str(exc), ctx))
        try:
            value = self.fn(**kwargs)
            if value.__class__ is CoroutineType:
                done = at_once(value)
                if done is not WAITS:
                    value = done
        except Exception as exc:
            return _given(self._failure(exc))
        if awaitable(value):  # an async function that may suspend
            return self._awaited(value)
        return _given(self.result(value))

    async def _in_thread(self, arguments: Any, ctx: Any) -> Any:
        try:
            kwargs = self.signature.arguments(arguments, ctx)
        except msgspec.ValidationError as exc:
            return self._invalid(str(exc), ctx)
        try:
            value = await call(self.fn, kwargs, True)
        except Exception as exc:
            return self._failure(exc)
        return self.result(value)

    async def _awaited(self, pending: Awaitable[Any]) -> Any:
        try:
            value = await pending
        except Exception as exc:
            return self._failure(exc)
        return self.result(value)

    def _failure(self, exc: Exception) -> Any:
        """The result the tool's ``exc`` gives (a tool execution error); raised again when
        it is the protocol's own answer. Called where it was caught."""
        if isinstance(exc, ToolError):
            return self.error(str(exc))
        if isinstance(exc, (McpError, InputRequired)):  # not the tool's: the protocol's
            raise exc
        if isinstance(exc, RequestTimeout):  # it asked the client (elicit, sample, …)
            log.warning("tool %r: %s", self.name, exc)
            return self.error(f"Tool {self.name!r} gave up: {exc}")
        log.exception("tool %r failed", self.name)
        return self.error(f"Internal error in tool {self.name!r}")

    def _invalid(self, detail: str, ctx: Any) -> Any:
        message = f"Invalid arguments for tool {self.name!r}: {detail}"
        version = getattr(ctx, "protocol_version", "") or ""
        if version >= INPUT_ERRORS_AS_RESULTS:
            return self.error(message)
        raise McpError(INVALID_PARAMS, message, {"tool": self.name, "detail": detail})

    def error(self, text: str) -> Any:
        types = self.types
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

    def result(self, value: Any) -> Any:
        """``value`` (what the function returned) as this version's ``CallToolResult``."""
        types = self.types
        output = self.output
        kind = output.kind
        if kind == "dynamic":
            kind = _kind_of(value, types)
        if kind == "text":
            return types.CallToolResult(content=[types.TextContent(text=str(value))])
        # An outputSchema promises structured content, even for a None it allows.
        if kind == "none" or (value is None and kind != "structured"):
            return types.CallToolResult(content=[])
        if kind == "content":
            return self._content(value)
        if kind == "json":  # unannotated and not content: its JSON, as text
            try:
                text = msgspec.json.encode(value).decode()
            except (TypeError, ValueError, OverflowError) as exc:  # a value JSON cannot say
                log.error("tool %r returned a value with no JSON: %s", self.name, exc)
                return self.error(f"Internal error in tool {self.name!r}: invalid output")
            return types.CallToolResult(content=[types.TextContent(text=text)])
        structured = {"result": value} if output.wrap else value
        try:
            plain = msgspec.to_builtins(
                msgspec.convert(structured, output.check, from_attributes=True)
            )
        except (msgspec.ValidationError, TypeError) as exc:  # TypeError: no JSON for an Any
            log.error("tool %r returned a value its outputSchema refuses: %s", self.name, exc)
            return self.error(f"Internal error in tool {self.name!r}: invalid output")
        text = types.TextContent(text=msgspec.json.encode(plain).decode())
        if not self._structured:
            return types.CallToolResult(content=[text])
        return types.CallToolResult(content=[text], structured_content=plain)

    def _content(self, value: Any) -> Any:
        types = self.types
        if isinstance(value, types.CallToolResult):
            return value
        items = listed(value)
        blocks: list[Any] = []
        for item in items:
            if isinstance(item, str):
                blocks.append(types.TextContent(text=item))
            elif isinstance(item, helpers.Helper):
                uri = f"mcp-tool://{self.name}/output"
                blocks.append(types.convert(helpers.block(item, uri), types.ContentBlock))
            else:
                blocks.append(item)
        return types.CallToolResult(content=blocks)


async def _given(value: Any) -> Any:
    """``value``, to await: a coroutine with nothing to wait for."""
    return value


def _kind_of(value: Any, types: Any) -> str:
    """How an unannotated tool's value goes out."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return "text"
    if _is_content(type(value), types) or (
        bool(listed := as_array(value)) and all(_is_content(type(v), types) for v in listed or ())
    ):
        return "content"
    return "json"


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_"))


OPTIONS = options_of(RegisteredTool)

__all__ = ["INPUT_ERRORS_AS_RESULTS", "OPTIONS", "RegisteredTool", "ToolError"]
