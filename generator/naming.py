"""Python names for schema names: attributes, hoisted classes, and collision checks."""

from __future__ import annotations

import keyword
import re

# Attributes that would shadow methods of the classes we emit (dict for open objects).
_RESERVED_ATTRIBUTES = frozenset(dir(dict) + ["extra", "mro"])
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_IDENT = re.compile(r"[^0-9a-zA-Z_]+")


def snake(name: str) -> str:
    """``progressToken`` → ``progress_token``; ``io.modelcontextprotocol/clientInfo`` → ``client_info``."""
    if "/" in name:  # namespaced _meta key: the part after the prefix names it
        name = name.rsplit("/", 1)[1]
    name = _CAMEL_BOUNDARY.sub("_", name)
    name = _NON_IDENT.sub("_", name).strip("_").lower()
    return name or "field"


def attribute(wire_name: str, taken: set[str], avoid: frozenset[str] = frozenset()) -> str:
    """A valid, unique Python attribute name for a wire key."""
    name = snake(wire_name)
    if name[0].isdigit():
        name = "f_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in avoid:
        name += "_"
    base, n = name, 2
    while name in taken:
        name = f"{base}_{n}"
        n += 1
    taken.add(name)
    return name


def open_attribute(wire_name: str, taken: set[str]) -> str:
    """Like :func:`attribute`, also avoiding the methods of ``dict``."""
    return attribute(wire_name, taken, _RESERVED_ATTRIBUTES)


def pascal(name: str) -> str:
    """``inputSchema`` → ``InputSchema``; ``_meta`` → ``Meta``; ``$schema`` → ``Schema``."""
    parts = [p for p in _NON_IDENT.split(snake(name)) if p]
    return "".join(p[:1].upper() + p[1:] for p in "_".join(parts).split("_")) or "Field"


class ClassNames:
    """Hands out class names for hoisted inline objects, unique within a module."""

    def __init__(self, reserved: set[str]) -> None:
        self.taken = set(reserved)

    def claim(self, hint: str) -> str:
        name, n = hint, 2
        while name in self.taken:
            name = f"{hint}{n}"
            n += 1
        self.taken.add(name)
        return name
