"""Elicitation for the client's version: forms an older version can show, and URL mode.

2025-11-25 added form fields 2025-06-18 cannot express: multi-select enums (``type:
array`` of enum strings, untitled or titled) and titled single-select enums (``oneOf`` of
``const``/``title``). Sent as they are, a 2025-06-18 client sees an invalid request (or a
field that silently lost its options). Each such field becomes the nearest form the older
version allows, chosen by what the peer's schema defines, and the answer comes back in the
form the handler asked for.

URL mode (2025-11-25 on) sends the user to a page instead of showing a form. A client
declares the modes it takes (``elicitation.form``, ``elicitation.url``; an ``elicitation``
naming neither means form, as 2025-06-18 had it), and is never asked in another. 2025-11-25
names each URL elicitation (``elicitationId``: the server's completion notification and
the -32042 error refer to it); 2026-07-28 dropped the name with the notification.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .negotiation import VersionInfo
from .json_values import JSONObject, as_array, as_object, objects

METHOD = "elicitation/create"
#: What a 2025-11-25 server sends when the interaction at a URL it sent ended.
COMPLETE = "notifications/elicitation/complete"
#: The params field naming a URL elicitation (2025-11-25 only).
ELICITATION_ID = "elicitationId"

#: Turns an answer (plain JSON) back into the form the handler asked for.
Restore = Callable[[Any], Any]


def _options(value: object) -> tuple[list[str], list[str] | None]:
    """The values of a multi-select's items, and their titles (None when untitled)."""
    items = as_object(value)
    if items is None:
        return [], None
    enum = as_array(items.get("enum"))
    if enum is not None:
        return [str(v) for v in enum], None
    choices = objects(items.get("anyOf") or items.get("oneOf"))
    return [str(c.get("const", "")) for c in choices], [str(c.get("title", "")) for c in choices]


def _described(field: JSONObject, extra: str) -> JSONObject:
    out: JSONObject = {"type": "string"}
    if isinstance(field.get("title"), str):
        out["title"] = field["title"]
    text = field.get("description")
    out["description"] = f"{text} ({extra})" if isinstance(text, str) and text else extra
    return out


def _single_from_titled(field: dict[str, Any]) -> dict[str, Any]:
    """A titled single select (``oneOf`` const/title) as ``enum`` plus ``enumNames``."""
    choices = objects(field.get("oneOf"))
    out = {k: v for k, v in field.items() if k in ("title", "description")}
    out["type"] = "string"
    out["enum"] = [str(c.get("const", "")) for c in choices]
    out["enumNames"] = [str(c.get("title", "")) for c in choices]
    return out


def _multi_as_text(field: dict[str, Any]) -> dict[str, Any]:
    """A multi-select as one text field listing its options (or a single select when at
    most one may be chosen)."""
    values, titles = _options(field.get("items"))
    if field.get("maxItems") == 1:
        out = {k: v for k, v in field.items() if k in ("title", "description")}
        out["type"] = "string"
        out["enum"] = values
        if titles is not None:
            out["enumNames"] = titles
        return out
    listed = ", ".join(values if titles is None else [f"{v} ({t})" for v, t in zip(values, titles)])
    return _described(field, f"one or more of: {listed}; separate them with commas")


def downgrade(params: Any, version: VersionInfo) -> tuple[Any, Restore | None]:
    """``params`` (plain JSON) of an elicitation request in the forms ``version`` allows
    (a URL elicitation named or not, as ``version`` has it), and how to restore its
    answer (None when nothing changed)."""
    types = version.binding.types
    request = as_object(params)
    if request is not None and mode_of(request) == "url":
        return url_params_for(request, version), None
    multi = hasattr(types, "MultiSelectEnumSchema")
    titled = hasattr(types, "TitledSingleSelectEnumSchema")
    schema = as_object(request.get("requestedSchema")) if request is not None else None
    properties = as_object(schema.get("properties")) if schema is not None else None
    if (multi and titled) or properties is None:
        return params, None
    lists: list[str] = []
    singles: list[str] = []
    for name, value in list(properties.items()):
        field = as_object(value)
        if field is None:
            continue
        if not multi and field.get("type") == "array":
            properties[name] = _multi_as_text(field)
            (singles if field.get("maxItems") == 1 else lists).append(name)
        elif not titled and field.get("type") == "string" and "oneOf" in field:
            properties[name] = _single_from_titled(field)
    if not lists and not singles:
        return params, None
    return params, lambda answer: _restore(answer, lists, singles)


def _restore(answer: Any, lists: list[str], singles: list[str]) -> Any:
    """Multi-select answers back as lists: a text field split at commas, a single select
    as a list of one."""
    content = as_object((as_object(answer) or {}).get("content"))
    if content is None:
        return answer
    for name in lists:
        value = content.get(name)
        if isinstance(value, str):
            content[name] = [part.strip() for part in value.split(",") if part.strip()]
    for name in singles:
        value = content.get(name)
        if isinstance(value, str):
            content[name] = [value]
    return answer


# -- modes -------------------------------------------------------------------------------------


def mode_of(params: Any) -> str:
    """The mode an elicitation request's ``params`` (plain JSON) asks in: ``url`` when it
    says so, else ``form`` (the default)."""
    request = as_object(params)
    return "url" if request is not None and request.get("mode") == "url" else "form"


def declares_mode(capabilities: Mapping[str, Any], mode: str) -> bool:
    """Whether a client that declared ``capabilities`` may be asked in ``mode``: it names
    the mode under ``elicitation``, or (form) declared elicitation naming no mode at all."""
    declared = capabilities.get("elicitation")
    if declared is None or declared is False:
        return False
    modes = as_object(declared) or {}
    if mode in modes:
        return modes[mode] is not None and modes[mode] is not False
    return mode == "form" and "form" not in modes and "url" not in modes


def has_url_mode(version: VersionInfo) -> bool:
    """Whether ``version`` defines URL-mode elicitation (2025-11-25 on)."""
    return hasattr(version.binding.types, "ElicitRequestURLParams")


def names_url_elicitations(version: VersionInfo) -> bool:
    """Whether ``version``'s URL elicitations carry an ``elicitationId`` (2025-11-25)."""
    params = getattr(version.binding.types, "ElicitRequestURLParams", None)
    return ELICITATION_ID in getattr(params, "__struct_encode_fields__", ())


def url_params_for(request: JSONObject, version: VersionInfo) -> JSONObject:
    """URL-mode ``request`` params (plain JSON, changed in place) as ``version`` has them:
    named (a fresh ``elicitationId`` when the handler gave none) where the version names
    URL elicitations, the name left out where it does not."""
    if names_url_elicitations(version):
        if not isinstance(request.get(ELICITATION_ID), str):
            request[ELICITATION_ID] = uuid.uuid4().hex
    else:
        request.pop(ELICITATION_ID, None)
    return request
