"""A small OAuth 2.1 authorization server that exists only in the tests: RFC 8414
metadata, a JWKS, an authorization endpoint that approves at once (PKCE S256, the
``resource`` parameter, RFC 9207 ``iss``), a token endpoint (authorization code,
refresh token, client credentials), dynamic client registration and RFC 7662
introspection. A plain ASGI app: tests drive it in process (an ``httpx`` ASGI transport)
or serve it with uvicorn on 127.0.0.1.

Its keys are made with joserfc. Tests also mint tokens directly (``mint``): expired, not
yet valid, for another audience or issuer, signed with another key, ``alg: none``.
Switches make its endpoints misbehave: ``jwks_mode`` / ``introspection_mode`` ``"down"``
(HTTP 500), ``"garbage"`` (not JSON), ``"empty"`` (no keys / not an object),
``metadata_issuer`` names another issuer in its metadata, and ``forced`` answers a path
(any of them) with the bytes it holds, as HTTP 200 ``application/json``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode

from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class AuthServer:
    """The authorization server ``issuer`` (its own base URL), issuing tokens whose
    audience is what clients ask for in ``resource`` (default ``resource``)."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer.rstrip("/")
        self.resource = resource
        self.key = RSAKey.generate_key(2048, parameters={"kid": "rsa-1", "use": "sig"})
        self.ec_key = ECKey.generate_key("P-256", parameters={"kid": "ec-1", "use": "sig"})
        #: A key of nobody's: tokens signed with it must be refused.
        self.stranger = RSAKey.generate_key(2048, parameters={"kid": "rsa-1"})
        self.published = [self.key, self.ec_key]
        self.jwks_mode = "ok"
        self.introspection_mode = "ok"
        self.metadata_issuer: str | None = None
        #: path -> the body every request to it gets (200, application/json)
        self.forced: dict[str, bytes] = {}
        #: When set, a JWKS request sets ``jwks_asked`` and waits for the gate to open.
        self.jwks_gate: asyncio.Event | None = None
        self.jwks_asked: asyncio.Event | None = None
        self.jwks_fetches = 0
        self.introspections = 0
        self.codes: dict[str, dict[str, Any]] = {}
        self.opaque: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, Any]] = {}

    # -- tokens ----------------------------------------------------------------------------

    def claims(self, scope: str = "", **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": "alice",
            "aud": self.resource,
            "client_id": "test-client",
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(8),
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def mint(
        self,
        scope: str = "",
        *,
        key: Any = None,
        alg: str = "RS256",
        header: Any = None,
        **claims: Any,
    ) -> str:
        """A signed JWT (``key`` default the published RSA key; the EC one for ES256)."""
        if key is None:
            key = self.ec_key if alg.startswith("ES") else self.key
        head = {"alg": alg, "kid": key.kid, "typ": "at+jwt", **(header or {})}
        head = {k: v for k, v in head.items() if v is not None}
        return jwt.encode(head, self.claims(scope, **claims), key, algorithms=[alg])

    def unsigned(self, scope: str = "", **claims: Any) -> str:
        """An ``alg: none`` token (RFC 7519 §6: an empty signature)."""
        head = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
        body = b64url(json.dumps(self.claims(scope, **claims)).encode())
        return f"{head}.{body}."

    def opaque_token(self, scope: str = "", **claims: Any) -> str:
        """A random token only introspection knows."""
        token = secrets.token_urlsafe(32)
        self.opaque[token] = self.claims(scope, **claims)
        return token

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) for k in self.published]}

    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "introspection_endpoint": f"{base}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
            ],
            "authorization_response_iss_parameter_supported": True,
        }

    # -- ASGI ------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path, method = scope["path"], scope["method"]
        query = {k: v[0] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        forced = self.forced.get(path)
        if forced is not None:
            self.jwks_fetches += path == "/jwks"
            self.introspections += path == "/introspect"
            await self._raw(send, 200, forced, "application/json")
        elif path == "/.well-known/oauth-authorization-server":
            await self._json(send, 200, self.metadata())
        elif path == "/jwks":
            self.jwks_fetches += 1
            if self.jwks_gate is not None:
                if self.jwks_asked is not None:
                    self.jwks_asked.set()
                await self.jwks_gate.wait()
            await self._misbehaving(send, self.jwks_mode, self.jwks())
        elif path == "/authorize" and method == "GET":
            await self._authorize(send, query)
        elif path == "/token" and method == "POST":
            await self._token(send, form)
        elif path == "/register" and method == "POST":
            await self._register(send, json.loads(body or b"{}"))
        elif path == "/introspect" and method == "POST":
            self.introspections += 1
            await self._misbehaving(send, self.introspection_mode, self.introspect(form))
        else:
            await self._json(send, 404, {"error": "not_found"})

    async def _misbehaving(self, send: Any, mode: str, document: dict[str, Any]) -> None:
        if mode == "down":
            await self._json(send, 500, {"error": "server_error"})
        elif mode == "garbage":
            await self._raw(send, 200, b"<html>definitely not JSON", "text/html")
        elif mode == "empty":
            await self._json(send, 200, {"keys": []} if "keys" in document else [])  # type: ignore[arg-type]
        else:
            await self._json(send, 200, document)

    async def _authorize(self, send: Any, query: dict[str, str]) -> None:
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            await self._json(send, 400, {"error": "invalid_request"})
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        params = {"code": code, "iss": self.issuer}
        if "state" in query:
            params["state"] = query["state"]
        location = f"{query['redirect_uri']}?{urlencode(params)}"
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"location", location.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _token(self, send: Any, form: dict[str, str]) -> None:
        grant = form.get("grant_type")
        if grant == "authorization_code":
            asked = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = b64url(hashlib.sha256(verifier.encode()).digest())
            if asked is None or challenge != asked["code_challenge"]:
                await self._json(send, 400, {"error": "invalid_grant"})
                return
            scope, resource = asked.get("scope", ""), form.get("resource") or asked.get("resource")
        elif grant == "refresh_token":
            asked = self.refresh.pop(form.get("refresh_token", ""), None)
            if asked is None:
                await self._json(send, 400, {"error": "invalid_grant"})
                return
            scope, resource = asked["scope"], asked["resource"]
        elif grant == "client_credentials":
            scope, resource = form.get("scope", ""), form.get("resource")
        else:
            await self._json(send, 400, {"error": "unsupported_grant_type"})
            return
        resource = resource or self.resource
        refresh = secrets.token_urlsafe(16)
        self.refresh[refresh] = {"scope": scope, "resource": resource}
        token = self.mint(scope, aud=resource)
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": 300, "scope": scope}
        answer["refresh_token"] = refresh
        await self._json(send, 200, answer)

    async def _register(self, send: Any, metadata: dict[str, Any]) -> None:
        client = {**metadata, "client_id": "dcr-" + secrets.token_hex(4)}
        client["token_endpoint_auth_method"] = "none"
        client["client_id_issued_at"] = int(time.time())
        await self._json(send, 201, client)

    def introspect(self, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("token", "")
        claims = self.opaque.get(token)
        if claims is None:
            try:
                claims = jwt.decode(token, self.key, algorithms=["RS256"]).claims
            except Exception:
                return {"active": False}
        if claims.get("exp", 0) <= time.time():
            return {"active": False}
        return {"active": True, "token_type": "Bearer", **claims}

    async def _json(self, send: Any, status: int, document: Any) -> None:
        await self._raw(send, status, json.dumps(document).encode(), "application/json")

    async def _raw(self, send: Any, status: int, body: bytes, content_type: str) -> None:
        headers = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
