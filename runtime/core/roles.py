"""A binding's types by role: the runtime names the parts of the protocol it builds
(``TextContent``, ``CallToolResult``, ``ClientCapabilities``, ...) by role, and each
generated types module maps roles to its own definitions in ``ROLES``, found by where the
protocol carries them. A revision that renames a definition keeps working unchanged."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def role_of(types: ModuleType, name: str) -> Any:
    """The definition of ``types`` playing ``name`` (None where the version has none)."""
    roles: dict[str, Any] = getattr(types, "ROLES", {})
    return roles.get(name)


class RoleTypes:
    """``types`` with its roles as attributes: ``RoleTypes(t).TextContent`` is whatever the
    version calls a text content block; every other attribute (``convert``, the schema's
    own names) is the module's."""

    def __init__(self, types: ModuleType) -> None:
        self.module = types
        self.__dict__.update(getattr(types, "ROLES", {}))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)
