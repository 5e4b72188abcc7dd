"""Generation choices kept as data (``schema/overrides.json``), each with its reason.

Patches (``patches.py``) fix upstream defects; overrides record how mcpgen chooses to map
a correct schema onto Python where the schema leaves room: which objects keep undeclared
keys, which fields have a protocol-defined default, which method results break the
naming convention, which capability gates a method. Rules name what they match
(definitions, inline objects under them, fields, methods, roles), never a version nor the
schema's definitions container (``$defs`` or ``definitions``), so they act alike on a
revision that renames either.
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Mapping
from pathlib import Path

import msgspec

from .pins import PACKAGE_DIR

OVERRIDES_FILE = PACKAGE_DIR / "schema" / "overrides.json"


class Rule(msgspec.Struct, frozen=True):
    """Applies to definitions or inline objects whose origin matches ``match`` (a glob).

    Origins look like ``Tool`` (a definition) or ``Tool.inputSchema`` (an inline object).
    ``{Role}`` in ``match`` stands for the origin of a role (``{Tool}.inputSchema``), so a
    rule follows its target through upstream renames; a role the schema lacks makes the
    rule match nothing. ``versions`` limits the rule; empty means every version.
    """

    match: str
    reason: str
    versions: tuple[str, ...] = ()
    #: Only definitions that are members of this union (where the schema defines it).
    members_of: str | None = None

    def pattern(self, roles: Mapping[str, str]) -> str | None:
        """``match`` with its ``{Role}`` placeholders filled in (None: a role is missing)."""
        if "{" not in self.match:
            return self.match
        try:
            return self.match.format_map({k: glob.escape(v) for k, v in roles.items()})
        except KeyError:
            return None

    def applies(
        self, origin: str, version: str, unions: dict[str, set[str]], roles: Mapping[str, str]
    ) -> bool:
        if self.versions and version not in self.versions:
            return False
        if self.members_of is not None and origin not in unions.get(self.members_of, ()):
            return False
        pattern = self.pattern(roles)
        return pattern is not None and fnmatch.fnmatchcase(origin, pattern)


class FieldDefault(msgspec.Struct, frozen=True):
    """A field the protocol defines a value for when it is absent."""

    field: str
    value: str
    reason: str
    versions: tuple[str, ...] = ()


class OptionalField(msgspec.Struct, frozen=True):
    """A schema-required field that receivers must nevertheless accept absent."""

    field: str
    reason: str
    #: Glob on the owning definition's (or inline object's) origin.
    match: str = "*"


class InheritProperty(msgspec.Struct, frozen=True):
    """Copy ``property`` from the object at ``source`` into the ``params`` objects of
    definitions matching ``into`` that lack it (flattened schemas dropped inherited keys).
    """

    property: str
    source: str
    into: str
    reason: str
    #: Definitions these unions list are left alone (what the schema built differently).
    except_members_of: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()


class ResultException(msgspec.Struct, frozen=True):
    """A request whose result does not follow the ``XRequest`` → ``XResult`` convention."""

    method: str
    result: str
    reason: str


class RuntimeMethod(msgspec.Struct, frozen=True):
    """A method the runtime answers or consumes itself, so stubs leave it out."""

    method: str
    reason: str


class CapabilityGate(msgspec.Struct, frozen=True):
    """The capability (``side`` plus path) a peer must advertise before a method is used."""

    method: str
    side: str
    path: tuple[str, ...]


RolePath = tuple[str, ...]


class RoleRule(msgspec.Struct, frozen=True):
    """Where the definition playing ``role`` lives (see ``roles.py``); the first of
    ``paths`` that resolves wins."""

    role: str
    paths: tuple[RolePath, ...]
    reason: str = ""


class Overrides(msgspec.Struct, frozen=True):
    open_objects: tuple[Rule, ...] = ()
    any_json: tuple[Rule, ...] = ()
    field_defaults: tuple[FieldDefault, ...] = ()
    optional_fields: tuple[OptionalField, ...] = ()
    inherit_properties: tuple[InheritProperty, ...] = ()
    result_exceptions: tuple[ResultException, ...] = ()
    capabilities: tuple[CapabilityGate, ...] = ()
    runtime_methods: tuple[RuntimeMethod, ...] = ()
    roles: tuple[RoleRule, ...] = ()

    def is_open(
        self, origin: str, version: str, unions: dict[str, set[str]], roles: Mapping[str, str]
    ) -> bool:
        return any(r.applies(origin, version, unions, roles) for r in self.open_objects)

    def is_any_json(self, origin: str, version: str, roles: Mapping[str, str]) -> bool:
        return any(r.applies(origin, version, {}, roles) for r in self.any_json)

    def is_optional(self, field: str, owner: str) -> bool:
        return any(
            o.field == field and fnmatch.fnmatchcase(owner, o.match) for o in self.optional_fields
        )

    def default_for(self, field: str, version: str) -> FieldDefault | None:
        for d in self.field_defaults:
            if d.field == field and (not d.versions or version in d.versions):
                return d
        return None


def load_overrides(path: Path | None = None) -> Overrides:
    return msgspec.json.decode((path or OVERRIDES_FILE).read_bytes(), type=Overrides)
