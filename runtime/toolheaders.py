"""``x-mcp-header``: tool arguments mirrored into ``Mcp-Param-*`` HTTP headers.

A tool's input schema may mark a property with ``"x-mcp-header": "Name"``; a client on
HTTP then sends the argument's value as ``Mcp-Param-Name``. Annotations must be a valid
header token, unique regardless of case, on a string, integer or boolean property reached
from the root through ``properties`` only; tools that break this are dropped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from .modern import encode_header_value

log = logging.getLogger("mcpgen.runtime")

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_KEY = "x-mcp-header"
Path = tuple[str, ...]


class InvalidAnnotation(ValueError):
    pass


def header_annotations(schema: Any) -> list[tuple[str, Path]]:
    """(header name, property path) of every ``x-mcp-header`` in a tool's input schema."""
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()

    def walk(node: Any, path: Path, via_properties: bool) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, path, False)
            return
        if not isinstance(node, Mapping):
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
        for key, value in node.items():
            if key == "properties" and isinstance(value, Mapping):
                for prop, sub in value.items():
                    walk(sub, (*path, str(prop)), via_properties)
            elif key != _KEY:
                walk(value, path, False)

    walk(schema, (), True)
    return found


class ToolHeaders:
    """The header annotations of the tools a server listed, by tool name."""

    def __init__(self) -> None:
        self.by_tool: dict[str, list[tuple[str, Path]]] = {}

    def remember(self, result: Any, drop_invalid: bool) -> None:
        """Record the annotations of a ``tools/list`` result; drop tools with invalid ones
        (over HTTP) from the result itself."""
        tools = getattr(result, "tools", None)
        if not isinstance(tools, list):
            return
        kept = []
        for tool in tools:
            schema = msgspec.to_builtins(getattr(tool, "input_schema", None))
            try:
                self.by_tool[tool.name] = header_annotations(schema)
            except InvalidAnnotation as exc:
                if drop_invalid:
                    log.warning("dropping tool %r: %s", tool.name, exc)
                    continue
            kept.append(tool)
        tools[:] = kept

    def headers(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, str]:
        """``Mcp-Param-*`` headers for a call of ``tool`` (null or absent values: none)."""
        out: dict[str, str] = {}
        for name, path in self.by_tool.get(tool, ()):
            value: Any = arguments
            for part in path:
                value = value.get(part) if isinstance(value, Mapping) else None
            if value is None or isinstance(value, (dict, list, float)):
                continue
            out[f"Mcp-Param-{name}"] = encode_header_value(value)
        return out
