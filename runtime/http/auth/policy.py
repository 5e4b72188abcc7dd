"""Which scopes a request needs: those every request needs, plus those of its method, plus
those of the tool, prompt or resource it names.

The HTTP app asks before anything is dispatched, so a request lacking a scope is refused
with ``403 insufficient_scope`` naming every scope the operation needs (one challenge per
operation, as the 2026-07-28 authorization spec asks), and its handler never runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

#: A scope token (RFC 6749 §3.3): printable ASCII but space, ``"`` and ``\\``.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")

#: The method whose requests name a tool, prompt or resource, and the table they are in.
NAMED = {
    "tools/call": "tools",
    "prompts/get": "prompts",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
}

_NONE: frozenset[str] = frozenset()
#: Scopes ``(method, name)`` needs beyond a policy's tables (an ``App``'s registry).
Lookup = Callable[[str, "str | None"], Iterable[str]]


def scope_set(scopes: Iterable[str], what: str = "scope") -> frozenset[str]:
    """``scopes`` checked as scope tokens (a string is one scope, not its letters); an
    empty one as it is."""
    if not scopes:
        return _NONE
    if isinstance(scopes, str):
        scopes = [scopes]
    checked = frozenset(scopes)
    for scope in checked:
        if type(scope) is not str or not _SCOPE_TOKEN.fullmatch(scope):
            raise ValueError(f"{what} {scope!r} is not a scope token (RFC 6749 §3.3)")
    return checked


def _table(given: Mapping[str, Iterable[str]] | None, what: str) -> dict[str, frozenset[str]]:
    return {key: scope_set(value, f"{what} {key!r}: scope") for key, value in (given or {}).items()}


class ScopePolicy:
    """Scopes required per request: ``required`` for every request, ``methods`` by
    method (``{"tools/list": ["tools:read"]}``), ``tools`` and ``prompts`` by name,
    ``resources`` by URI, and whatever each of ``lookups`` says for ``(method, name)``
    (an ``App`` adds its tools', prompts' and resources' ``scopes=``)."""

    def __init__(
        self,
        required: Iterable[str] = (),
        *,
        methods: Mapping[str, Iterable[str]] | None = None,
        tools: Mapping[str, Iterable[str]] | None = None,
        prompts: Mapping[str, Iterable[str]] | None = None,
        resources: Mapping[str, Iterable[str]] | None = None,
        lookups: Iterable[Lookup] = (),
    ) -> None:
        self.required = scope_set(required)
        self.methods = _table(methods, "method")
        self.named: dict[str, dict[str, frozenset[str]]] = {
            "tools": _table(tools, "tool"),
            "prompts": _table(prompts, "prompt"),
            "resources": _table(resources, "resource"),
        }
        self.lookups = list(lookups)
        #: Whether some request may need more than ``required`` (else nothing is looked
        #: up per request).
        self.varies = bool(self.methods or any(self.named.values()) or self.lookups)

    def with_lookup(self, lookup: Lookup) -> ScopePolicy:
        """This policy, also asking ``lookup``."""
        policy = ScopePolicy.__new__(ScopePolicy)
        policy.required, policy.methods, policy.named = self.required, self.methods, self.named
        policy.lookups = [*self.lookups, lookup]
        policy.varies = True
        return policy

    def needs(self, method: str, name: str | None) -> frozenset[str]:
        """Every scope a ``method`` request naming ``name`` (a tool, prompt or resource;
        None for other methods) needs."""
        required = self.required
        if not self.varies:
            return required
        parts = [required, self.methods.get(method, _NONE)]
        table = NAMED.get(method)
        if table is not None and name is not None:
            parts.append(self.named[table].get(name, _NONE))
        for lookup in self.lookups:
            parts.append(scope_set(lookup(method, name)))
        extra = [part for part in parts[1:] if part]
        if not extra:
            return required
        return required.union(*extra)


__all__ = ["NAMED", "ScopePolicy", "scope_set"]
