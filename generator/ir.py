"""The intermediate representation between a JSON schema and generated code.

Everything here is a frozen msgspec Struct and carries no prose beyond the descriptions
that become docstrings, so the IR of two versions can be compared (``mcpgen diff``) and
rendered (``emit``) by pure passes over it.
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

JSONScalar = Union[str, int, float, bool, None]
ScalarKind = Literal["str", "int", "float", "bool", "null"]


class Constraints(msgspec.Struct, frozen=True, omit_defaults=True):
    """Validation keywords that map onto ``msgspec.Meta``."""

    ge: int | float | None = None
    le: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None


# -- type expressions -------------------------------------------------------------------


class AnyType(msgspec.Struct, frozen=True, tag="any"):
    """Any JSON value."""


class Scalar(msgspec.Struct, frozen=True, tag="scalar"):
    kind: ScalarKind
    constraints: Constraints = Constraints()
    format: str | None = None


class LiteralType(msgspec.Struct, frozen=True, tag="literal"):
    """A ``const`` (one value) or an ``enum`` (several)."""

    values: tuple[JSONScalar, ...]


class Named(msgspec.Struct, frozen=True, tag="named"):
    """A reference to another definition of the same module."""

    name: str


class ArrayType(msgspec.Struct, frozen=True, tag="array"):
    item: TypeExpr
    constraints: Constraints = Constraints()


class MapType(msgspec.Struct, frozen=True, tag="map"):
    """An object without declared properties: ``dict[str, value]``."""

    value: TypeExpr


class UnionType(msgspec.Struct, frozen=True, tag="union"):
    members: tuple[TypeExpr, ...]


TypeExpr = Union[AnyType, Scalar, LiteralType, Named, ArrayType, MapType, UnionType]


# -- definitions --------------------------------------------------------------------------


class Field(msgspec.Struct, frozen=True):
    wire_name: str
    py_name: str
    type: TypeExpr
    required: bool
    description: str | None = None
    #: Value used when the key is absent; only set where data says so (overrides).
    default: JSONScalar | None = None
    has_default: bool = False
    #: The schema requires the key although it has a default: a value that got the
    #: default on decode writes it on encode (what this revision's peers must be sent).
    written: bool = False


class Tag(msgspec.Struct, frozen=True):
    """A required ``const`` field that msgspec uses as the tag of a tagged union."""

    field: str
    value: str | int


class StructDef(msgspec.Struct, frozen=True, tag="struct"):
    """An object with declared properties; unknown keys are not part of its contract."""

    name: str
    fields: tuple[Field, ...]
    description: str | None = None
    origin: str = ""
    tag: Tag | None = None
    #: Groups of keys of which at least one must be present (schema ``anyOf`` of ``required``).
    require_one_of: tuple[tuple[str, ...], ...] = ()


class OpenDef(msgspec.Struct, frozen=True, tag="open"):
    """An object with declared properties that also keeps every undeclared key.

    Emitted as a ``dict`` subclass with typed accessors, so decode → encode is lossless.
    """

    name: str
    fields: tuple[Field, ...]
    extra: TypeExpr
    description: str | None = None
    origin: str = ""


class AliasDef(msgspec.Struct, frozen=True, tag="alias"):
    name: str
    target: TypeExpr
    description: str | None = None
    origin: str = ""


class UnionDef(msgspec.Struct, frozen=True, tag="union"):
    """A named ``anyOf``; ``strategy`` is filled in when msgspec cannot decode it natively."""

    name: str
    members: tuple[TypeExpr, ...]
    description: str | None = None
    origin: str = ""
    strategy: Strategy | None = None


Definition = Union[StructDef, OpenDef, AliasDef, UnionDef]


# -- union decode strategies --------------------------------------------------------------


class Pick(msgspec.Struct, frozen=True, tag="pick"):
    """Decode as this member."""

    member: TypeExpr


class ByKind(msgspec.Struct, frozen=True, tag="kind"):
    """Branch on the JSON kind of the value (object, array, string, number, boolean, null)."""

    cases: tuple[tuple[str, Strategy], ...]


class ByValue(msgspec.Struct, frozen=True, tag="value"):
    """Branch on the value of a discriminating key; ``default`` covers absent or other values."""

    key: str
    cases: tuple[tuple[JSONScalar, Strategy], ...]
    default: Strategy | None = None


class ByKey(msgspec.Struct, frozen=True, tag="key"):
    """Branch on the presence of keys, first match wins; ``default`` when none is present."""

    cases: tuple[tuple[str, Strategy], ...]
    default: Strategy | None = None


class FirstValid(msgspec.Struct, frozen=True, tag="first"):
    """Try members in order; the first that validates wins (last resort, reported)."""

    options: tuple[Strategy, ...]


Strategy = Union[Pick, ByKind, ByValue, ByKey, FirstValid]


# -- methods (dispatch table) -------------------------------------------------------------


Kind = Literal["request", "notification"]
Side = Literal["client", "server"]
Channel = Literal["wire", "input"]


class Method(msgspec.Struct, frozen=True):
    name: str
    kind: Kind
    #: The sender: ``client`` means sent by the client to the server.
    direction: Side
    message_type: str
    params_type: str | None
    params_required: bool
    result_type: str | None
    #: Capability path on the receiving side that gates the method, e.g. ``("tools",)``.
    capability: tuple[str, ...] | None
    #: ``wire`` for JSON-RPC requests; ``input`` for 2026 embedded input requests.
    channel: Channel = "wire"
    #: Python name of the handler / client method, e.g. ``call_tool``, ``on_progress``.
    handler: str = ""


class Module(msgspec.Struct, frozen=True):
    version: str
    era: Literal["legacy", "modern"]
    dialect: str
    definitions: tuple[Definition, ...]
    #: Upstream definition names, in schema order (each is exposed by the types module).
    schema_names: tuple[str, ...]
    methods: tuple[Method, ...] = ()
    #: What loading the schema left out, and why (dangling ``$ref``s).
    warnings: tuple[str, ...] = ()
    #: Role (the runtime's stable name for a part of the protocol) → the type playing
    #: it (mostly a definition), found by where the protocol carries it (``roles.py``).
    roles: tuple[tuple[str, TypeExpr], ...] = ()

    def lookup(self) -> dict[str, Definition]:
        return {d.name: d for d in self.definitions}

    def role(self, role: str) -> str | None:
        """The name of the definition playing ``role`` (None where the schema has none,
        or where the role is played by an inline type)."""
        made = dict(self.roles).get(role)
        return made.name if isinstance(made, Named) else None
