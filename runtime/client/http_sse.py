"""The client side of the 2024-11-05 HTTP+SSE transport: a GET opens the server's stream,
whose first event (``endpoint``) names where to POST; every message of ours is a POST
there, everything the server sends arrives on the stream.

The session is the stream: when it drops, every request waiting for an answer fails at
once (it is lost with the session), and the transport opens a new stream after the
server's ``retry`` delay (at most ``max_reconnects`` times in a row), counting the old
session as lost, so that the ``ClientSession`` initializes again (as it does for a
Streamable HTTP session the server lost: ``runtime.client.recovery``).

An endpoint on another origin than the stream's is refused: a server cannot send this
client's messages, and their credentials, to a third party.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import msgspec

from ..core import jsonrpc
from ..core.errors import INTERNAL_ERROR, ConnectionClosed
from ..core.jsonrpc import RequestId
from ..core.limits import CLIENT, Limits
from ..http.bounded import TooLarge, read_bounded
from .http import SseParser

log = logging.getLogger("mcpgen.runtime.client.http_sse")


class _Peek(msgspec.Struct):
    id: Any = None
    method: Any = None


_peek = msgspec.json.Decoder(_Peek)


class SseClientTransport:
    """A ``ClientSession`` transport over HTTP+SSE at ``url`` (the server's SSE endpoint,
    e.g. ``http://host/sse``). ``open()`` before use; ``timeout`` bounds connecting and
    each POST; ``auth`` is an ``httpx.Auth`` (e.g. ``runtime.client.auth.oauth.OAuth``)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        max_reconnects: int = 3,
        limits: Limits = CLIENT,
        auth: httpx.Auth | None = None,
    ) -> None:
        if auth is not None and client is not None:
            raise ValueError("give the httpx client its auth (httpx.AsyncClient(auth=...))")
        self.url = url
        self.extra_headers = dict(headers or {})
        self.limits = limits
        self.timeout = timeout
        self.max_reconnects = max_reconnects
        self.http = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=10.0), auth=auth
        )
        self._own_client = client is None
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        #: Where this session's messages go (the ``endpoint`` event), once known.
        self.endpoint: str | None = None
        #: Sessions the stream took with it when it dropped (``ClientSession`` renews).
        self.sessions_lost = 0
        self.lost_session_id: str | None = None
        self._waiting: set[RequestId] = set()
        #: Set while an endpoint is known (cleared while a dropped stream is reopened).
        self._connected = asyncio.Event()
        self._messages = 0
        self._ready: asyncio.Future[str] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def session_id(self) -> str | None:
        """The endpoint names the session: it is its identity."""
        return self.endpoint

    async def open(self) -> None:
        """Open the stream and wait for its ``endpoint`` event (``timeout``)."""
        self._ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise ConnectionClosed(
                f"no endpoint event from {self.url} within {self.timeout:g} s"
            ) from None
        except BaseException:
            await self.close()
            raise

    async def receive(self) -> bytes | None:
        return await self.queue.get()

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        if self._closed:
            raise ConnectionError("transport closed")
        endpoint = self.endpoint
        try:
            peeked = _peek.decode(data)
        except msgspec.DecodeError:
            peeked = _Peek()
        request_id = peeked.id if peeked.method is not None else None
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            self._waiting.add(request_id)
        else:
            request_id = None
        if endpoint is None:  # the stream is being opened again: wait for it (bounded)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._connected.wait(), self.timeout)
            endpoint = self.endpoint
        if endpoint is None:
            self._fail(request_id, "the SSE stream is closed: no endpoint to post to")
            return
        headers = {"Content-Type": "application/json", **self.extra_headers}
        try:
            async with self.http.stream("POST", endpoint, content=data, headers=headers) as got:
                if got.is_success:
                    return
                body = await read_bounded(got, self.limits.max_message_bytes)
        except (httpx.HTTPError, OSError, TooLarge) as exc:
            self._fail(request_id, f"posting to {endpoint} failed: {exc or type(exc).__name__}")
            return
        messages, _ = jsonrpc.parse(body) if body else ([], False)
        error = messages[0] if messages else None
        if request_id is not None and isinstance(error, jsonrpc.ErrorResponse):
            self._waiting.discard(request_id)
            self.queue.put_nowait(
                jsonrpc.encode_error(request_id, error.code, error.message, error.data)
            )
        else:
            self._fail(request_id, f"HTTP {got.status_code} from {endpoint}")

    async def _read(self) -> None:
        """Read the stream; when it drops, fail what waits and open a new one."""
        parser = SseParser(self.limits.max_message_bytes)
        failures = 0
        while not self._closed:
            seen = self._messages
            try:
                await self._stream(parser)
                # a stream that carried messages was a session; one that did not counts
                # toward giving up, so a server dropping every stream at once is left
                failures = 0 if self._messages > seen else failures + 1
            except (httpx.HTTPError, OSError, TooLarge, ConnectionClosed) as exc:
                log.debug("SSE stream %s: %s", self.url, exc)
                failures += 1
                if self._ready is not None and not self._ready.done():
                    self._ready.set_exception(
                        exc if isinstance(exc, ConnectionClosed) else ConnectionClosed(str(exc))
                    )
                    return
            if self._closed:
                return
            self._drop_session()
            if failures > self.max_reconnects:
                log.info("SSE stream %s: giving up after %d attempts", self.url, failures)
                self.queue.put_nowait(None)
                return
            delay = (parser.retry_ms if parser.retry_ms is not None else 1000) / 1000
            await asyncio.sleep(delay)

    async def _stream(self, parser: SseParser) -> None:
        headers = {"Accept": "text/event-stream", **self.extra_headers}
        timeout = httpx.Timeout(self.timeout, read=None)  # the stream is quiet when idle
        async with self.http.stream("GET", self.url, headers=headers, timeout=timeout) as got:
            kind = got.headers.get("content-type", "").split(";", 1)[0].strip()
            if got.status_code != 200 or kind != "text/event-stream":
                raise ConnectionClosed(
                    f"HTTP {got.status_code} ({kind or 'no content type'}) from GET"
                    f" {self.url}: not an SSE endpoint"
                )
            async for chunk in got.aiter_text():
                for event, data in parser.events(chunk):
                    if event == "endpoint":
                        self._found(data)
                    elif event == "message":
                        self._received(data.encode())

    def _found(self, data: str) -> None:
        where = urljoin(self.url, data.strip())
        ours, theirs = urlsplit(self.url), urlsplit(where)
        if (ours.scheme, ours.netloc) != (theirs.scheme, theirs.netloc):
            raise ConnectionClosed(f"the endpoint {where} is not on the stream's origin")
        self.endpoint = where
        self._connected.set()
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(where)

    def _received(self, frame: bytes) -> None:
        try:
            peeked = _peek.decode(frame)
        except msgspec.DecodeError:
            peeked = _Peek()
        if peeked.method is None and isinstance(peeked.id, (str, int)):
            self._waiting.discard(peeked.id)
        self._messages += 1
        self.queue.put_nowait(frame)

    def _drop_session(self) -> None:
        """The stream (and so the session) is gone: what waits fails now."""
        if self.endpoint is None:
            return
        self.lost_session_id, self.endpoint = self.endpoint, None
        self._connected.clear()
        self.sessions_lost += 1
        for request_id in list(self._waiting):
            self._fail(request_id, "the server closed the SSE stream, and the session with it")

    def _fail(self, request_id: RequestId | None, message: str) -> None:
        if request_id is None:
            log.debug("%s", message)
            return
        self._waiting.discard(request_id)
        self.queue.put_nowait(jsonrpc.encode_error(request_id, INTERNAL_ERROR, message))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._own_client:
            await self.http.aclose()
        self._connected.set()  # a sender waiting for a new stream stops waiting
        self.queue.put_nowait(None)


__all__ = ["SseClientTransport"]
