"""The value a field takes when its key is absent.

Two sources: a protocol default the overrides state (``resultType`` absent means
``complete``), and the schema's own ``default`` keyword when it is a JSON scalar. Either
applies only where the value is valid for the field, however upstream types the field:
its JSON type, an enum or ``const`` holding it, a ``$ref`` to such a schema, a union.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datamodel_code_generator.parser.jsonschema import (
    JsonSchemaObject,  # pyright: ignore[reportPrivateImportUsage]
)

#: No default: the field is required, or absent stays absent.
NO_DEFAULT: Any = object()

#: ``node`` with ``allOf`` folded and ``$ref``s followed; None when a ref dangles or loops.
Resolve = Callable[[JsonSchemaObject], "JsonSchemaObject | None"]

#: Whether a Python value is an instance of a JSON-Schema ``type`` (a bool is no number).
_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}
#: The deepest union nesting looked into.
_MAX_DEPTH = 16


def default_of(node: JsonSchemaObject, protocol_default: Any, resolve: Resolve) -> Any:
    """The field's default: ``protocol_default`` (``NO_DEFAULT`` if none), else the
    schema's scalar ``default``; the first that ``node`` accepts, or ``NO_DEFAULT``."""
    candidates = [] if protocol_default is NO_DEFAULT else [protocol_default]
    if "default" in node.model_fields_set and isinstance(node.default, (str, int, float, bool)):
        candidates.append(node.default)
    return next((v for v in candidates if accepts(node, v, resolve)), NO_DEFAULT)


def accepts(node: JsonSchemaObject, value: Any, resolve: Resolve, depth: int = 0) -> bool:
    """Whether ``value`` is valid for ``node``, as far as its type, ``enum``, ``const``
    and unions say."""
    resolved = resolve(node) if depth <= _MAX_DEPTH else None
    if resolved is None:
        return False
    if "const" in resolved.extras:
        return _same(resolved.extras["const"], value)
    if resolved.enum:
        return any(_same(option, value) for option in resolved.enum)
    if resolved.anyOf:
        return any(
            accepts(a, value, resolve, depth + 1)
            for a in resolved.anyOf
            if isinstance(a, JsonSchemaObject)
        )
    kinds = resolved.type if isinstance(resolved.type, list) else [resolved.type]
    return any(_JSON_TYPES.get(str(kind), lambda _: False)(value) for kind in kinds if kind)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)
