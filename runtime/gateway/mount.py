"""Several upstreams behind one proxy: each mounted under a prefix, its names renamed on
the way out and back.

A tool or prompt ``forecast`` of the upstream mounted as ``weather`` is ``weather_forecast``
downstream; a resource ``docs://guide`` is ``docs://weather/guide`` (the prefix as the
first path segment after the scheme, as FastMCP's mounts write it; a URI without ``://``
gets ``weather/`` in front), and a template ``docs://{page}`` is ``docs://weather/{page}``.
Where names sit in each method's params and results is the table :data:`NAMED`, keyed by
method; a name no mount owns is refused as the upstream would refuse an unknown one.

``tools`` (allowed names) and ``hidden_tools`` (refused names) choose what of an upstream
is served: a tool left out is neither listed nor called. A ``policy`` chooses per client:
it is asked, for each thing of the upstream (a tool, prompt, resource or template, by the
upstream's own name), whether the client asking may see and use it (:class:`Access`: the
verified token's principal, the client's name and version); what it refuses is neither
listed to that client nor served to it, as an unknown name is not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import INVALID_PARAMS, McpError
from ..core.json_values import as_array, as_object
from .upstream import Upstream

log = logging.getLogger("mcpgen.runtime.gateway")

#: What kind of name sits where: ``(where, kind)`` in a method's params, or in its result
#: (``where``: a dotted path; ``[]`` walks a list).
NAMED: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "params": {
        "tools/call": (("name", "tool"),),
        "prompts/get": (("name", "prompt"),),
        "resources/read": (("uri", "uri"),),
        "resources/subscribe": (("uri", "uri"),),
        "resources/unsubscribe": (("uri", "uri"),),
        "completion/complete": (("ref.name", "prompt"), ("ref.uri", "ref-uri")),
    },
    "result": {
        "tools/list": (("tools[].name", "tool"),),
        "prompts/list": (("prompts[].name", "prompt"),),
        "resources/list": (("resources[].uri", "uri"),),
        "resources/templates/list": (("resourceTemplates[].uriTemplate", "template"),),
        "resources/read": (("contents[].uri", "uri"),),
    },
}
#: What a policy is asked about each kind of request and listed item: the request that
#: uses a thing, and where its upstream name sits (in the params, or in a list's items).
POLICED: dict[str, tuple[str, str]] = {
    "tools/call": ("tools/call", "name"),
    "prompts/get": ("prompts/get", "name"),
    "resources/read": ("resources/read", "uri"),
    "resources/subscribe": ("resources/read", "uri"),
    "resources/unsubscribe": ("resources/read", "uri"),
    "tools/list": ("tools/call", "tools[].name"),
    "prompts/list": ("prompts/get", "prompts[].name"),
    "resources/list": ("resources/read", "resources[].uri"),
    "resources/templates/list": ("resources/read", "resourceTemplates[].uriTemplate"),
}


@dataclass(frozen=True)
class Access:
    """What a mount's ``policy`` judges: may ``principal`` (the verified token's
    :class:`~runtime.http.auth.principal.Principal`; None where the proxy takes no
    tokens), using the client ``client`` (its ``clientInfo``), ``method`` (``tools/call``,
    ``prompts/get`` or ``resources/read``) the thing the upstream names ``name`` (a tool
    or prompt name, a resource URI or template)?"""

    principal: Any
    client: Mapping[str, Any]
    method: str
    name: str


#: A mount's per-client policy: True lets the client see and use the thing.
Policy = Callable[[Access], bool]

#: What separates a prefix from a tool's or prompt's own name (allowed in tool names by
#: every client's naming rules).
SEPARATOR = "_"


@dataclass(frozen=True)
class Mount:
    """``upstream`` served under ``prefix`` (default: its name; "" for none), with the
    tools ``tools`` allows (all when None) less those ``hidden_tools`` names, and to each
    client what ``policy`` lets it see and use (all when None)."""

    upstream: Upstream
    prefix: str | None = None
    tools: frozenset[str] | None = None
    hidden_tools: frozenset[str] = frozenset()
    policy: Policy | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.upstream.name

    @property
    def at(self) -> str:
        """The prefix names carry downstream ("" when mounted as is)."""
        return self.upstream.name if self.prefix is None else self.prefix

    def serves_tool(self, name: str) -> bool:
        allowed = self.tools is None or name in self.tools
        return allowed and name not in self.hidden_tools

    def allows(self, principal: Any, client: Mapping[str, Any], method: str, name: str) -> bool:
        """Whether the ``policy`` lets this client use the thing ``name`` (``method``:
        the request that uses it); a policy that fails refuses."""
        if self.policy is None:
            return True
        try:
            return bool(self.policy(Access(principal, client, method, name)))
        except Exception:
            log.exception("the policy of %r failed on %s %s: refused", self.name, method, name)
            return False

    def permitted(
        self, principal: Any, client: Mapping[str, Any], method: str, params: Any
    ) -> bool:
        """Whether a request's params (the upstream's names) name a thing the client may use."""
        if self.policy is None or method not in POLICED or method.endswith("/list"):
            return True
        used, where = POLICED[method]
        name = (as_object(params) or {}).get(where)
        return not isinstance(name, str) or self.allows(principal, client, used, name)

    def shown(self, principal: Any, client: Mapping[str, Any], method: str, result: Any) -> Any:
        """A list result (the upstream's names) less what the client may not use."""
        plain = as_object(result)
        if self.policy is None or plain is None or method not in POLICED:
            return result
        used, where = POLICED[method]
        key, _, field_name = where.partition("[].")
        items = as_array(plain.get(key))
        if items is not None:
            plain[key] = [
                item
                for item in items
                if not isinstance(name := (as_object(item) or {}).get(field_name), str)
                or self.allows(principal, client, used, name)
            ]
        return plain

    # -- names, out and back ------------------------------------------------------------------

    def outward(self, kind: str, name: str) -> str:
        """A name of the upstream's as the downstream client sees it."""
        if not self.at:
            return name
        if kind in ("tool", "prompt"):
            return f"{self.at}{SEPARATOR}{name}"
        scheme, found, rest = name.partition("://")
        return f"{scheme}://{self.at}/{rest}" if found else f"{self.at}/{name}"

    def inward(self, kind: str, name: str) -> str | None:
        """The upstream's own name for a downstream one, or None when it is not ours."""
        if not self.at:
            return name
        if kind in ("tool", "prompt"):
            head = f"{self.at}{SEPARATOR}"
            return name[len(head) :] if name.startswith(head) and len(name) > len(head) else None
        scheme, found, rest = name.partition("://")
        head = f"{self.at}/"
        if found:
            return f"{scheme}://{rest[len(head):]}" if rest.startswith(head) else None
        return name[len(head) :] if name.startswith(head) else None


def owner_of(mounts: Sequence[Mount], method: str, params: Any) -> tuple[Mount, Any]:
    """The mount a request's name belongs to, and its params as that upstream names
    them; an unknown name is -32602 as an upstream answers one."""
    places = NAMED["params"].get(method, ())
    plain = as_object(params)
    for mount in mounts:
        renamed = _renamed(plain, places, lambda kind, name: mount.inward(_kind(kind), name))
        if renamed is not None:
            name = (as_object(renamed) or {}).get("name")
            if method == "tools/call" and isinstance(name, str) and not mount.serves_tool(name):
                break
            return mount, renamed
    raise unknown(method, plain)


def unknown(method: str, params: Any) -> McpError:
    """-32602 for a request naming what no mount serves (as an upstream answers one)."""
    plain = as_object(params) or {}
    what = {"tools/call": "tool", "prompts/get": "prompt"}.get(method, "resource")
    named = plain.get("name") if what != "resource" else plain.get("uri")
    return McpError(INVALID_PARAMS, f"Unknown {what}: {named}")


def outward_result(mount: Mount, method: str, result: Any) -> Any:
    """A result of ``mount``'s upstream with its names as the downstream sees them (a
    tool list without the tools left out)."""
    plain = as_object(result)
    if plain is None:
        return result
    if method == "tools/list":
        tools = as_array(plain.get("tools")) or []
        plain["tools"] = [
            t for t in tools if mount.serves_tool(str((as_object(t) or {}).get("name")))
        ]
    places = NAMED["result"].get(method, ())
    renamed = _renamed(plain, places, lambda kind, name: mount.outward(_kind(kind), name))
    return renamed if renamed is not None else plain


def _kind(kind: str) -> str:
    return "uri" if kind in ("ref-uri", "template") else kind


def _renamed(
    value: dict[str, Any] | None,
    places: Iterable[tuple[str, str]],
    rename: Callable[[str, str], str | None],
) -> dict[str, Any] | None:
    """``value`` with the names at ``places`` renamed (in place); None when a name that
    is there cannot be (it belongs to no one)."""
    if value is None:
        return None
    for where, kind in places:
        if not _rename_at(value, where.split("."), kind, rename):
            return None
    return value


def _rename_at(
    node: Any, path: list[str], kind: str, rename: Callable[[str, str], str | None]
) -> bool:
    head, rest = path[0], path[1:]
    listed = head.endswith("[]")
    key = head.removesuffix("[]")
    holder = as_object(node)
    if holder is None or key not in holder:
        return True  # nothing there to rename
    if listed:
        return all(_rename_at(item, rest, kind, rename) for item in as_array(holder[key]) or [])
    if rest:
        return _rename_at(holder[key], rest, kind, rename)
    name = holder[key]
    if not isinstance(name, str):
        return True
    renamed = rename(kind, name)
    if renamed is None:
        return False
    holder[key] = renamed
    return True


def check_mounts(mounts: Sequence[Mount]) -> None:
    """Refuse, at start-up, mounts whose names could be confused: two with one prefix,
    or one prefix that begins another's (its names would be claimed by both)."""
    seen: dict[str, str] = {}
    for mount in mounts:
        at = mount.at
        if at in seen:
            raise ValueError(
                f"upstreams {seen[at]!r} and {mount.name!r} are both mounted at {at!r}:"
                " give each its own prefix"
            )
        for other, name in seen.items():
            if (
                not at
                or not other
                or at.startswith(other + SEPARATOR)
                or other.startswith(at + SEPARATOR)
            ):
                raise ValueError(
                    f"upstreams {name!r} (at {other!r}) and {mount.name!r} (at {at!r}) would"
                    " claim each other's names: give them prefixes neither of which begins"
                    " the other"
                )
        seen[at] = mount.name


__all__ = [
    "Access",
    "Mount",
    "NAMED",
    "POLICED",
    "Policy",
    "SEPARATOR",
    "check_mounts",
    "outward_result",
    "owner_of",
    "unknown",
]
