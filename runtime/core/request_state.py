"""The integrity-protected ``requestState`` of modern multi-round-trip requests.

Kept apart from the rest of the runtime: only servers that answer ``input_required`` need
it (and its imports).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .errors import INVALID_PARAMS, McpError
from .json_values import as_object


class StateError(McpError):
    def __init__(self, reason: str) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Invalid params: requestState rejected ({reason})",
            {"path": "$.params.requestState"},
        )


@dataclass
class StateSigner:
    """Signs and verifies ``requestState``: HMAC-SHA256 over a payload that binds the
    collected answers to the method, a digest of the request's own params, and an expiry.

    Servers behind several workers share ``key`` by configuration.
    """

    key: bytes = field(default_factory=lambda: os.urandom(32))
    ttl_seconds: float = 600.0

    def sign(self, method: str, digest: str, answers: Mapping[str, Any]) -> str:
        payload = json.dumps(
            {
                "m": method,
                "d": digest,
                "x": int(time.time() + self.ttl_seconds),
                "a": answers,
            },
            separators=(",", ":"),
            sort_keys=True,
        ).encode()
        mac = hmac.new(self.key, payload, hashlib.sha256).digest()
        return _b64(payload) + "." + _b64(mac)

    def verify(self, state: str, method: str, digest: str) -> dict[str, Any]:
        """The answers carried by ``state``; raises ``StateError`` on any tampering."""
        try:
            payload_part, mac_part = state.split(".")
            payload, mac = _unb64(payload_part), _unb64(mac_part)
        except (ValueError, binascii.Error):
            raise StateError("malformed") from None
        if not hmac.compare_digest(mac, hmac.new(self.key, payload, hashlib.sha256).digest()):
            raise StateError("bad signature")
        data = json.loads(payload)
        if data.get("m") != method or data.get("d") != digest:
            raise StateError("issued for another request")
        if data.get("x", 0) < time.time():
            raise StateError("expired")
        return as_object(data.get("a")) or {}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def params_digest(params: msgspec.Raw | None) -> str:
    """A digest of the params that identify a request, leaving out what changes between
    rounds (``_meta``, ``inputResponses``, ``requestState``)."""
    plain: Any = msgspec.json.decode(params or b"{}")
    obj = as_object(plain)
    if obj is not None:
        for volatile in ("_meta", "inputResponses", "requestState"):
            obj.pop(volatile, None)
    return hashlib.sha256(msgspec.json.encode(plain, order="sorted")).hexdigest()[:32]
