"""Properties that flattened schemas dropped, restored from where they are inherited.

Upstream's JSON schemas are generated from TypeScript, where every request's params extend
a base that declares ``_meta``; some flattened per-request params lost it, and a value
sent there would be dropped on decode. ``inherit_properties`` overrides name the source
and the definitions to restore it into (``schema/overrides.json``).
"""

from __future__ import annotations

import copy
import fnmatch
from typing import Any

from .overrides import InheritProperty


def inherit_properties(
    defs: dict[str, Any], rules: tuple[InheritProperty, ...], version: str
) -> None:
    """Apply ``inherit_properties`` overrides to the raw definitions table, in place."""

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    def at(path: str) -> dict[str, Any] | None:
        parts = path.split(".")
        node = defs.get(parts[0])
        for part in parts[1:]:
            if node is None:
                return None
            node = resolve(node).get("properties", {}).get(part)
        return node

    for rule in rules:
        if rule.versions and version not in rule.versions:
            continue
        source = at(rule.source)
        if source is None or rule.property not in source.get("properties", {}):
            continue  # the schema has no such base: nothing to inherit from it
        value = source["properties"][rule.property]
        excluded = members_of(defs, rule.except_members_of)
        for name in sorted(defs):
            if not fnmatch.fnmatchcase(name, rule.into) or name in excluded:
                continue
            params = defs[name].get("properties", {}).get("params")
            if params is None:
                continue
            targets = [resolve(params)]
            targets = [resolve(m) for t in targets for m in t.get("anyOf", [t])]
            for target in targets:
                props = target.get("properties")
                if props is not None and rule.property not in props:
                    props[rule.property] = copy.deepcopy(value)


def members_of(defs: dict[str, Any], unions: tuple[str, ...]) -> set[str]:
    """The definitions the ``anyOf``/``oneOf`` of ``unions`` list by ``$ref``."""
    found = set()
    for union in unions:
        node = defs.get(union)
        if not isinstance(node, dict):
            continue
        for member in [*node.get("anyOf", []), *node.get("oneOf", [])]:
            if isinstance(member, dict) and isinstance(member.get("$ref"), str):
                found.add(member["$ref"].rsplit("/", 1)[1])
    return found
