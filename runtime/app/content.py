"""Content a tool, prompt or resource function returns, whatever version it is served at.

``Image(data)``, ``Audio(data)`` and ``File(data)`` carry raw bytes and a MIME type; the
registry turns them into the content blocks of the application's version (base64 on the
wire). Text is a plain ``str``.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec


class Image(msgspec.Struct, frozen=True):
    """An image: ``data`` in the given format."""

    data: bytes
    mime_type: str = "image/png"


class Audio(msgspec.Struct, frozen=True):
    """Audio: ``data`` in the given format."""

    data: bytes
    mime_type: str = "audio/wav"


class File(msgspec.Struct, frozen=True):
    """A document, sent as an embedded resource: text when ``data`` is a ``str``, else a
    blob. ``uri`` names it (default: a URI of the tool that made it)."""

    data: bytes | str
    mime_type: str = "application/octet-stream"
    uri: str | None = None


Helper = (Image, Audio, File)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def resource_contents(uri: str, data: bytes | str, mime_type: str | None) -> dict[str, Any]:
    """Text or blob resource contents, as JSON (wire names)."""
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    if isinstance(data, str):
        contents["text"] = data
    else:
        contents["blob"] = b64(data)
    return contents


def block(value: Image | Audio | File, default_uri: str) -> dict[str, Any]:
    """A helper's content block as JSON (wire names), for any version's types."""
    if isinstance(value, Image):
        return {"type": "image", "data": b64(value.data), "mimeType": value.mime_type}
    if isinstance(value, Audio):
        return {"type": "audio", "data": b64(value.data), "mimeType": value.mime_type}
    contents = resource_contents(value.uri or default_uri, value.data, value.mime_type)
    return {"type": "resource", "resource": contents}
