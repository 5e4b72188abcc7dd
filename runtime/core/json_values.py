"""Plain JSON values (what ``msgspec.json.decode`` returns untyped), narrowed for typing.

``isinstance(value, dict)`` tells a type checker nothing about the keys and values of
decoded JSON; these say what JSON guarantees: objects have string keys, and what is inside
is any JSON value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

JSONObject = dict[str, Any]
JSONArray = list[Any]


def as_object(value: object) -> JSONObject | None:
    """``value`` if it is a JSON object, else None."""
    return cast(JSONObject, value) if isinstance(value, dict) else None


def as_array(value: object) -> JSONArray | None:
    """``value`` if it is a JSON array, else None."""
    return cast(JSONArray, value) if isinstance(value, list) else None


def objects(value: object) -> list[JSONObject]:
    """The JSON objects in ``value`` when it is an array (others left out), else none."""
    items = as_array(value)
    return [cast(JSONObject, v) for v in items if isinstance(v, dict)] if items else []


def member(value: object, key: str) -> Any:
    """``value[key]`` when ``value`` is a mapping that holds it, else None."""
    if isinstance(value, Mapping):
        return cast("Mapping[str, Any]", value).get(key)
    return None


def listed(value: object) -> JSONArray:
    """``value`` itself when it is a list, else a list of just ``value``."""
    return cast(JSONArray, value) if isinstance(value, list) else [value]
