"""The decode hook the generated modules share, and the wording of its errors.

msgspec calls :func:`dec_hook` for every type it cannot decode natively; here those are
the classes that define ``__mcpgen_decode__`` (open objects and strategy unions). Errors
raised inside the hook lose msgspec's path, so each nested conversion words its own and
:func:`rethrow` merges the pieces into one path.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

#: A value no JSON document produces (absent keys, missing defaults).
MISSING: Any = object()
TOO_DEEP = "value nested too deeply to decode"
#: How msgspec begins its refusal of a key a Struct does not declare.
UNDECLARED = "Object contains unknown field"
PATH = re.compile(r" - at `\$([^`]*)`")


def kind_of(obj: Any) -> str:
    """The JSON kind of a decoded value, named as JSON Schema names it (and as the
    generator names the branches of a ``kind`` decision)."""
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    if isinstance(obj, (int, float)):
        return "number"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, list):
        return "array"
    return "object"


def tag_of(tp: Any) -> str | None:
    """The tag field of a tagged Struct class (None for any other type)."""
    config = getattr(tp, "__struct_config__", None) if isinstance(tp, type) else None
    return None if config is None else config.tag_field


def missing_tag(field: str) -> str:
    """msgspec's wording for an object that lacks a required key."""
    return f"Object missing required field `{field}`"


def nested(fn: Any, obj: Any, tp: Any, *, dec_hook: Any, at: str | None = None) -> Any:
    """Run a nested conversion; turn its error into one msgspec nests under the outer path."""
    try:
        return fn(obj, tp, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        message = str(exc)
        if at is not None:
            message = f"{message} - at `$.{at}`" if " - at `$" not in message else message
        raise ValueError(message) from None


def depth(message: str) -> int:
    """How deep in the value an error message says the problem is."""
    return sum(len(p) for p in PATH.findall(message))


def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec decode hook for every generated module of this package."""
    decode = _hooks.get(tp)
    if decode is None:
        decode = getattr(tp, "__mcpgen_decode__", None) if isinstance(tp, type) else None
        if decode is None:
            raise NotImplementedError(f"no decoder for {tp!r}")
        _hooks[tp] = decode
    return decode(obj)


#: The decode function of each type the hook has met.
_hooks: dict[Any, Callable[[Any], Any]] = {}


def merge_paths(message: str) -> str:
    """``msg - at `$.a` - at `$.b[0]``` (inner first) → ``msg - at `$.b[0].a```."""
    parts = PATH.findall(message)
    if len(parts) < 2:
        return message
    head = PATH.sub("", message)
    return f"{head} - at `${''.join(reversed(parts))}`"


def rethrow(exc: msgspec.ValidationError) -> msgspec.ValidationError:
    return msgspec.ValidationError(merge_paths(str(exc)))
