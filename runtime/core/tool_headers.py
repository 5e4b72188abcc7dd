"""``x-mcp-header``: tool arguments mirrored into ``Mcp-Param-*`` HTTP headers.

A tool's input schema may mark a property with ``"x-mcp-header": "Name"``; a client on
HTTP then sends the argument's value as ``Mcp-Param-Name``. Annotations must be a valid
header token, unique regardless of case, on a string, integer or boolean property reached
from the root through ``properties`` only; tools that break this are dropped.

A server checks each call against its own tools' annotations: an argument present in the
body (not null) needs its header, equal once decoded; anything else is a header mismatch.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from .errors import HEADER_MISMATCH, McpError, McpgenError
from .modern import decode_header_value, encode_header_value
from .json_values import as_array, as_object, member

log = logging.getLogger("mcpgen.runtime")

#: The method whose calls carry ``Mcp-Param-*`` headers, and the one that lists the tools.
CALL_TOOL = "tools/call"
LIST_TOOLS = "tools/list"
_INTEGER = re.compile(r"-?[0-9]+")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_KEY = "x-mcp-header"
Path = tuple[str, ...]


class InvalidAnnotation(McpgenError, ValueError):
    pass


def header_annotations(schema: Any) -> list[tuple[str, Path]]:
    """(header name, property path) of every ``x-mcp-header`` in a tool's input schema."""
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()

    def walk(value: object, path: Path, via_properties: bool) -> None:
        items = as_array(value)
        if items is not None:
            for item in items:
                walk(item, path, False)
            return
        node = as_object(value)
        if node is None:
            return
        if _KEY in node:
            name = node[_KEY]
            if not via_properties or not path:
                raise InvalidAnnotation(
                    f"{_KEY} outside plain properties at {'/'.join(path) or 'root'}"
                )
            if not isinstance(name, str) or not _TOKEN.match(name):
                raise InvalidAnnotation(f"{_KEY} {name!r} is not a header token")
            if name.lower() in seen:
                raise InvalidAnnotation(f"{_KEY} {name!r} is used twice")
            if node.get("type") not in ("string", "integer", "boolean"):
                raise InvalidAnnotation(f"{_KEY} {name!r} on a {node.get('type')!r} property")
            seen.add(name.lower())
            found.append((name, path))
        for key, sub in node.items():
            properties = as_object(sub) if key == "properties" else None
            if properties is not None:
                for prop, schema in properties.items():
                    walk(schema, (*path, prop), via_properties)
            elif key != _KEY:
                walk(sub, path, False)

    walk(schema, (), True)
    return found


class ToolHeaders:
    """The header annotations of the tools a server listed, by tool name."""

    def __init__(self) -> None:
        self.by_tool: dict[str, list[tuple[str, Path]]] = {}

    def remember(self, result: Any, drop_invalid: bool) -> None:
        """Record the annotations of a ``tools/list`` result; drop tools with invalid ones
        (over HTTP) from the result itself."""
        plain = as_object(result)
        tools = as_array(
            plain.get("tools") if plain is not None else getattr(result, "tools", None)
        )
        if tools is None:
            return
        kept: list[Any] = []
        for tool in tools:  # typed, or plain JSON (e.g. a list a proxy merged)
            fields = as_object(tool)
            if fields is not None:
                name, schema = fields.get("name"), fields.get("inputSchema")
            else:
                name = tool.name
                schema = msgspec.to_builtins(getattr(tool, "input_schema", None))
            if not isinstance(name, str):
                kept.append(tool)
                continue
            try:
                self.by_tool[name] = header_annotations(schema)
            except InvalidAnnotation as exc:
                if drop_invalid:
                    log.warning("dropping tool %r: %s", name, exc)
                    continue
            kept.append(tool)
        tools[:] = kept

    def headers(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, str]:
        """``Mcp-Param-*`` headers for a call of ``tool`` (null or absent values: none)."""
        out: dict[str, str] = {}
        for name, path in self.by_tool.get(tool, ()):
            value = _argument(arguments, path)
            if value is None or isinstance(value, (dict, list, float)):
                continue
            out[f"Mcp-Param-{name}"] = encode_header_value(value)
        return out


def _argument(arguments: Mapping[str, Any], path: Path) -> Any:
    value: Any = arguments
    for part in path:
        value = member(value, part)
    return value


def check_param_headers(
    annotations: list[tuple[str, Path]], arguments: Any, sent: Mapping[str, str]
) -> None:
    """A call's ``Mcp-Param-*`` headers (``sent``, keyed by the lower-cased rest of their
    name) against its arguments: -32020 unless each annotated argument present in the body
    comes with its header, equal once decoded (integers compared as numbers), and no header
    stands for an argument the body lacks."""
    for name, path in annotations:
        value = _argument(arguments, path)
        header = sent.get(name.lower())
        where = "params.arguments." + ".".join(path)
        if header is None:
            if value is not None:
                raise McpError(
                    HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{name} is required ({where})"
                )
            continue
        if value is None:
            raise McpError(HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{name} but no {where}")
        if not _same(decode_header_value(header.strip()), value):
            raise McpError(HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{name} must equal {where}")


def _same(text: str, value: Any) -> bool:
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):  # decimal digits only (int() also takes "4_2")
        return _INTEGER.fullmatch(text) is not None and int(text) == value
    return isinstance(value, str) and text == value


class ServerToolHeaders:
    """What a server's own tools declare, for checking calls: learned from every
    ``tools/list`` it answers, or (when a call comes first, e.g. to another worker) by
    listing its tools itself once; forgotten when its tools change."""

    def __init__(self) -> None:
        self.known = ToolHeaders()
        self.complete = False
        #: Tools known to declare no header: their calls need no check (the common case,
        #: asked on every call).
        self.unannotated: set[str] = set()
        #: Set while the tools are being listed to learn them: calls wait for it.
        self.learning: asyncio.Future[None] | None = None

    def learn(self, result: Any) -> None:
        self.known.remember(result, drop_invalid=False)
        self.unannotated = {tool for tool, found in self.known.by_tool.items() if not found}

    def forget(self) -> None:
        self.known.by_tool.clear()
        self.unannotated = set()
        self.complete = False

    def must_learn(self, tool: str) -> bool:
        """Whether to list the server's tools before checking a call of ``tool``: it is
        not known, and the tools were not listed since they last changed."""
        if tool in self.known.by_tool or self.complete:
            return False
        self.complete = True
        return True

    def check(self, tool: str, arguments: Any, sent: Mapping[str, str]) -> None:
        annotations = self.known.by_tool.get(tool)
        if annotations:
            check_param_headers(annotations, arguments, sent)
