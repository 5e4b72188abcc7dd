"""The step of the authorization code flow that needs the user, made pluggable.

An :class:`Authorizer` takes the authorization URL to the authorization server and brings
back the query of the redirect to its ``redirect_uri`` (``code``, ``state``, ``iss`` or
``error``); the flow checks them. Two ship:

* :class:`BrowserAuthorizer` (the default): opens the user's browser and waits for the
  redirect on a loopback callback server (``http://127.0.0.1:<port>/callback``, RFC 8252
  §7.3), bounded in time and in what it reads; requests for other paths or with another
  ``state`` are answered and ignored.
* :class:`HeadlessAuthorizer`: fetches the authorization URL itself and follows its
  redirects up to the redirect URI, for authorization servers that answer without a user
  (tests, the conformance suite, pre-approved automation).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import webbrowser
from collections.abc import Callable, Mapping
from typing import Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from .types import AuthorizationError

log = logging.getLogger("mcpgen.runtime.client.auth.oauth")


class Authorizer(Protocol):
    """The interactive step: authorization URL in, redirect query out."""

    #: Where the authorization server sends the user back (registered with it).
    @property
    def redirect_uri(self) -> str: ...

    #: Whether it waits for a person (the flow then logs in before the MCP connection
    #: starts, so no request's timeout runs while the user types a password).
    @property
    def interactive(self) -> bool: ...

    async def authorize(self, url: str, state: str) -> Mapping[str, str]: ...


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc.lower(), a.path or "/") == (
        b.scheme,
        b.netloc.lower(),
        b.path or "/",
    )


class HeadlessAuthorizer:
    """Follows the authorization server's redirects to ``redirect_uri`` without a browser
    (at most ``max_redirects``, each within ``timeout`` seconds)."""

    interactive = False

    def __init__(
        self,
        redirect_uri: str = "http://127.0.0.1:33418/callback",
        *,
        http: httpx.AsyncClient | None = None,
        max_redirects: int = 5,
        timeout: float = 30.0,
    ) -> None:
        self._redirect_uri = redirect_uri
        self.http = http
        self.max_redirects = max_redirects
        self.timeout = timeout

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str, state: str) -> Mapping[str, str]:
        own = self.http is None
        http = self.http or httpx.AsyncClient()
        try:
            for _ in range(self.max_redirects + 1):
                try:
                    status, location = await asyncio.wait_for(self._hop(http, url), self.timeout)
                except (asyncio.TimeoutError, httpx.TimeoutException):
                    raise AuthorizationError(
                        f"the authorization endpoint {url} did not answer within {self.timeout:g} s"
                    ) from None
                except httpx.HTTPError as exc:
                    raise AuthorizationError(
                        f"the authorization endpoint {url} failed: {exc}"
                    ) from None
                if location is None:
                    raise AuthorizationError(
                        f"the authorization endpoint answered HTTP {status} instead of "
                        "redirecting back (it may need a user: use BrowserAuthorizer)"
                    )
                url = urljoin(url, location)
                if _same_endpoint(url, self.redirect_uri):
                    return dict(parse_qsl(urlsplit(url).query))
            raise AuthorizationError(
                f"more than {self.max_redirects} redirects from the authorization endpoint"
            )
        finally:
            if own:
                await http.aclose()

    async def _hop(self, http: httpx.AsyncClient, url: str) -> tuple[int, str | None]:
        """One request's status and redirect target (its body is never read)."""
        async with http.stream("GET", url, follow_redirects=False, timeout=self.timeout) as answer:
            return answer.status_code, (
                answer.headers.get("location") if answer.is_redirect else None
            )


_PAGE = (
    "<!doctype html><meta charset=utf-8><title>{title}</title>"
    "<p style='font:16px sans-serif;margin:3em'>{text}</p>"
)


class BrowserAuthorizer:
    """Opens the authorization URL in the browser and takes the redirect on a loopback
    server bound to ``host`` (127.0.0.1) and ``port`` (0: a free one, chosen once and kept
    for this authorizer's life, so the registered redirect URI stays valid). Waits at
    most ``timeout`` seconds for the user; reads at most ``max_request_bytes`` of a request
    and gives each connection ``read_timeout`` seconds."""

    interactive = True

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        read_timeout: float = 10.0,
        max_request_bytes: int = 16 * 1024,
        open_url: Callable[[str], object] = webbrowser.open,
    ) -> None:
        self.host = host
        self.path = path
        self.timeout = timeout
        self.read_timeout = read_timeout
        self.max_request_bytes = max_request_bytes
        self.open_url = open_url
        self._socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port: int = self._socket.getsockname()[1]

    @property
    def redirect_uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    def close(self) -> None:
        self._socket.close()

    async def authorize(self, url: str, state: str) -> Mapping[str, str]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, str]] = loop.create_future()
        self._socket.listen(16)
        listener = self._socket.dup()  # the server closes its socket; the port stays ours
        listener.setblocking(False)

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                params = await asyncio.wait_for(self._read(reader), self.read_timeout)
                if params is None:
                    await _answer(writer, 404, "Not found", "Nothing here.")
                elif params.get("state") != state:
                    await _answer(
                        writer, 400, "Unexpected", "This sign-in is not the one waited for."
                    )
                else:
                    text = (
                        "Signed in. You can close this window."
                        if "code" in params
                        else ("Sign-in was refused. You can close this window.")
                    )
                    await _answer(writer, 200, "mcpgen", text)
                    if not done.done():
                        done.set_result(params)
            except (asyncio.TimeoutError, OSError, ValueError, asyncio.LimitOverrunError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(serve, sock=listener, limit=self.max_request_bytes)
        try:
            log.info("opening the browser for authorization: %s", url)
            if not await asyncio.to_thread(self.open_url, url):
                log.warning("could not open a browser; visit this URL to authorize: %s", url)
            return await asyncio.wait_for(done, self.timeout)
        except asyncio.TimeoutError:
            raise AuthorizationError(
                f"nobody completed the authorization within {self.timeout:g} s"
            ) from None
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 1.0)

    async def _read(self, reader: asyncio.StreamReader) -> dict[str, str] | None:
        """The query of a ``GET <path>?...`` request (None for any other request)."""
        head = await reader.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0]
        parts = urlsplit(target)
        if method != "GET" or parts.path != self.path:
            return None
        return dict(parse_qsl(parts.query))


async def _answer(writer: asyncio.StreamWriter, status: int, title: str, text: str) -> None:
    body = _PAGE.format(title=title, text=text).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
