"""Which protocol versions a peer speaks, and the rules of each era, as tables.

The runtime imports no generated module by name: a ``Versions`` is built from the binding
of the version the application was written against (``ServerHandlers.__binding__``) and
the sibling versions of the same generated package.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from .binding import Binding, MethodRow, MethodSpec
from .extensions import Extension, check_unique
from .lifecycle import RUNTIME_METHODS
from .json_values import as_object, member
from .errors import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, McpError, NegotiationError

log = logging.getLogger("mcpgen.runtime")


class EraRules(msgspec.Struct, frozen=True, kw_only=True):
    """How a connection behaves in one era of the protocol (the handshake itself, and what
    may come before it, is ``runtime.core.lifecycle``'s)."""

    #: Results carry ``resultType``; the client's identity and capabilities ride in each
    #: request's ``_meta`` rather than in session state.
    stateless: bool
    #: Error codes this era renames (e.g. modern peers get INVALID_PARAMS, never -32002).
    error_codes: Mapping[int, int] = msgspec.field(default_factory=dict[int, int])
    #: Key every result of this era carries (dropped when a result goes to another era).
    result_type_key: str | None = None


ERAS: Mapping[str, EraRules] = {
    "legacy": EraRules(stateless=False),
    "modern": EraRules(
        stateless=True,
        error_codes={-32002: -32602},
        result_type_key="resultType",
    ),
}


class VersionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One version's binding with its dispatch table split by sender and kind."""

    binding: Binding
    rules: EraRules
    #: (sender, method) → spec, for wire messages.
    table: Mapping[tuple[str, str], MethodSpec]
    #: The same, also counting 2026 input requests (which travel inside results).
    typed: Mapping[tuple[str, str], MethodSpec] = msgspec.field(
        default_factory=dict[tuple[str, str], MethodSpec]
    )
    #: Version allows JSON-RPC batches (its schema defines a batch request).
    batching: bool = False
    #: (sender, method) → the extension that adds it (``runtime.core.extensions``).
    extensions: Mapping[tuple[str, str], Extension] = msgspec.field(
        default_factory=dict[tuple[str, str], Extension]
    )

    @property
    def version(self) -> str:
        return self.binding.version

    @property
    def era(self) -> str:
        return self.binding.era

    def spec(self, sender: str, method: str) -> MethodSpec | None:
        """The wire method ``sender`` may send in this version."""
        return self.table.get((sender, method))

    def types_of(self, sender: str, method: str) -> MethodSpec | None:
        """The params and result types this version has for a method, wire or input."""
        return self.typed.get((sender, method))

    def types_for(self, peer: VersionInfo, sender: str, method: str) -> MethodSpec | None:
        """The types this (the application's) version has for a method a ``peer`` version
        sent: none when only an extension of another era gives it here while the peer's
        version has it in its own table (2025-11-25's ``tasks/get`` to an application
        typed against 2026-07-28, where the tasks extension adds its own)."""
        found = self.types_of(sender, method)
        if found is not None and peer is not self and self.extension_of(sender, method):
            if peer.extension_of(sender, method) is None:
                return None
        return found

    def extension_of(self, sender: str, method: str) -> Extension | None:
        """The extension that adds ``method`` (sent by ``sender``), if one does."""
        return self.extensions.get((sender, method)) if self.extensions else None

    def opted_in(self, sender: str, method: str, capabilities: Mapping[str, Any]) -> bool:
        """False when ``method`` is an extension's that ``capabilities`` (the sender's)
        do not declare."""
        extension = self.extension_of(sender, method)
        return extension is None or extension.declared(self.era, capabilities)

    def require_opt_in(
        self, sender: str, method: str, capabilities: Mapping[str, Any], receiver: str
    ) -> None:
        """Refuse an extension's ``method`` when ``capabilities`` (the sender's) do not
        declare the extension (see ``Extension.require``)."""
        extension = self.extension_of(sender, method)
        if extension is not None:
            extension.require(method, self.era, capabilities, receiver)

    @classmethod
    def of(cls, binding: Binding, extensions: Sequence[Extension] = ()) -> VersionInfo:
        """``binding``'s table, with the methods ``extensions`` add."""
        unserved = sorted(binding.runtime_methods - RUNTIME_METHODS.keys())
        if unserved:
            log.warning(
                "protocol %s leaves %s to the runtime, which does not answer them",
                binding.version,
                ", ".join(unserved),
            )
        table: dict[tuple[str, str], MethodSpec] = {
            (m.direction, m.name): m for m in binding.methods if m.channel == "wire"
        }
        typed: dict[tuple[str, str], MethodSpec] = {
            (m.direction, m.name): m for m in binding.methods
        }
        extensions = [e for e in extensions if binding.era in e.eras]
        check_unique(extensions, typed, RUNTIME_METHODS)
        added: dict[tuple[str, str], Extension] = {}
        for extension in extensions:
            for row in extension.rows(binding.era):
                key = (row.direction, row.name)
                table[key] = typed[key] = row
                added[key] = extension
        return cls(
            binding=binding,
            rules=ERAS[binding.era],
            table=table,
            typed=typed,
            batching=hasattr(binding.types, "JSONRPCBatchRequest"),
            extensions=added,
        )


def package_of(binding: Binding) -> str:
    return binding.types.__name__.rsplit(".", 2)[0]


class Versions:
    """The protocol versions one side accepts, newest last.

    Only the version the application is typed against is loaded up front; another
    version's full binding (its types and dispatch table) is imported the first time a
    peer speaks it. Which methods each version has comes from the light ``METHOD_INDEX``
    of its package, which imports no types.
    """

    def __init__(
        self,
        package: str,
        eras: Mapping[str, str],
        local: VersionInfo,
        extensions: Sequence[Extension] = (),
    ) -> None:
        self.package = package
        #: Extensions whose methods join every version's table.
        self.extensions = tuple(extensions)
        self.eras: Mapping[str, str] = dict(eras)
        self.local = local
        self._infos: dict[str, VersionInfo] = {local.version: local}
        self._rows: dict[str, tuple[MethodRow, ...]] = {}
        # asked on every request: computed once
        self._by_era = {era: tuple(v for v, e in self.eras.items() if e == era) for era in ERAS}
        self._has: dict[tuple[str, str, str], bool] = {}

    @classmethod
    def around(
        cls,
        binding: Binding,
        versions: Iterable[str] | None = None,
        extensions: Sequence[Extension] = (),
    ) -> Versions:
        """Versions of ``binding``'s generated package: ``versions``, or by default every
        dated version generated beside it (``draft`` only when asked for)."""
        package = package_of(binding)
        available: Mapping[str, str] = importlib.import_module(package).ERAS
        if versions is None:
            chosen = [v for v in available if v != "draft"]
            if binding.version not in chosen:
                chosen.append(binding.version)
        else:
            chosen = list(dict.fromkeys(versions))
            unknown = [v for v in chosen if v not in available]
            if unknown:
                raise NegotiationError(
                    f"versions {unknown} are not generated; have {sorted(available)}"
                )
        ordered = sorted(chosen, key=lambda v: (v == "draft", v))
        local = VersionInfo.of(binding, extensions)
        return cls(package, {v: available[v] for v in ordered}, local, extensions)

    def __contains__(self, version: object) -> bool:
        return version in self.eras

    def __iter__(self) -> Iterator[str]:
        return iter(self.eras)

    def __getitem__(self, version: str) -> VersionInfo:
        info = self._infos.get(version)
        if info is None:
            if version not in self.eras:
                raise KeyError(version)
            name = importlib.import_module(self.package).VERSIONS[version]
            methods = importlib.import_module(f"{self.package}.{name}.methods")
            info = self._infos[version] = VersionInfo.of(methods.BINDING, self.extensions)
        return info

    def rows(self, version: str) -> tuple[MethodRow, ...]:
        """The method index of ``version`` (cheap: no types are imported)."""
        rows = self._rows.get(version)
        if rows is None:
            name = importlib.import_module(self.package).VERSIONS[version]
            rows = self._rows[version] = importlib.import_module(
                f"{self.package}.{name}"
            ).METHOD_INDEX
        return rows

    def all_rows(self) -> Iterator[MethodRow]:
        for version in self.eras:
            yield from self.rows(version)

    def has(self, era: str, sender: str, method: str) -> bool:
        """Whether any accepted version of ``era`` has ``method`` on the wire from ``sender``."""
        key = (era, sender, method)
        found = self._has.get(key)
        if found is None:
            found = self._has[key] = any(
                row.sender == sender and row.channel == "wire" and row.name == method
                for v in self.of_era(era)
                for row in self.rows(v)
            )
        return found

    def of_era(self, era: str) -> tuple[str, ...]:
        """The accepted versions of ``era``, oldest first."""
        return self._by_era.get(era, ())

    def latest(self, era: str) -> str | None:
        dated = [v for v in self.of_era(era) if v != "draft"]
        return dated[-1] if dated else (self.of_era(era) or (None,))[-1]


def answer_initialize(requested: str, versions: Versions) -> str:
    """The version a legacy server answers ``initialize`` with: the requested one when it
    speaks it, else its newest handshake version."""
    legacy = versions.of_era("legacy")
    if requested in legacy:
        return requested
    latest = versions.latest("legacy")
    if latest is None:
        raise NegotiationError("this server speaks no handshake-era version")
    return latest


def accept_answer(answered: str, offered: Sequence[str]) -> str:
    """A legacy client accepts the server's answer only if it speaks that version."""
    if answered not in offered:
        raise NegotiationError(
            f"server answered protocol version {answered!r}; this client speaks "
            f"{', '.join(offered)}"
        )
    return answered


def has_capability(capabilities: Mapping[str, Any], path: Sequence[str] | None) -> bool:
    """Whether a capabilities object (plain dict) declares ``path`` (truthy leaf or object)."""
    if not path:
        return True
    node: Any = capabilities
    for part in path:
        if part not in (as_object(node) or ()):
            return False
        node = member(node, part)
    return node is not False and node is not None


def required_capabilities(path: Sequence[str]) -> dict[str, Any]:
    """The capability at ``path`` as the ``requiredCapabilities`` of an error names it:
    ``("elicitation", "url")`` -> ``{"elicitation": {"url": {}}}``."""
    required: dict[str, Any] = {}
    node = required
    for part in path:
        node = node.setdefault(part, {})
    return required


def refusal_to_send(method: str, capability: Sequence[str], role: str) -> McpError:
    """Why ``role`` may not send ``method``: the peer did not declare ``capability``. A
    server asking a client for what it cannot give fails the way a modern request does
    (MissingRequiredClientCapability, naming what is required); a client asking for what
    the server does not offer gets what the server would answer (method not found)."""
    peer = "client" if role == "server" else "server"
    required = required_capabilities(capability)
    return McpError(
        MISSING_CLIENT_CAPABILITY if role == "server" else METHOD_NOT_FOUND,
        f"{method} needs the {peer}'s {'.'.join(capability)} capability, which it did not declare",
        {"requiredCapabilities": required} if role == "server" else msgspec.UNSET,
    )
