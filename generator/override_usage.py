"""Which overrides a schema gives something to act on, for ``mcpgen schema add`` to say.

Overrides are keyed by what they match (a name pattern, a union's members, a field, a
method), so a new revision is mapped with every rule that still finds its target; a rule
that finds nothing in it is reported, for a maintainer to review (upstream may have
renamed what it was about).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any, NamedTuple

from .overrides import Overrides
from .roles import find_roles, methods_of


class Usage(NamedTuple):
    used: list[str]
    unused: list[str]


def _origins(defs: dict[str, Any]) -> set[str]:
    """Definition names and ``Definition.property`` paths (where overrides point)."""
    found = set(defs)
    for name, node in defs.items():
        properties = node.get("properties") if isinstance(node, dict) else None
        if isinstance(properties, dict):
            found.update(f"{name}.{prop}" for prop in properties)
    return found


def _fields(defs: dict[str, Any]) -> set[str]:
    return {origin.split(".", 1)[1] for origin in _origins(defs) if "." in origin}


def _members(defs: dict[str, Any], union: str) -> set[str]:
    node = defs.get(union)
    if not isinstance(node, dict):
        return set()
    listed = [*node.get("anyOf", []), *node.get("oneOf", [])]
    return {m["$ref"].rsplit("/", 1)[1] for m in listed if isinstance(m, dict) and "$ref" in m}


def _any_match(pattern: str, names: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for name in names)


def usage(overrides: Overrides, defs: dict[str, Any]) -> Usage:
    """Each rule of ``overrides`` (labelled ``kind target``), by whether ``defs`` (a
    schema's definitions) has what it is about."""
    origins, fields, methods = _origins(defs), _fields(defs), methods_of(defs)
    roles = find_roles(defs, overrides)
    checks: list[tuple[str, bool]] = [
        (f"roles {rule.role}", rule.role in roles) for rule in overrides.roles
    ]
    for kind, rules in (("open_objects", overrides.open_objects), ("any_json", overrides.any_json)):
        for rule in rules:
            scope = _members(defs, rule.members_of) if rule.members_of else origins
            pattern = rule.pattern(roles)
            found = pattern is not None and _any_match(pattern, scope)
            checks.append((f"{kind} {rule.match}", found))
    for default in overrides.field_defaults:
        checks.append((f"field_defaults {default.field}", default.field in fields))
    for optional in overrides.optional_fields:
        owners = {o.rsplit(".", 1)[0] for o in origins if o.endswith(f".{optional.field}")}
        checks.append((f"optional_fields {optional.field}", _any_match(optional.match, owners)))
    for inherit in overrides.inherit_properties:
        source = inherit.source.split(".", 1)[0]
        checks.append((f"inherit_properties {inherit.source}", source in defs))
    for exception in overrides.result_exceptions:
        checks.append((f"result_exceptions {exception.method}", exception.method in methods))
    for gate in overrides.capabilities:
        label = f"capabilities {gate.side} {gate.method}"
        checks.append((label, gate.method in methods))
    for runtime in overrides.runtime_methods:
        checks.append((f"runtime_methods {runtime.method}", runtime.method in methods))
    return Usage([label for label, ok in checks if ok], [label for label, ok in checks if not ok])
