"""Dangling ``$ref``s: found before any binding is built, reported with where they are.

A ``$ref`` to a definition the schema does not have used to refuse the whole version. Now
each one is a warning naming the definition and the JSON path that holds it, and only
what cannot stand without the missing target goes: a union loses the member, any other
definition is left out (and, in turn, whatever needs that one). ``strict`` makes the first
dangling reference an error instead, for those who would rather stop.

The definitions container has two names (``$defs``, ``definitions``): the loader and the
patches ask :func:`container_of` which one a schema uses, and patches write references
into it with :func:`with_container`, so neither depends on the name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import GenerateError

#: Keywords whose value is a list of alternatives: a dangling one drops out of the list.
_ALTERNATIVES = ("anyOf", "oneOf")
#: What the definitions container is called: ``$defs`` in the 2020-12 schemas,
#: ``definitions`` in the draft-07 ones (upstream renamed it when it changed dialect). A
#: ``$ref`` is a JSON pointer, so either name works in either dialect: the schema itself
#: says which it uses, whatever its ``$schema``.
CONTAINERS = ("$defs", "definitions")
#: How mcpgen's own data (``schema/patches.json``) spells the container, whatever a
#: schema calls it.
CANONICAL = "$defs"


def container_of(doc: Any) -> str | None:
    """The name of ``doc``'s definitions container (``$defs`` first where a document has
    both), or None."""
    if isinstance(doc, dict):
        for key in CONTAINERS:
            if isinstance(doc.get(key), dict):
                return key
    return None


def with_container(node: Any, container: str) -> Any:
    """A copy of ``node`` whose local ``$ref``s into a definitions container, under either
    name, point into ``container`` instead (``#/definitions/X`` → ``#/$defs/X``)."""
    if isinstance(node, dict):
        out = {key: with_container(value, container) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str):
            for name in CONTAINERS:
                if ref.startswith(f"#/{name}/"):
                    out["$ref"] = f"#/{container}/{ref[len(name) + 3 :]}"
                    break
        return out
    if isinstance(node, list):
        return [with_container(value, container) for value in node]
    return node


def references(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every ``$ref`` under ``node``: (JSON pointer of the object holding it, target)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield path or "/", ref
        for key, value in node.items():
            yield from references(value, f"{path}/{_escape(str(key))}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from references(value, f"{path}/{index}")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _target(ref: str) -> str | None:
    """The definition a local ``$ref`` names (``#/$defs/X``, ``#/definitions/X``)."""
    for prefix in (f"#/{name}/" for name in CONTAINERS):
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    return None


def _missing(ref: str, defs: dict[str, Any]) -> bool:
    """Whether ``ref`` names a definition the schema lacks (other references, such as
    pointers into a definition, are not judged here)."""
    target = _target(ref)
    return target is not None and target not in defs


def prune_dangling(defs: dict[str, Any], version: str, strict: bool = False) -> list[str]:
    """Drop, in place, what dangling references leave without meaning; the warnings,
    one per dropped member or definition. With ``strict``, raise at the first one."""
    warnings: list[str] = []
    while True:
        dropped = False
        for name in list(defs):
            node = defs[name]
            for alternatives in _ALTERNATIVES:  # a union keeps the members that exist
                members = node.get(alternatives) if isinstance(node, dict) else None
                if not isinstance(members, list):
                    continue
                for index in reversed(range(len(members))):
                    ref = members[index].get("$ref") if isinstance(members[index], dict) else None
                    if isinstance(ref, str) and _missing(ref, defs):
                        where = f"{name}/{alternatives}/{index}"
                        _refuse_if(strict, version, where, ref)
                        warnings.append(
                            f"{version}: {where}: $ref {ref!r} names no definition; "
                            f"{name} leaves that member out"
                        )
                        del members[index]
            dangling = next(
                ((where, ref) for where, ref in references(node) if _missing(ref, defs)), None
            )
            if dangling is not None:
                where, ref = dangling
                _refuse_if(strict, version, f"{name}{where.rstrip('/')}", ref)
                warnings.append(
                    f"{version}: {name}{where.rstrip('/')}: $ref {ref!r} names no definition; "
                    f"{name} is left out"
                )
                del defs[name]
                dropped = True
        if not dropped:
            return warnings


def _refuse_if(strict: bool, version: str, where: str, ref: str) -> None:
    if strict:
        raise GenerateError(
            f"schema {version}: {where}: $ref {ref!r} names no definition",
            "patch the schema (schema/patches.json), or drop --strict to leave it out",
        )
