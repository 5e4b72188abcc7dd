"""Which overrides a schema gives something to act on, for ``mcpgen schema add`` to say.

Overrides are keyed by what they match (a name pattern, a union's members, a field, a
method), so a new revision is mapped with every rule that still finds its target; a rule
that finds nothing in it is reported, for a maintainer to review (upstream may have
renamed what it was about).

Many rules are about one era only (the ``initialize`` handshake, ``server/discover``), so
``schema add`` compares the new revision with the nearest pinned revision of its era (the
one whose patches and rules it matches most closely, the closest in version order among
equals) and reports only what differs: the rules that acted there and find nothing in the
new revision, and the patches needed there and not any more. A copy of a pinned revision
reports nothing.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .overrides import Overrides
from .patches import Patch, apply_patches
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


class Profile(NamedTuple):
    """What the patches and overrides find in one schema."""

    #: The revision it is (a version, or "VERSION as pinned before" for a re-pin).
    label: str
    era: str
    patches: list[str]
    #: The patches whose tests do not hold in it.
    not_needed: list[str]
    usage: Usage


def profile(
    label: str, era: str, document: Any, overrides: Overrides, patches: tuple[Patch, ...]
) -> Profile:
    """The patches ``document`` needs and the overrides it uses (the document is not
    changed)."""
    from .loader import definitions_of

    document = copy.deepcopy(document)
    applied = apply_patches(document, patches)
    found = usage(overrides, definitions_of(document)[1])
    return Profile(label, era, applied.applied, applied.not_needed, found)


def _distance(a: Profile, b: Profile) -> int:
    return len(set(a.patches) ^ set(b.patches)) + len(set(a.usage.used) ^ set(b.usage.used))


def nearest(new: Profile, pinned: Sequence[Profile]) -> Profile | None:
    """The profile of ``pinned`` (given closest in version order first) of ``new``'s era
    that ``new`` matches most closely; None when its era has none."""
    same = [p for p in pinned if p.era == new.era]
    return min(same, key=lambda p: _distance(new, p)) if same else None


def report(new: Profile, pinned: Sequence[Profile]) -> list[str]:
    """What ``schema add`` says of a new revision: the patches it needs, and what differs
    from the nearest pinned revision of its era (without one, every rule it leaves idle)."""
    used = new.usage
    lines = [f"patches it needs: {', '.join(new.patches) or 'none'}"]
    near = nearest(new, pinned)
    total = f"overrides it uses: {len(used.used)} of {len(used.used) + len(used.unused)}"
    if near is None:
        not_needed = new.not_needed
        return [
            *lines,
            f"nearest pinned revision of the {new.era} era: none fetched to compare with",
            f"patches it does not need: {', '.join(not_needed) or 'none'}",
            total,
            f"overrides with nothing to act on in it: {', '.join(used.unused) or 'none'}",
        ]
    dropped = [p for p in near.patches if p not in new.patches]
    idle = [rule for rule in used.unused if rule in near.usage.used]
    return [
        *lines,
        f"nearest pinned revision of the {new.era} era: {near.label}",
        f"patches {near.label} needs and it does not: {', '.join(dropped) or 'none'}",
        total,
        f"overrides that act on {near.label} and find nothing in it: {', '.join(idle) or 'none'}",
    ]
