"""Declarative fixes for known defects of the published schemas (``schema/patches.json``).

A patch is a reason and RFC 6902 operations: first ``test`` operations that describe the
defect, then the operations that fix it. It applies to every schema in which its tests
hold, whatever the version is called, so a revision nobody has seen yet, or a known
schema pinned under a new name, gets every fix it still needs. Where the tests do not hold
(upstream fixed the defect, or never had it) the patch is not needed and changes nothing;
``mcpgen schema add`` says which patches a new revision needs, and a test fails for a
patch that no pinned schema needs any more.

Nor does a patch depend on what the schema calls its definitions container (upstream
renamed it once, ``definitions`` in the draft-07 schemas, ``$defs`` in the 2020-12 ones):
a path whose first segment is ``$defs`` (``definitions`` means the same) points into the
container the schema has, whatever its name, and the ``$ref``s in a patch's values are
compared and written in the schema's own spelling. ``schema/patches.json`` spells the
container ``$defs`` throughout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec

from .errors import GenerateError
from .pins import PACKAGE_DIR
from .refs import CANONICAL, CONTAINERS, container_of, with_container

PATCHES_FILE = PACKAGE_DIR / "schema" / "patches.json"


class Operation(msgspec.Struct, frozen=True):
    op: Literal["test", "add", "replace", "remove"]
    path: str
    value: Any = None
    #: For ``test``: assert that nothing is at ``path`` (RFC 6902 cannot say so).
    absent: bool = False


class Patch(msgspec.Struct, frozen=True):
    id: str
    reason: str
    ops: tuple[Operation, ...]

    @property
    def tests(self) -> tuple[Operation, ...]:
        return tuple(op for op in self.ops if op.op == "test")

    @property
    def changes(self) -> tuple[Operation, ...]:
        return tuple(op for op in self.ops if op.op != "test")


class Applied(NamedTuple):
    """What the patches did to one schema."""

    applied: list[str]
    not_needed: list[str]


def load_patches(path: Path | None = None) -> tuple[Patch, ...]:
    file = path or PATCHES_FILE
    try:
        patches = msgspec.json.decode(file.read_bytes(), type=tuple[Patch, ...])
    except msgspec.DecodeError as exc:
        raise GenerateError(f"{file}: invalid patches: {exc}", "restore it from git") from None
    for patch in patches:
        is_test = [op.op == "test" for op in patch.ops]
        first_change = is_test.index(False) if False in is_test else len(is_test)
        if first_change == 0 or first_change == len(is_test) or any(is_test[first_change:]):
            raise GenerateError(
                f"{file}: patch {patch.id} must start with its test operations and change "
                "something after them",
                "the tests say where the defect is; without them a patch would apply anywhere",
            )
    return patches


def _split(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise GenerateError(f"invalid JSON pointer {pointer!r}", "pointers start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def _parts(doc: Any, pointer: str) -> list[str]:
    """The segments of ``pointer`` in ``doc``: a first segment naming the definitions
    container, by either name, names the one ``doc`` has."""
    parts = _split(pointer)
    if parts and parts[0] in CONTAINERS:
        parts[0] = container_of(doc) or parts[0]
    return parts


def _lookup(doc: Any, parts: list[str]) -> tuple[Any, Any] | None:
    """The container of the last part of a pointer and its key there; None when a part
    before it does not exist."""
    node = doc
    for part in parts[:-1]:
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            return None
    key = parts[-1]
    return node, int(key) if isinstance(node, list) and key != "-" else key


def holds(doc: Any, op: Operation) -> bool:
    """Whether a ``test`` operation holds in ``doc``. ``absent`` holds where the object
    the path names a key of exists and lacks that key: a key missing from an object is a
    defect of that object, not of a schema that has no such object at all."""
    found = _lookup(doc, _parts(doc, op.path))
    if found is None:
        return False
    parent, key = found
    try:
        current = parent[key]
    except (KeyError, IndexError, TypeError):
        return op.absent and isinstance(parent, (dict, list))
    return not op.absent and with_container(current, CANONICAL) == with_container(
        op.value, CANONICAL
    )


def needed(doc: Any, patch: Patch) -> bool:
    """Whether ``doc`` has the defect ``patch`` fixes (all its tests hold)."""
    return all(holds(doc, op) for op in patch.tests)


def change(doc: Any, op: Operation, patch: Patch) -> None:
    """Apply one ``add``/``replace``/``remove`` of ``patch`` to ``doc`` in place."""
    found = _lookup(doc, _parts(doc, op.path))
    if found is None:
        raise GenerateError(
            f"patch {patch.id}: {op.op} {op.path}: the path does not exist although the "
            "patch's tests hold",
            "the tests do not pin down the defect: review the patch in schema/patches.json",
        )
    parent, key = found
    value = with_container(op.value, container_of(doc) or CANONICAL)
    try:
        if op.op == "remove":
            del parent[key]
        elif op.op == "add" and isinstance(parent, list):
            parent.insert(len(parent) if key == "-" else key, value)
        else:  # add, replace
            parent[key] = value
    except (KeyError, IndexError, TypeError):
        raise GenerateError(
            f"patch {patch.id}: {op.op} {op.path} cannot be applied",
            "the tests do not pin down the defect: review the patch in schema/patches.json",
        ) from None


def apply_patches(schema: dict[str, Any], patches: tuple[Patch, ...]) -> Applied:
    """Apply, in place and in order, every patch whose tests hold in ``schema``."""
    applied, not_needed = [], []
    for patch in patches:
        if not needed(schema, patch):
            not_needed.append(patch.id)
            continue
        for op in patch.changes:
            change(schema, op, patch)
        applied.append(patch.id)
    return Applied(applied, not_needed)
