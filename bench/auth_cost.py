"""What OAuth costs a stateless HTTP ``tools/call``: the ``App`` echo server (``ours-app``)
unprotected, then protected by a ``ResourceServer`` with a ``JwtVerifier`` whose keys are
fetched once (an in-process JWKS): with the same token on every request (the verdict
cached per token: what a client does between refreshes), and with a new token on every
request (RS256, ES256: a signature check and the claims each time, keys cached).

Wall clock in process (the driver of ``app_instructions``, no socket), rounds alternating
between the setups so that load drifts hit all of them; then, with valgrind, cachegrind's
instructions and estimated cycles per request of the unprotected app and of the cached
verdict, caches evicted before every request (as ``app_instructions`` measures).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from typing import Any

from . import BENCHMARKS
from .harness import BenchError, emit, heading, load, load_note, note, progress, table
from .profiles import App, asgi_app, drive

NAME = "auth_cost"
RESOURCE = "http://127.0.0.1:3001/mcp"
ISSUER = "http://auth.bench"
SCOPE = "mcp:tools"
#: The cachegrind child's key for the protected app (``app_instructions --child``).
PROTECTED = "ours-app-auth"


class Keys:
    """An authorization server's signing keys, its JWKS as an ASGI app, and tokens."""

    def __init__(self, rsa: bool = True) -> None:
        from joserfc.jwk import ECKey, RSAKey

        self.ec = ECKey.generate_key("P-256", parameters={"kid": "ec", "use": "sig"})
        # RSA key generation takes a random time: a cachegrind child (whose runs of two
        # lengths are subtracted) does without.
        self.rsa = (
            RSAKey.generate_key(2048, parameters={"kid": "rsa", "use": "sig"}) if rsa else None
        )
        import json

        keys = [k.as_dict(private=False) for k in (self.rsa, self.ec) if k is not None]
        self.jwks = json.dumps({"keys": keys}).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        start = {"type": "http.response.start", "status": 200, "headers": []}
        await send(start)
        await send({"type": "http.response.body", "body": self.jwks})

    def token(self, alg: str = "RS256", n: int = 0) -> str:
        from joserfc import jwt

        key = self.ec if alg == "ES256" else self.rsa
        assert key is not None
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": RESOURCE, "sub": f"user-{n}", "scope": SCOPE}
        claims |= {"iat": now, "exp": now + 3600, "client_id": "bench"}
        return jwt.encode({"alg": alg, "kid": key.kid}, claims, key, algorithms=[alg])


def protected(keys: Keys) -> App:
    """``ours-app``'s server behind a resource server (keys through an ASGI transport)."""
    import httpx

    from mcpgen.runtime.http.auth import JwtVerifier, ResourceServer
    from mcpgen.runtime.http.endpoint import McpHttpApp

    from .profiles import server_script

    fetch = httpx.AsyncClient(transport=httpx.ASGITransport(app=keys), base_url=ISSUER)
    verifier = JwtVerifier(issuer=ISSUER, audience=RESOURCE, jwks_uri=f"{ISSUER}/jwks", http=fetch)
    auth = ResourceServer(
        verifier, resource=RESOURCE, authorization_servers=[ISSUER], required_scopes=[SCOPE]
    )
    return McpHttpApp(server_script("ours").build("http", True), auth=auth)


def child_app() -> tuple[App, list[tuple[bytes, bytes]]]:
    """What the cachegrind child drives for ``PROTECTED``: the app and one token."""
    keys = Keys(rsa=False)
    return protected(keys), [(b"authorization", f"Bearer {keys.token('ES256')}".encode())]


class Rotating:
    """An ``authorization`` header whose token changes on every request: each one is
    verified anew (the keys stay cached)."""

    def __init__(self, tokens: list[str]) -> None:
        self.values = [[(b"authorization", f"Bearer {t}".encode())] for t in tokens]
        self.index = 0

    def __call__(self) -> list[tuple[bytes, bytes]]:
        self.index += 1
        return self.values[self.index % len(self.values)]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    start = load()
    keys = Keys()
    progress(f"minting {args.n} RS256 and {args.n} ES256 tokens")
    setups: dict[str, tuple[App, Any]] = {
        "unprotected": (asgi_app("ours-app"), ()),
        "token, verdict cached": (
            protected(keys),
            [(b"authorization", f"Bearer {keys.token()}".encode())],
        ),
        "new RS256 token each request": (
            protected(keys),
            Rotating([keys.token("RS256", i) for i in range(args.n + 60)]),
        ),
        "new ES256 token each request": (
            protected(keys),
            Rotating([keys.token("ES256", i) for i in range(args.n + 60)]),
        ),
    }
    heading(
        f"stateless tools/call of the App echo server in process, µs per request (median of "
        f"{args.rounds} rounds of {args.n}, setups alternating)"
    )
    samples: dict[str, list[float]] = {name: [] for name in setups}
    for round_ in range(args.rounds):
        progress(f"round {round_ + 1} of {args.rounds}")
        for name, (app, headers) in setups.items():
            auth = getattr(app, "auth", None)
            if auth is not None:  # every round verifies its tokens anew
                auth.cache.clear()
            samples[name].append(asyncio.run(drive(app, args.n, 1, headers=headers)))
    medians = {name: round(statistics.median(v), 1) for name, v in samples.items()}
    base = medians["unprotected"]
    rows = [
        [name, medians[name], round(min(v), 1), round(max(v), 1), round(medians[name] - base, 1)]
        for name, v in samples.items()
    ]
    print(table(["setup", "µs median", "min", "max", "µs over unprotected"], rows))
    payload: dict[str, Any] = {"n": args.n, "rounds": args.rounds, "us_per_request": medians}
    if not args.no_cachegrind:
        payload["cachegrind"] = instructions(args)
    return emit(NAME, payload | {"load_average": load_note(start)})


def instructions(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    from .app_instructions import COUNTERS
    from .app_instructions import per_request as counted

    heading(
        "the same under cachegrind, caches evicted before every request: per request = "
        f"(run of {args.n2} - run of {args.n1}) / {args.n2 - args.n1}, minus a null app's"
    )
    progress("the null app: two cachegrind runs")
    base = counted("null", args.n1, args.n2)
    found: dict[str, dict[str, float]] = {}
    for label, key in (("unprotected", "ours-app"), ("token, verdict cached", PROTECTED)):
        progress(f"{label}: two cachegrind runs")
        raw = {k: v - base[k] for k, v in counted(key, args.n1, args.n2).items()}
        cycles = raw["ir"] + 10 * (raw["i1"] + raw["d1"]) + 100 * raw["ll"]
        found[label] = {k: round(raw[k], 1) for k in COUNTERS.values()} | {"cycles": round(cycles)}
    rows = [[k, f"{f['ir']:,.0f}", f"{f['cycles']:,.0f}"] for k, f in found.items()]
    print(table(["setup", "instructions", "est. cycles"], rows))
    extra = found["token, verdict cached"]["ir"] - found["unprotected"]["ir"]
    note(f"a protected request with a known token: {extra:,.0f} more instructions")
    return found


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--n", type=int, default=2000, help="requests per round and setup (2000)")
    p.add_argument("--rounds", type=int, default=5, help="rounds (5)")
    p.add_argument("--n1", type=int, default=100, help="cachegrind: shorter run (100)")
    p.add_argument("--n2", type=int, default=400, help="cachegrind: longer run (400)")
    p.add_argument("--no-cachegrind", action="store_true", help="wall clock only")
    args = p.parse_args(argv)
    if args.n < 1 or args.rounds < 1 or args.n2 <= args.n1 or args.n1 < 1:
        raise BenchError("--n, --rounds, --n1 must be positive and --n2 exceed --n1")
    return measure(args)


if __name__ == "__main__":
    main()
