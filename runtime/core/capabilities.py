"""What one side says about itself, per version: its capabilities and implementation
info cut to what the version's schema knows, and a modern client's per-request ``_meta``
(its version, capabilities, info and log level, sent with every request)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from . import modern
from .negotiation import VersionInfo, Versions
from .json_values import as_object
from .roles import role_of


def capabilities_for(
    capabilities: dict[str, Any], role: str, version: VersionInfo
) -> dict[str, Any]:
    """``capabilities`` of a ``role`` side, keeping only those ``version``'s schema knows."""
    name = "ServerCapabilities" if role == "server" else "ClientCapabilities"
    cls = role_of(version.binding.types, name)
    keys: Mapping[str, Any] = getattr(cls, "__keys__", {})
    known: set[str] = {spec.wire for spec in keys.values()}
    kept = {k: v for k, v in capabilities.items() if not known or k in known}
    extensions, experimental = as_object(kept.get("extensions")), as_object(
        kept.get("experimental")
    )
    if extensions and experimental is not None:
        # an extension is declared where the version has a place for them, not twice
        rest = {k: v for k, v in experimental.items() if k not in extensions}
        kept.pop("experimental")
        if rest:
            kept["experimental"] = rest
    return kept


def info_for(info: dict[str, Any], version: VersionInfo) -> dict[str, Any]:
    """Implementation ``info``, keeping only the fields ``version``'s schema knows."""
    implementation = role_of(version.binding.types, "Implementation")
    encoded: set[str] = set(getattr(implementation, "__struct_encode_fields__", ()))
    return {k: v for k, v in info.items() if not encoded or k in encoded}


def stamped(params: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """Request ``params`` (a value or None) as builtins, ``meta`` added to its ``_meta``."""
    given: Any = msgspec.to_builtins(params) if params is not UNSET and params is not None else {}
    plain = as_object(given)
    if plain is None:
        raise TypeError(f"request params must be an object, not {type(given).__name__}")
    plain["_meta"] = {**(as_object(plain.get("_meta")) or {}), **meta}
    return plain


def client_meta(
    version: VersionInfo,
    capabilities: dict[str, Any],
    info: dict[str, Any],
    log_level: str | None,
) -> dict[str, Any]:
    """What a modern client's every request carries in ``_meta``."""
    meta = {
        modern.PROTOCOL_VERSION: version.version,
        modern.CLIENT_CAPABILITIES: capabilities_for(capabilities, "client", version),
        modern.CLIENT_INFO: info_for(info, version),
    }
    if log_level is not None:
        meta[modern.LOG_LEVEL] = log_level
    return meta


def session_meta(
    version: VersionInfo, capabilities: dict[str, Any], info: dict[str, Any]
) -> dict[str, Any]:
    """What a legacy session settled (the client's version, capabilities and info), in
    the shape of the ``_meta`` a modern request carries."""
    return {
        modern.PROTOCOL_VERSION: version.version,
        modern.CLIENT_CAPABILITIES: capabilities,
        modern.CLIENT_INFO: info,
    }


# What a side offers, from the handlers it implements.


def _generated_base(handlers: object) -> type:
    """The generated ``ServerHandlers``/``ClientHandlers`` class ``handlers`` derives from."""
    for cls in type(handlers).__mro__:
        if "__binding__" in vars(cls):
            return cls
    raise TypeError(f"{type(handlers).__name__} does not derive from generated handlers")


def implemented(handlers: object, name: str) -> bool:
    """Whether ``handlers`` has ``name`` of its own: an override of the generated stub, or
    a method the stubs of its version lack (e.g. a legacy-only request)."""
    base = _generated_base(handlers)
    own = getattr(type(handlers), name, None)
    return own is not None and own is not getattr(base, name, None)


def _set(capabilities: dict[str, Any], path: tuple[str, ...], leaf: Any) -> None:
    node = capabilities
    for part in path[:-1]:
        node = node.setdefault(part, {})
    if path[-1] not in node:
        node[path[-1]] = leaf


def derive_capabilities(
    handlers: object, versions: Versions, sender: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Capabilities implied by the handlers a side implements: a gated request (sent by
    ``sender``) in any of the versions served whose handler is implemented turns its
    capability on."""
    caps: dict[str, Any] = {}
    for row in versions.all_rows():
        capability = row.capability
        if row.kind != "request" or row.sender != sender or not capability:
            continue
        if not implemented(handlers, row.handler):
            continue
        leaf: Any = {} if len(capability) == 1 else True
        if len(capability) > 1 and capability[0] == "tasks":
            leaf = {}  # task capabilities are objects, not flags
        _set(caps, capability, leaf)
    for key, value in (extra or {}).items():
        if isinstance(value, Mapping) and isinstance(caps.get(key), dict):
            caps[key].update(value)
        else:
            caps[key] = value
    return caps
