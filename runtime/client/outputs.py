"""Typed tool results: a ``tools/call`` result's ``structuredContent`` checked against the
``outputSchema`` the server listed for the tool, and converted to the caller's type.

The 2025-06-18 revision and later say a tool that declares an ``outputSchema`` MUST return
structured content conforming to it, and clients SHOULD validate it. A session's
:class:`ToolOutputs` learns each tool's schema from every ``tools/list`` answer (a call of a
tool never listed lists the tools once, every page, to learn it), compiles it with
``jsonschema`` (the ``validate`` extra) and checks each successful result: ``"error"``
raises :class:`OutputValidationError`, ``"warn"`` logs it, ``"off"`` checks nothing.

A server's schema is untrusted input: one that is no valid JSON Schema, nested deeper than
``MAX_SCHEMA_DEPTH``, larger than ``MAX_SCHEMA_NODES``, recursing without end or with a
``$ref`` outside itself (nothing is ever fetched) is a mismatch of the tool's results, named
as such, and the session goes on. Compiled validators are kept for the
``MAX_VALIDATORS`` tools called most recently, each until the tool is listed with another
schema.

:func:`call_tool_as` is the typed call: the result's structured content converted by
``msgspec.convert`` to a Struct, dataclass, TypedDict or builtin type (a tool returning a
scalar or a list has it wrapped as ``{"result": ...}``, the way servers wrap it).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
import typing
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET

from ..core.errors import INVALID_PARAMS, McpError, McpgenError
from ..core.json_values import as_array, as_object, member
from ..core.tool_headers import CALL_TOOL

log = logging.getLogger("mcpgen.runtime.client.outputs")
T = TypeVar("T")

#: What a session does with a result its tool's ``outputSchema`` refuses.
OutputValidation = Literal["error", "warn", "off"]
MODES: tuple[OutputValidation, ...] = ("error", "warn", "off")
#: Bounds on a server's ``outputSchema``: JSON nesting, and values in all (checking a
#: schema against its metaschema costs about 70 µs a value here: 10,000 take 0.7 s).
MAX_SCHEMA_DEPTH = 64
MAX_SCHEMA_NODES = 10_000
#: Compiled validators kept, for the tools called most recently.
MAX_VALIDATORS = 128
#: What to install when ``jsonschema`` is missing.
EXTRA = "pip install 'mcpgen[validate]'"
_AT = re.compile(r"^(.*) - at `(\$[^`]*)`$", re.DOTALL)


class OutputValidationError(McpError):
    """A tool's result that its ``outputSchema`` refuses (or that cannot be checked against
    it, or converted to the type asked for): which ``tool``, where (``path``, a JSON path
    such as ``$.items[2].price``, in the result or, for a schema that is no schema, in the
    schema) and why (``reason``). ``result`` is the result itself, when there is one.
    Its code is -32602, as the official TypeScript SDK's client raises for it."""

    def __init__(self, tool: str, reason: str, path: str = "$", result: Any = None) -> None:
        where = f" at {path}" if path != "$" else ""
        super().__init__(
            INVALID_PARAMS,
            f"tool {tool!r}: {reason}{where}",
            {"tool": tool, "path": path, "reason": reason},
        )
        self.tool = tool
        self.path = path
        self.reason = reason
        self.result = result


class ToolCallFailed(McpgenError):
    """:func:`call_tool_as` got a tool execution error (``isError``): its text, and the
    result itself."""

    def __init__(self, tool: str, text: str, result: Any) -> None:
        super().__init__(f"tool {tool!r} failed: {text}" if text else f"tool {tool!r} failed")
        self.tool = tool
        self.text = text
        self.result = result


class _Kit:
    """What is used of ``jsonschema`` and ``referencing`` (loaded on first use)."""

    def __init__(self) -> None:
        validators: Any = importlib.import_module("jsonschema.validators")
        exceptions: Any = importlib.import_module("jsonschema.exceptions")
        referencing: Any = importlib.import_module("referencing")
        unresolvable: Any = importlib.import_module("referencing.exceptions")
        self.validator_for: Any = validators.validator_for
        self.default: Any = validators.Draft202012Validator
        self.best_match: Any = exceptions.best_match
        self.schema_error: type[Exception] = exceptions.SchemaError
        self.unresolvable: type[Exception] = unresolvable.Unresolvable
        #: Resolves references within the schema (and the bundled metaschemas) only:
        #: retrieving any other URI fails, so nothing is ever fetched.
        self.registry: Any = referencing.Registry()


_kit: _Kit | None = None
_missing_told = False


def _jsonschema() -> _Kit | None:
    """``jsonschema``, or None (said once) when it is not installed."""
    global _kit, _missing_told
    if _kit is None:
        try:
            _kit = _Kit()
        except ImportError:
            if not _missing_told:
                _missing_told = True
                log.warning(
                    "tool results are not checked against their outputSchema: jsonschema"
                    " is not installed (%s)",
                    EXTRA,
                )
            return None
    return _kit


@dataclass
class _Compiled:
    schema: Any  # as listed
    validator: Any = None
    problem: OutputValidationError | None = None


@dataclass(frozen=True)
class _Result:
    """What is checked of a ``tools/call`` result."""

    is_error: bool
    has_structured: bool
    structured: Any


def _result_fields(answer: Any) -> _Result | None:
    """A ``CallToolResult``'s fields (typed, or plain JSON); None for anything else (the
    handle of a task the server made of the call)."""
    plain = as_object(answer)
    if plain is not None:
        if "content" not in plain and "structuredContent" not in plain:
            return None
        return _Result(
            plain.get("isError") is True,
            "structuredContent" in plain,
            plain.get("structuredContent"),
        )
    if not hasattr(answer, "content"):
        return None
    structured = getattr(answer, "structured_content", UNSET)
    return _Result(getattr(answer, "is_error", UNSET) is True, structured is not UNSET, structured)


def _text_of(answer: Any) -> str:
    blocks = as_array(member(answer, "content")) or as_array(getattr(answer, "content", None))
    texts = [member(b, "text") or getattr(b, "text", None) for b in blocks or ()]
    return " ".join(t for t in texts if isinstance(t, str))


def _name_of(params: Any) -> Any:
    return member(params, "name") or getattr(params, "name", None)


def _size_problem(schema: Any) -> str | None:
    """Why ``schema`` is too deep or too large to compile, walked without recursion."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_NODES:
            return f"its outputSchema is too large (over {MAX_SCHEMA_NODES} values)"
        if depth > MAX_SCHEMA_DEPTH:
            return f"its outputSchema is nested too deep (over {MAX_SCHEMA_DEPTH} levels)"
        items = as_object(value)
        children = items.values() if items is not None else as_array(value) or ()
        stack.extend((child, depth + 1) for child in children)
    return None


def _compile(tool: str, listed: Any, kit: _Kit) -> _Compiled:
    """A validator of ``listed`` (the tool's ``outputSchema``), or why there is none."""
    compiled = _Compiled(listed)
    schema = msgspec.to_builtins(listed)
    if not isinstance(schema, (dict, bool)):
        reason = "its outputSchema is not a JSON Schema (neither an object nor a boolean)"
        compiled.problem = OutputValidationError(tool, reason)
        return compiled
    too_big = _size_problem(schema)
    if too_big is not None:
        compiled.problem = OutputValidationError(tool, too_big)
        return compiled
    try:
        cls = kit.validator_for(schema, default=kit.default)
        cls.check_schema(schema)
        compiled.validator = cls(schema, registry=kit.registry)
    except kit.schema_error as exc:
        reason = f"its outputSchema is not a valid JSON Schema: {getattr(exc, 'message', exc)}"
        path = str(getattr(exc, "json_path", "$"))
        compiled.problem = OutputValidationError(tool, reason, f"outputSchema{path[1:]}")
    except RecursionError:
        compiled.problem = OutputValidationError(tool, "its outputSchema recurses too deep")
    except Exception as exc:  # a hostile schema may break the library in other ways
        compiled.problem = OutputValidationError(tool, f"its outputSchema cannot be used: {exc}")
    return compiled


def _mismatch(
    tool: str, compiled: _Compiled, instance: Any, kit: _Kit
) -> OutputValidationError | None:
    """Why ``instance`` does not conform to the tool's schema, or None when it does."""
    try:
        error = kit.best_match(compiled.validator.iter_errors(instance))
    except kit.unresolvable as exc:
        reason = f"its outputSchema has a $ref that does not resolve within it ({exc}); nothing is fetched"
        return OutputValidationError(tool, reason)
    except RecursionError:
        return OutputValidationError(tool, "its outputSchema recurses without end (a $ref cycle)")
    except Exception as exc:
        return OutputValidationError(tool, f"its outputSchema cannot be applied: {exc}")
    if error is None:
        return None
    message = str(getattr(error, "message", error))
    if len(message) > 500:
        message = message[:500] + "…"
    reason = f"structuredContent does not match the outputSchema: {message}"
    return OutputValidationError(tool, reason, str(getattr(error, "json_path", "$")))


class ToolOutputs:
    """The ``outputSchema`` of each tool a server listed, and the checks of results against
    them, for one :class:`~runtime.client.session.ClientSession` (its ``outputs``)."""

    def __init__(
        self, mode: OutputValidation = "error", max_validators: int = MAX_VALIDATORS
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"output_validation must be one of {', '.join(MODES)}, not {mode!r}")
        if max_validators < 1:
            raise ValueError(f"max_validators must be positive, got {max_validators}")
        self.mode: OutputValidation = mode
        self.max_validators = max_validators
        #: Each listed tool's ``outputSchema`` (None: it declares none), by name.
        self.schemas: dict[str, Any] = {}
        #: Whether every page of the tool list was read since the list last changed.
        self.complete = False
        self._from_start = False
        self._compiled: OrderedDict[str, _Compiled] = OrderedDict()
        self._learning = asyncio.Lock()

    # -- what the session tells ---------------------------------------------------------------

    def listed(self, params: Any, page: Any) -> None:
        """A ``tools/list`` answer: its first page (no cursor) starts the list anew."""
        cursor = member(params, "cursor") or getattr(params, "cursor", None)
        if not isinstance(cursor, str) or not cursor:
            self.schemas = {}
            self.complete = False
            self._from_start = True
        plain = as_object(page)
        tools = as_array(plain.get("tools") if plain is not None else getattr(page, "tools", None))
        for tool in tools or ():
            fields = as_object(tool)
            if fields is not None:
                name, schema = fields.get("name"), fields.get("outputSchema")
            else:
                name, schema = getattr(tool, "name", None), getattr(tool, "output_schema", None)
            if isinstance(name, str):
                self.schemas[name] = None if schema is UNSET else schema
        following = (
            plain.get("nextCursor") if plain is not None else getattr(page, "next_cursor", None)
        )
        if (not isinstance(following, str) or not following) and self._from_start:
            self.complete = True  # every page, from the first on

    def changed(self) -> None:
        """The server's tools changed (``notifications/tools/list_changed``): the next call
        lists them again."""
        self.schemas = {}
        self.complete = self._from_start = False

    # -- checking -----------------------------------------------------------------------------

    async def check(self, params: Any, answer: Any, relist: Callable[[], Awaitable[None]]) -> None:
        """Check a ``tools/call`` ``answer`` against its tool's ``outputSchema`` (listing the
        tools first with ``relist`` when the tool was never listed), as ``mode`` says."""
        if self.mode == "off":
            return
        result = _result_fields(answer)
        tool = _name_of(params)
        if result is None or result.is_error or not isinstance(tool, str):
            return
        kit = _jsonschema()
        if kit is None:
            return
        if tool not in self.schemas and not self.complete:
            await self._learn(tool, relist)
        problem = self.problem(tool, result, kit)
        if problem is not None:
            problem.result = answer
            self._refuse(problem)

    async def _learn(self, tool: str, relist: Callable[[], Awaitable[None]]) -> None:
        """List the tools to learn their schemas, once until the list changes: even when
        the pages did not end, or the listing failed (then ``tool``'s results are not
        checked, as those of a tool the server does not list)."""
        async with self._learning:
            if self.complete:
                return  # another call listed them meanwhile
            try:
                await relist()
            except McpgenError as exc:
                log.warning(
                    "the results of tool %r are not checked: listing the tools to learn its"
                    " outputSchema failed (%s)",
                    tool,
                    exc,
                )
            self.complete = True

    def problem(self, tool: str, result: _Result, kit: _Kit) -> OutputValidationError | None:
        """Why ``result`` does not conform to ``tool``'s known ``outputSchema``; None when
        it does, or when the tool declares none or is not known."""
        listed = self.schemas.get(tool)
        if listed is None:
            return None
        if not result.has_structured:
            reason = "the result has no structuredContent, though the tool declares an outputSchema"
            return OutputValidationError(tool, reason)
        compiled = self._validator(tool, listed, kit)
        if compiled.problem is not None:
            return OutputValidationError(tool, compiled.problem.reason, compiled.problem.path)
        return _mismatch(tool, compiled, result.structured, kit)

    def _validator(self, tool: str, listed: Any, kit: _Kit) -> _Compiled:
        compiled = self._compiled.get(tool)
        if compiled is not None and (compiled.schema is listed or compiled.schema == listed):
            compiled.schema = listed
            self._compiled.move_to_end(tool)
            return compiled
        compiled = self._compiled[tool] = _compile(tool, listed, kit)
        self._compiled.move_to_end(tool)
        while len(self._compiled) > self.max_validators:
            self._compiled.popitem(last=False)
        return compiled

    def _refuse(self, problem: OutputValidationError) -> None:
        if self.mode == "error":
            raise problem
        log.warning("%s", problem.message)


def _is_object_type(output_type: Any) -> bool:
    """Whether values of ``output_type`` are JSON objects (a server sends other values
    wrapped as ``{"result": ...}``)."""
    if output_type is Any:
        return True
    info = msgspec.inspect.type_info(output_type)
    kinds = (
        msgspec.inspect.StructType,
        msgspec.inspect.DataclassType,
        msgspec.inspect.TypedDictType,
        msgspec.inspect.DictType,
    )
    return isinstance(info, kinds)


def converted(tool: str, answer: Any, output_type: type[T]) -> T:
    """``answer``'s structured content as ``output_type`` (unwrapped from ``{"result":
    ...}`` for a type that is no object); :class:`ToolCallFailed` for an error result,
    :class:`OutputValidationError` when there is nothing to convert or it does not fit."""
    result = _result_fields(answer)
    if result is None:
        raise OutputValidationError(tool, "the answer is not a tool result", result=answer)
    if result.is_error:
        raise ToolCallFailed(tool, _text_of(answer), answer)
    if not result.has_structured:
        raise OutputValidationError(tool, "the result has no structuredContent", result=answer)
    value = result.structured
    wrapped = as_object(value)
    unwrap = wrapped is not None and list(wrapped) == ["result"]
    if unwrap and wrapped is not None and not _is_object_type(output_type):
        value = wrapped["result"]
    else:
        unwrap = False
    try:
        return msgspec.convert(value, output_type)
    except msgspec.ValidationError as exc:
        text = str(exc)
        found = _AT.match(text)
        reason, path = (found.group(1), found.group(2)) if found else (text, "$")
        if unwrap:
            path = "$.result" + path[1:]
        plain = typing.get_origin(output_type) is None
        name = getattr(output_type, "__name__", None) if plain else None
        label = name if isinstance(name, str) else repr(output_type)
        raise OutputValidationError(
            tool, f"structuredContent is no {label}: {reason}", path, answer
        ) from None


async def call_tool_as(
    request: Callable[..., Awaitable[Any]],
    output_type: type[T],
    name: str,
    arguments: Mapping[str, Any] | None = None,
    **options: Any,
) -> T:
    """Call tool ``name`` with ``request`` (a session's) and return its structured content
    as ``output_type``, checked against the tool's ``outputSchema`` first as the session's
    ``output_validation`` says; ``options`` go to ``request`` (``progress``)."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    return converted(name, await request(CALL_TOOL, params, **options), output_type)
