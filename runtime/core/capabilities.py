"""What one side says about itself, per version: its capabilities and implementation
info cut to what the version's schema knows, a modern client's per-request ``_meta``
(its version, capabilities, info and log level, sent with every request), and what a
server's request asks of the client beyond its method's capability (an elicitation's
mode, tools offered to sampling)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from . import elicitation, modern
from .errors import INVALID_PARAMS, MISSING_CLIENT_CAPABILITY, McpError
from .negotiation import VersionInfo, Versions, has_capability, refusal_to_send
from .negotiation import required_capabilities
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


# What a server's request asks of the client, beyond its method's own capability.

SAMPLING = "sampling/createMessage"
#: The params by which a sampling request offers the model tools (2025-11-25 on).
SAMPLING_TOOLS = ("tools", "toolChoice")
#: The requests whose params may ask more than their method's capability.
ASKED_BY_PARAMS = frozenset({elicitation.METHOD, SAMPLING})


def needed_by_params(method: str, params: Any) -> tuple[str, ...] | None:
    """The client capability a server's request needs for what its ``params`` (plain
    JSON) ask: the elicitation's mode (``elicitation.form``, ``elicitation.url``), or
    ``sampling.tools`` for a sampling request offering tools. None: nothing more."""
    if method == elicitation.METHOD:
        return ("elicitation", elicitation.mode_of(params))
    request = as_object(params)
    if method == SAMPLING and request is not None and any(k in request for k in SAMPLING_TOOLS):
        return ("sampling", "tools")
    return None


def declares(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``capabilities`` (a client's) declare ``path``; an elicitation mode as
    ``runtime.core.elicitation.declares_mode`` reads it."""
    if path[0] == "elicitation" and len(path) == 2:
        return elicitation.declares_mode(capabilities, path[1])
    return has_capability(capabilities, path)


def _version_has(version: VersionInfo, path: tuple[str, ...]) -> bool:
    if path == ("elicitation", "url"):
        return elicitation.has_url_mode(version)
    if path == ("sampling", "tools"):
        params = getattr(version.binding.types, "CreateMessageRequestParams", None)
        return "tools" in getattr(params, "__struct_encode_fields__", ())
    return True


def refusal_to_ask(
    method: str, params: Any, capabilities: Mapping[str, Any], version: VersionInfo
) -> McpError | None:
    """Why a server may not send ``method`` with ``params`` (plain JSON) to a client of
    ``version`` that declared ``capabilities``: what the params ask needs a capability the
    client did not declare, or one its version does not have (MissingRequiredClientCapability,
    as for the method's own). None: it may."""
    path = needed_by_params(method, params)
    if path is None or (_version_has(version, path) and declares(capabilities, path)):
        return None
    if _version_has(version, path):
        return refusal_to_send(method, path, "server")
    return McpError(
        MISSING_CLIENT_CAPABILITY,
        f"{method} needs the client's {'.'.join(path)} capability, which protocol"
        f" {version.version} does not have",
        {"requiredCapabilities": required_capabilities(path)},
    )


def refusal_when_asked(
    method: str, params: Any, capabilities: Mapping[str, Any]
) -> McpError | None:
    """A client's answer to a server's ``method`` whose ``params`` (plain JSON) ask what
    the client did not declare in ``capabilities``: -32602 (invalid params: the method is
    one the client serves, what the params ask is not). None: the request may be served."""
    path = needed_by_params(method, params)
    if path is None or declares(capabilities, path):
        return None
    what = (
        f"an elicitation in mode {path[1]!r}"
        if path[0] == "elicitation"
        else "sampling with tools (tools, toolChoice)"
    )
    return McpError(
        INVALID_PARAMS,
        f"Invalid params: the server asked for {what}, but this client did not declare"
        f" capabilities.{'.'.join(path)}",
    )
