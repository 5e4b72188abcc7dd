"""Protocol extensions: methods outside a version's generated table, served and called
like built-in ones.

An :class:`Extension` has an identifier with a vendor prefix (``com.example/search``),
the settings it advertises, and the methods it adds, each with msgspec types for its
params and result. Both sides list it (``Server(..., extensions=[...])``,
``App(..., extensions=...)``, ``ClientSession(..., extensions=...)``); it is advertised
under ``capabilities.extensions`` (2026-07-28 on) or ``capabilities.experimental``
(earlier versions), and its methods join every version's dispatch table: routed, decoded
into their types, gated and answered as the built-in ones are. A method is served only to
a peer that declared the extension too (-32021 naming it otherwise, as the spec has a
server reject what only one side supports); a side calls one only when the peer offers
it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from .binding import Channel, Kind, Sender
from .errors import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, McpError
from .json_values import as_object

#: A vendor prefix (dot-separated labels), a slash, a name (``_meta`` key rules).
_IDENTIFIER = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+/[\w.-]+")


class ExtensionMethod(msgspec.Struct, frozen=True, kw_only=True):
    """One method an extension adds (a ``contracts.MethodSpec``).

    ``params`` and ``result`` are msgspec-decodable types (Structs, typically); ``None``
    for a method without params, and for notifications' result. ``direction`` is who
    sends it. ``handler`` names the handler (default: the method's own name).
    """

    name: str
    params: Any = None
    result: Any = None
    kind: Kind = "request"
    direction: Sender = "client"
    handler: str = ""
    params_required: bool = False
    channel: Channel = "wire"
    message: Any = None
    #: Set per era by the extension: where the receiver declared it.
    capability: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("an extension method needs a name")
        if self.kind == "notification" and self.result is not None:
            raise ValueError(f"{self.name}: a notification has no result")
        if not self.handler:
            msgspec.structs.force_setattr(self, "handler", self.name)


class Extension:
    """An extension's identifier, advertised settings and methods."""

    def __init__(
        self,
        identifier: str,
        methods: Iterable[ExtensionMethod],
        settings: Mapping[str, Any] | None = None,
        eras: Iterable[str] = ("legacy", "modern"),
    ) -> None:
        if not _IDENTIFIER.fullmatch(identifier):
            raise ValueError(
                f"extension identifier {identifier!r} needs a vendor prefix, e.g. "
                "'com.example/name'"
            )
        self.identifier = identifier
        self.settings: dict[str, Any] = dict(settings or {})
        self.methods: tuple[ExtensionMethod, ...] = tuple(methods)
        #: The eras it exists in (an extension that replaces what an older version has in
        #: its core, as tasks do, is modern only).
        self.eras = frozenset(eras)
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"extension {identifier!r} lists a method twice")

    def __repr__(self) -> str:
        return f"Extension({self.identifier!r}, {[m.name for m in self.methods]})"

    def capability(self, era: str) -> tuple[str, str]:
        """Where a side declares this extension in ``era``."""
        return ("extensions" if era == "modern" else "experimental", self.identifier)

    def declared(self, era: str, capabilities: Mapping[str, Any]) -> bool:
        """Whether ``capabilities`` (a peer's) declare this extension in ``era``."""
        key, identifier = self.capability(era)
        group = as_object(capabilities.get(key))
        return group is not None and identifier in group

    def require(self, method: str, era: str, declared: Mapping[str, Any], receiver: str) -> None:
        """Refuse ``method`` when the peer did not declare this extension in ``declared``
        (its capabilities): a modern server answers -32021 naming it (the legacy era has
        no such code: -32601 there, as for a method it does not serve), a client -32601."""
        if self.declared(era, declared):
            return
        key, identifier = self.capability(era)
        message = f"{method} needs the {identifier} extension, which the peer did not declare"
        if receiver == "server" and era == "modern":
            required: dict[str, Any] = {"requiredCapabilities": {key: {identifier: {}}}}
            raise McpError(MISSING_CLIENT_CAPABILITY, message, required)
        raise McpError(METHOD_NOT_FOUND, message)

    def rows(self, era: str) -> tuple[ExtensionMethod, ...]:
        """The methods as rows of an ``era`` version's table (none outside its eras)."""
        if era not in self.eras:
            return ()
        key = self.capability(era)
        return tuple(msgspec.structs.replace(m, capability=key) for m in self.methods)


def extension_row(extensions: Iterable[Extension], sender: str, method: str) -> ExtensionMethod:
    """The row of ``method`` (sent by ``sender``) among ``extensions``' methods."""
    for extension in extensions:
        for row in extension.methods:
            if row.name == method and row.direction == sender:
                return row
    raise LookupError(f"no extension here has a method {method!r} sent by the {sender}")


def declare(capabilities: dict[str, Any], extensions: Iterable[Extension]) -> dict[str, Any]:
    """``capabilities`` with ``extensions`` declared under both keys (each version
    advertises the one it knows; see ``advertised.capabilities_for``)."""
    out = dict(capabilities)
    for era in ("modern", "legacy"):
        for extension in extensions:
            if era in extension.eras:
                key = extension.capability(era)[0]
                out[key] = {**out.get(key, {}), extension.identifier: dict(extension.settings)}
    return out


def check_unique(
    extensions: Iterable[Extension], taken: Iterable[tuple[str, str]], runtime: Iterable[str]
) -> None:
    """Refuse two extensions, or an extension and a version's own table or the methods the
    runtime answers itself (``runtime``), claiming the same method from the same sender."""
    seen: dict[tuple[str, str], str] = {key: "the protocol" for key in taken}
    answered = frozenset(runtime)
    for extension in extensions:  # of the version's era
        for method in extension.methods:
            key = (method.direction, method.name)
            if method.name in answered:
                seen[key] = "the protocol (the runtime answers it)"
            if key in seen:
                raise ValueError(
                    f"{method.name} of {extension.identifier!r} is already defined by {seen[key]}"
                )
            seen[key] = repr(extension.identifier)
