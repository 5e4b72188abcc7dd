"""Declarative fixes for known defects of the published schemas (``schema/patches.json``).

Each patch names the versions it applies to, the reason, and RFC 6902 operations. Its
``test`` operations assert the defect is still there: once upstream fixes it, applying the
patch fails with a message telling the maintainer to drop it (and a test says the same).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

import msgspec

from .errors import GenerateError
from .pins import PACKAGE_DIR

PATCHES_FILE = PACKAGE_DIR / "schema" / "patches.json"


class Operation(msgspec.Struct, frozen=True):
    op: Literal["test", "add", "replace", "remove"]
    path: str
    value: Any = None
    #: For ``test``: assert that nothing is at ``path`` (RFC 6902 cannot say so).
    absent: bool = False


class Patch(msgspec.Struct, frozen=True):
    id: str
    versions: tuple[str, ...]
    reason: str
    ops: tuple[Operation, ...]


class DefectGone(GenerateError):
    """A patch's ``test`` no longer holds: upstream fixed the defect."""


def load_patches(path: Path | None = None) -> tuple[Patch, ...]:
    return msgspec.json.decode((path or PATCHES_FILE).read_bytes(), type=tuple[Patch, ...])


def _split(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise GenerateError(f"invalid JSON pointer {pointer!r}", "pointers start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def _parent(doc: Any, parts: list[str], patch: Patch) -> tuple[Any, str]:
    node = doc
    for part in parts[:-1]:
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise DefectGone(
                f"patch {patch.id}: path /{'/'.join(parts)} no longer exists upstream",
                "upstream changed here; review the patch and drop it if the defect is fixed",
            ) from None
    return node, parts[-1]


def apply_operation(doc: Any, op: Operation, patch: Patch) -> None:
    parts = _split(op.path)
    parent, key = _parent(doc, parts, patch)
    index: Any = int(key) if isinstance(parent, list) and key != "-" else key
    if op.op == "test":
        try:
            current = parent[index]
        except (KeyError, IndexError, TypeError):
            current = msgspec.UNSET
        if (current is not msgspec.UNSET) if op.absent else (current != op.value):
            raise DefectGone(
                f"patch {patch.id} ({', '.join(patch.versions)}): upstream no longer has the "
                f"defect at {op.path}",
                "upstream fixed it: remove the patch from schema/patches.json",
            )
    elif op.op == "remove":
        del parent[index]
    elif op.op == "add" and isinstance(parent, list):
        parent.insert(len(parent) if key == "-" else index, copy.deepcopy(op.value))
    else:  # add, replace
        parent[index] = copy.deepcopy(op.value)


def apply_patches(schema: dict[str, Any], version: str, patches: tuple[Patch, ...]) -> list[str]:
    """Apply every patch for ``version`` in place; returns the ids applied."""
    applied = []
    for patch in patches:
        if version not in patch.versions:
            continue
        for op in patch.ops:
            apply_operation(schema, op, patch)
        applied.append(patch.id)
    return applied
