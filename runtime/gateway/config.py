"""Upstreams from a file, in the shape MCP hosts already use for their server lists.

JSON (or TOML) with the servers under ``mcpServers`` (``servers`` is read too), each
either a command or a URL::

    {"mcpServers": {
        "weather": {"command": "python", "args": ["-m", "weather"], "env": {"KEY": "..."}},
        "files": {"url": "https://files.example/mcp", "headers": {"Authorization": "..."}}
    }}

and what a proxy adds per server: ``prefix`` (default: its name; with one server, none),
``tools`` (the tools served; default all), ``hiddenTools``, ``mode`` (``auto``,
``legacy``, ``modern``), ``transport`` (a URL's: ``auto``, ``streamable-http``, ``sse``,
``websocket``), ``perSession`` (a connection per client), ``cwd``. ``type`` (``stdio``,
``http``, ``sse``, ``ws``), as some hosts write it, is read as the transport. Anything
else, or a value of the wrong kind, is an error naming its key.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from ..client import Mode
from ..core.json_values import as_array, as_object
from .mount import Mount, check_mounts
from .upstream import Upstream, UrlTransport

#: A server's keys, and how each is checked (each check says what it wants).
KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "type",
        "transport",
        "mode",
        "perSession",
        "prefix",
        "tools",
        "hiddenTools",
        "disabled",
    }
)
MODES = ("auto", "legacy", "modern")
TRANSPORTS = ("auto", "streamable-http", "sse", "websocket")
#: ``type`` as hosts write it → our transport (None: a command).
TYPES: dict[str, str | None] = {
    "stdio": None,
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "sse": "sse",
    "ws": "websocket",
    "websocket": "websocket",
}


class ConfigError(ValueError):
    """A configuration that cannot be used: one line naming the file and the key."""


def load_config(path: str | Path) -> list[Mount]:
    """The mounts a configuration file describes (``.toml`` read as TOML, else JSON)."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot be read ({exc})") from None
    try:
        if where.suffix == ".toml":
            data: Any = _toml_loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid {where.suffix[1:] or 'JSON'}: {exc}") from None
    return mounts_from(data, str(where))


def _toml_loads(text: str) -> Any:
    """TOML with the standard library's reader (3.11 on), else tomli (the proxy extra
    brings it there)."""
    reader: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return reader.loads(text)


def mounts_from(data: Any, source: str = "config") -> list[Mount]:
    """The mounts of an already-parsed configuration (``source`` names it in errors)."""
    top = as_object(data)
    if top is None:
        raise ConfigError(f"{source}: must be an object holding mcpServers")
    servers = top.get("mcpServers", top.get("servers"))
    key = "mcpServers" if "mcpServers" in top else "servers"
    listed = as_object(servers)
    if listed is None:
        raise ConfigError(f"{source}: {key}: must be an object of servers by name")
    named = {name: spec for name, spec in listed.items() if not _disabled(spec)}
    if not named:
        raise ConfigError(f"{source}: {key}: names no server")
    several = len(named) > 1
    mounts = [
        _mount(name, spec, f"{source}: {key}.{name}", several) for name, spec in named.items()
    ]
    try:
        check_mounts(mounts)
    except ValueError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None
    return mounts


def _disabled(spec: Any) -> bool:
    fields = as_object(spec)
    return fields is not None and fields.get("disabled") is True


def _mount(name: str, spec: Any, at: str, several: bool) -> Mount:
    fields = as_object(spec)
    if fields is None:
        raise ConfigError(f"{at}: must be an object (command and args, or url)")
    unknown = sorted(set(fields) - KEYS)
    if unknown:
        raise ConfigError(f"{at}.{unknown[0]}: unknown key (known: {', '.join(sorted(KEYS))})")
    get = _Getter(fields, at)
    kind = get.choice("type", tuple(TYPES))
    transport = get.choice("transport", TRANSPORTS)
    if kind is not None and transport is None:
        transport = TYPES[kind]
    options: dict[str, Any] = {
        "name": name,
        "mode": cast(Mode, get.choice("mode", MODES) or "auto"),
        "per_session": get.flag("perSession"),
    }
    command, url = get.text("command"), get.text("url")
    if (command is None) == (url is None):
        raise ConfigError(f"{at}: give exactly one of command and url")
    if command is not None:
        upstream = Upstream(
            command=command,
            args=tuple(get.texts("args") or ()),
            env=get.strings("env"),
            cwd=get.text("cwd"),
            **options,
        )
    else:
        assert url is not None
        if not url.startswith(("http://", "https://", "ws://", "wss://")):
            raise ConfigError(f"{at}.url: must start with http://, https://, ws:// or wss://")
        upstream = Upstream(
            url=url,
            headers=get.strings("headers"),
            transport=cast(UrlTransport, transport or "auto"),
            **options,
        )
    prefix = get.text("prefix")
    tools = get.texts("tools")
    return Mount(
        upstream,
        prefix if prefix is not None else (None if several else ""),
        frozenset(tools) if tools is not None else None,
        frozenset(get.texts("hiddenTools") or ()),
    )


class _Getter:
    """Typed reads of one server's fields, each failure a ``ConfigError`` naming the key."""

    def __init__(self, fields: Mapping[str, Any], at: str) -> None:
        self.fields = fields
        self.at = at

    def _read(self, key: str, check: Callable[[Any], bool], wanted: str) -> Any:
        value = self.fields.get(key)
        if value is not None and not check(value):
            raise ConfigError(f"{self.at}.{key}: must be {wanted}, not {json.dumps(value)[:60]}")
        return value

    def text(self, key: str) -> str | None:
        return self._read(key, lambda v: isinstance(v, str) and bool(v), "a non-empty string")

    def flag(self, key: str) -> bool:
        return bool(self._read(key, lambda v: isinstance(v, bool), "true or false"))

    def choice(self, key: str, allowed: tuple[str, ...]) -> str | None:
        return self._read(key, lambda v: v in allowed, f"one of {', '.join(allowed)}")

    def texts(self, key: str) -> list[str] | None:
        def ok(value: Any) -> bool:
            items = as_array(value)
            return items is not None and all(isinstance(item, str) for item in items)

        return self._read(key, ok, "a list of strings")

    def strings(self, key: str) -> dict[str, str] | None:
        def ok(value: Any) -> bool:
            fields = as_object(value)
            return fields is not None and all(isinstance(v, str) for v in fields.values())

        return self._read(key, ok, "an object of strings")


__all__ = ["ConfigError", "load_config", "mounts_from"]
