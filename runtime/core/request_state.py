"""The integrity-protected ``requestState`` of modern multi-round-trip requests, and the
:class:`KeyRing` that signs it.

Kept apart from the rest of the runtime: only servers that answer ``input_required`` need
it, and its digests (``hashlib``, ``hmac``, ``json``: half a MiB of a process's memory
with OpenSSL's) are imported on first use.

Keys rotate without refusing a state in flight: a ring has one ``current`` key, which
signs, and ``accepted`` keys, which still verify. Each state names the key that signed it
(an id derived from the key, not the key), so a state of a key no longer in the ring is
refused as such. Staged across workers: (1) add the new key to every worker's accepted
keys; (2) once all have it, make it current everywhere, the old one accepted; (3) once a
state's lifetime (``StateSigner.ttl_seconds``, 10 minutes) has passed, drop the old key.
From the environment: ``MCPGEN_STATE_KEY`` (current, hex) and
``MCPGEN_STATE_KEYS_ACCEPTED`` (hex, separated by commas or spaces).
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .errors import INVALID_PARAMS, McpError
from .json_values import as_object

#: The environment variables a key ring is read from.
CURRENT_ENV, ACCEPTED_ENV = "MCPGEN_STATE_KEY", "MCPGEN_STATE_KEYS_ACCEPTED"
#: The shortest key taken (bytes): HMAC-SHA256 wants at least 128 bits.
MIN_KEY_BYTES = 16


def key_id(key: bytes) -> str:
    """What names ``key`` in the states it signs (8 characters; reveals nothing of it)."""
    import hashlib

    return _b64(hashlib.sha256(b"mcpgen requestState key id\0" + key).digest()[:6])


@dataclass(frozen=True)
class KeyRing:
    """The keys of signed state: ``current`` signs; it and every key of ``accepted``
    verify. Keys are at least :data:`MIN_KEY_BYTES` long."""

    current: bytes
    accepted: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        for key in (self.current, *self.accepted):
            if len(key) < MIN_KEY_BYTES:
                raise ValueError(
                    f"a state key needs at least {MIN_KEY_BYTES} bytes, not {len(key)}"
                )

    @classmethod
    def random(cls) -> KeyRing:
        """A ring of one key made now (a process's own, shared with nobody)."""
        return cls(os.urandom(32))

    @classmethod
    def of(cls, given: bytes | KeyRing | None, environ: Mapping[str, str] | None = None) -> KeyRing:
        """A ring from what a server is given: a ring, one key, or None (the environment's,
        else :meth:`random`)."""
        if isinstance(given, KeyRing):
            return given
        if given:
            return cls(given)
        return cls.from_environment(environ) or cls.random()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> KeyRing | None:
        """The ring :data:`CURRENT_ENV` and :data:`ACCEPTED_ENV` name (None when the first
        is unset); a value that is not hex, or too short, is a ``ValueError`` naming it."""
        env = os.environ if environ is None else environ
        current = env.get(CURRENT_ENV, "").strip()
        if not current:
            if env.get(ACCEPTED_ENV, "").strip():
                raise ValueError(f"{ACCEPTED_ENV} is set but {CURRENT_ENV} is not")
            return None
        accepted = env.get(ACCEPTED_ENV, "").replace(",", " ").split()
        return cls(
            _hex_key(CURRENT_ENV, current), tuple(_hex_key(ACCEPTED_ENV, k) for k in accepted)
        )

    def verifying(self, kid: str) -> bytes | None:
        """The key of the ring ``kid`` names (None: none of them)."""
        import hmac

        for key in (self.current, *self.accepted):
            if hmac.compare_digest(key_id(key), kid):
                return key
        return None


def _hex_key(name: str, value: str) -> bytes:
    try:
        key = bytes.fromhex(value)
    except ValueError:
        raise ValueError(f"{name} must be hex (e.g. from `openssl rand -hex 32`)") from None
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"{name} must hold at least {MIN_KEY_BYTES} bytes ({2 * MIN_KEY_BYTES} hex digits)"
        )
    return key


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
    collected answers to the method, a digest of the request's own params, and an expiry,
    under the ``keys`` ring's current key (its id in front).

    Servers behind several workers share the ring by configuration.
    """

    keys: KeyRing = field(default_factory=KeyRing.random)
    ttl_seconds: float = 600.0

    def sign(self, method: str, digest: str, answers: Mapping[str, Any]) -> str:
        import hashlib
        import hmac
        import json

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
        key = self.keys.current
        mac = hmac.new(key, payload, hashlib.sha256).digest()
        return key_id(key) + "." + _b64(payload) + "." + _b64(mac)

    def verify(self, state: str, method: str, digest: str) -> dict[str, Any]:
        """The answers carried by ``state``; raises ``StateError`` on any tampering, and
        for a state signed with a key the ring no longer holds."""
        import hashlib
        import hmac
        import json

        try:
            kid, payload_part, mac_part = state.split(".")
            payload, mac = _unb64(payload_part), _unb64(mac_part)
        except (ValueError, binascii.Error):
            raise StateError("malformed") from None
        key = self.keys.verifying(kid)
        if key is None:
            raise StateError("signed with a key this server does not hold (another, or retired)")
        if not hmac.compare_digest(mac, hmac.new(key, payload, hashlib.sha256).digest()):
            raise StateError("bad signature")
        try:
            data = as_object(json.loads(payload))
        except ValueError:
            raise StateError("malformed") from None
        if data is None:
            raise StateError("malformed")
        if data.get("m") != method or data.get("d") != digest:
            raise StateError("issued for another request")
        expiry = data.get("x", 0)
        if not isinstance(expiry, (int, float)) or expiry < time.time():
            raise StateError("expired")
        return as_object(data.get("a")) or {}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def params_digest(params: msgspec.Raw | None) -> str:
    """A digest of the params that identify a request, leaving out what changes between
    rounds (``_meta``, ``inputResponses``, ``requestState``)."""
    import hashlib

    plain: Any = msgspec.json.decode(params or b"{}")
    obj = as_object(plain)
    if obj is not None:
        for volatile in ("_meta", "inputResponses", "requestState"):
            obj.pop(volatile, None)
    return hashlib.sha256(msgspec.json.encode(plain, order="sorted")).hexdigest()[:32]
