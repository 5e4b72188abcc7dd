"""Access tokens the resource server must refuse, one per way a token goes wrong: each
made by the test-only authorization server (``support.auth_server``), with the words the
refusal's ``error_description`` must carry."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from peers.auth_app import BASE_SCOPE
from support.auth_server import AuthServer, b64url

BAD_TOKENS: dict[str, tuple[Callable[[AuthServer], str], str]] = {
    "expired": (lambda az: az.mint(BASE_SCOPE, exp=1_000_000), "expired"),
    "expired beyond the leeway": (
        lambda az: az.mint(BASE_SCOPE, exp=int(time.time()) - 120),
        "expired",
    ),
    "not yet valid": (lambda az: az.mint(BASE_SCOPE, nbf=4_000_000_000), "not valid yet"),
    "issued in the future": (lambda az: az.mint(BASE_SCOPE, iat=4_000_000_000), "future"),
    "another audience": (
        lambda az: az.mint(BASE_SCOPE, aud="https://other.example/mcp"),
        "another audience",
    ),
    "no audience": (lambda az: az.mint(BASE_SCOPE, aud=None), "aud"),
    "another issuer": (lambda az: az.mint(BASE_SCOPE, iss="http://evil.test"), "another issuer"),
    "no expiry": (lambda az: az.mint(BASE_SCOPE, exp=None), "exp"),
    "another key": (lambda az: az.mint(BASE_SCOPE, key=az.stranger), "signature"),
    "alg none": (lambda az: az.unsigned(BASE_SCOPE), "algorithm"),
    "tampered payload": (
        lambda az: _tampered(az.mint(""), {"scope": BASE_SCOPE + " files:write"}),
        "signature",
    ),
    "tampered signature": (lambda az: az.mint(BASE_SCOPE)[:-6] + "AAAAAA", "signature"),
    "HS256 keyed with the public key": (lambda az: _hmac_confusion(az), "algorithm"),
    "unknown kid": (lambda az: az.mint(BASE_SCOPE, header={"kid": "nobody"}), "key"),
    "not a JWT": (lambda az: "abc.def", "not a signed JWT"),
    "a JWE-shaped token": (lambda az: "a.b.c.d.e", "not a signed JWT"),
    "header not JSON": (lambda az: b64url(b"{nope") + ".e30.sig", "header"),
}


def _tampered(token: str, claims: dict[str, Any]) -> str:
    head, body, signature = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=="))
    payload.update(claims)
    return f"{head}.{b64url(json.dumps(payload).encode())}.{signature}"


def _hmac_confusion(az: AuthServer) -> str:
    """The classic: HS256 signed with the RSA public key's bytes as the secret."""
    head = b64url(json.dumps({"alg": "HS256", "kid": az.key.kid}).encode())
    body = b64url(json.dumps(az.claims(BASE_SCOPE)).encode())
    secret = json.dumps(az.key.as_dict(private=False)).encode()
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(mac)}"
