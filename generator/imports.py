"""Drop the names a rendered module imports but never uses.

The stub templates share the types module's import lines (what an annotation may need);
a module that uses fewer of them would otherwise ship unused imports, and users vendor
generated code into projects whose linters reject those.
"""

from __future__ import annotations

import re

_FROM_IMPORT = re.compile(r"^from (\S+) import ([\w, ]+)$", re.MULTILINE)


def prune_unused(source: str, modules: tuple[str, ...] = ("typing", "msgspec")) -> str:
    """``source`` with unused names removed from its one-line ``from M import a, b``
    statements for the ``modules`` given (a statement left empty goes entirely)."""

    def prune(match: re.Match[str]) -> str:
        module, names = match.group(1), [n.strip() for n in match.group(2).split(",")]
        if module not in modules:
            return match.group(0)
        rest = source[: match.start()] + source[match.end() :]
        used = [n for n in names if re.search(rf"\b{re.escape(n)}\b", rest)]
        return f"from {module} import {', '.join(used)}" if used else ""

    return _FROM_IMPORT.sub(prune, source)
