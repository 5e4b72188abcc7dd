"""What the runtime needs from a generated binding, as structural types.

The runtime imports no generated module by name: any package ``mcpgen generate`` wrote
(ours, or one vendored under another name) plugs in. These Protocols say what such a
package must provide; the generated ``_support.MethodSpec``/``Binding`` and the package's
``MethodRow`` satisfy them structurally, and so can a hand-written extension's methods
(see ``runtime.core.extensions``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, Literal, Protocol

Sender = Literal["client", "server"]
"""Who sends a method: ``client`` (client → server) or ``server`` (server → client)."""

Kind = Literal["request", "notification"]

Channel = Literal["wire", "input"]
"""``wire``: a JSON-RPC message; ``input``: a 2026 input request carried inside a result."""

Era = Literal["legacy", "modern"]


class MethodSpec(Protocol):
    """One row of a version's dispatch table: a method with its types."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> Kind: ...
    @property
    def direction(self) -> Sender: ...
    @property
    def channel(self) -> Channel: ...
    @property
    def handler(self) -> str:
        """The Python name of the handler (server) or client method."""
        ...

    @property
    def message(self) -> Any:
        """The whole JSON-RPC message's type."""
        ...

    @property
    def params(self) -> Any:
        """The params type (``None``: the method takes none)."""
        ...

    @property
    def params_required(self) -> bool: ...
    @property
    def result(self) -> Any:
        """The result type (``None`` for notifications)."""
        ...

    @property
    def capability(self) -> tuple[str, ...] | None:
        """The capability path the receiver (for notifications: the sender) declared."""
        ...


class Binding(Protocol):
    """Everything the runtime needs to speak one protocol version."""

    @property
    def version(self) -> str: ...
    @property
    def era(self) -> Era: ...
    @property
    def types(self) -> ModuleType:
        """The version's ``types`` module (``decode``, ``convert``, ``reshape``, ``ROLES``)."""
        ...

    @property
    def methods(self) -> tuple[MethodSpec, ...]: ...
    @property
    def runtime_methods(self) -> frozenset[str]:
        """Methods the runtime answers or consumes itself (the stubs leave them out)."""
        ...


class MethodRow(Protocol):
    """A method without its types: a version's light ``METHOD_INDEX`` row."""

    @property
    def sender(self) -> Sender: ...
    @property
    def kind(self) -> Kind: ...
    @property
    def channel(self) -> Channel: ...
    @property
    def name(self) -> str: ...
    @property
    def handler(self) -> str: ...
    @property
    def capability(self) -> tuple[str, ...] | None: ...


#: Told of a change a server announces: (method, params, the listen filter that wants it).
Publish = Callable[[str, "dict[str, Any]", str], Awaitable[None]]
