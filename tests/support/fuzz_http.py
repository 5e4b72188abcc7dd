"""The HTTP drivers of the fuzz suite: the everything server's ASGI app called in process
(hand-built scopes, a bounded wait per exchange) and a real uvicorn on 127.0.0.1.

Legacy cases run in a session of their worker (``initialize`` done at one legacy version,
renewed when a case ends it); a case with two frames sends them as two concurrent POSTs
(duplicate ids). A server request on a legacy SSE stream is refused by a POST, as a bare
client would. Tracebacks the app logs are caught by a logging handler and charged, through
a context variable, to the case whose task logged them.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import re
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from support.fuzz_oracle import INVALID_CODES, Frame, id_key
from support.fuzz_report import Tally, traceback_signature
from support.fuzzing import (
    DEADLINE,
    LEGACY,
    SESSION,
    STATE_KEY,
    VERSION,
    Base,
    Case,
    answer_problem,
    default_headers,
    frame_of,
    modern_meta,
    request,
    strict_json,
)

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402
from mcpgen.runtime.http.endpoint import McpHttpApp

Headers = list[tuple[bytes, bytes]]
Exchange = Callable[[str, str, bytes, Headers, bytes, "Reply"], Awaitable[None]]
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
CURRENT: contextvars.ContextVar[Case | None] = contextvars.ContextVar("fuzz_case", default=None)


def make_app() -> Any:
    server = build_server()
    server.state_key = STATE_KEY  # requestState recorded by one app is valid in the next
    return McpHttpApp(server)


class Reply:
    """What came back for one request, parsed as it arrives (SSE events one by one)."""

    def __init__(
        self,
        expected: str | None = None,
        listen: bool = False,
        hold: bool = False,
        on_request: Callable[[Any], None] | None = None,
    ) -> None:
        self.expected, self.listen, self.hold = expected, listen, hold
        self.on_request = on_request
        self.status: int | None = None
        self.headers: Headers = []
        self.body = bytearray()
        self.events: list[bytes] = []
        self.answered = self.ended = False
        self.error: str | None = None  # the app raised (its traceback)
        self.cause: str | None = None  # the traceback a real server logged with its 500
        self.timeout: str | None = None
        self.misuse: str | None = None
        self.done = asyncio.Event()

    @property
    def content_type(self) -> bytes:
        value = next((v for k, v in self.headers if k.lower() == b"content-type"), b"")
        return value.split(b";")[0].strip().lower()

    def start(self, status: int, headers: Headers) -> None:
        if self.status is not None:
            self.misuse = "ASGI misuse: second http.response.start"
        self.status, self.headers = status, headers
        if self.hold and self.content_type == b"text/event-stream":
            self.done.set()  # a stream that may stay open: it started, that is enough

    def feed(self, chunk: bytes, more: bool) -> None:
        if self.status is None or self.ended:
            self.misuse = "ASGI misuse: body before the start or after the last body"
        self.body += chunk
        if self.content_type == b"text/event-stream":
            text = bytes(self.body).replace(b"\r\n", b"\n")
            while b"\n\n" in text:
                event, _, text = text.partition(b"\n\n")
                self._event(event)
            self.body = bytearray(text)
            if not more and text.strip():
                self._event(text)
        elif self.expected is not None and not more:
            self._answers(bytes(self.body))
        if not more:
            self.ended = True
            self.done.set()

    def _event(self, event: bytes) -> None:
        data = b"\n".join(
            line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
        )
        self.events.append(data)
        self._answers(data)

    def _answers(self, data: bytes) -> None:
        try:
            value = strict_json(data)
        except (ValueError, RecursionError):
            return
        for message in value if isinstance(value, list) else [value]:
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message and self.on_request is not None:
                self.on_request(message["id"])  # a request to the client: refused
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and SUBSCRIPTION in meta:
                self.listen = True  # a listen stream is acknowledged: leave it
                self.done.set()
            if "method" not in message and id_key(message.get("id")) == self.expected:
                self.answered = True


def judge(
    tally: Tally, case: Case, reply: Reply, method: str, session: str, frame: Frame | None = None
) -> None:
    """The oracles on one HTTP exchange (``method``: the body's, ``session``: its version;
    ``frame``: what the oracle reads in the body of a POST)."""
    where = case.method + (" x2 concurrent, one id" if len(case.frames) > 1 else "")
    if reply.error is not None:
        tally.fail(
            "crash", "app raised " + traceback_signature(reply.error), case, reply.error[-1500:]
        )
        return
    body = bytes(reply.body)
    if reply.timeout is not None:
        got = f"{session}; {method}: status {reply.status}, events {reply.events[:3]!r}, body {body[:200]!r}"
        tally.fail("hang", f"{reply.timeout} [{where}]", case, got)
        return
    status, ctype = reply.status or 0, reply.content_type.decode("latin-1")
    code = re.search(rb'"code":\s*(-?\d+)', body) if ctype == "application/json" else None
    tally.outcomes[f"{status} {code.group(1).decode() if code else ctype or '-'}"] += 1
    shown = f"{session}; {method}: {status} {ctype}: {body[:400]!r}"
    if reply.misuse:
        tally.fail("bad answer", reply.misuse, case, shown)
    if reply.status is None:
        return
    if status >= 500:
        why = f" ({traceback_signature(reply.cause)})" if reply.cause else ""
        detail = shown + ("\n" + reply.cause[-1200:] if reply.cause else "")
        tally.fail("5xx", f"{status} {ctype or 'no content-type'}{why} [{where}]", case, detail)
    elif status >= 400:
        if case.method == "HEAD":
            return
        value, problem = answer_problem(body) if ctype == "application/json" else (None, "")
        errors = value if isinstance(value, list) else [value]
        if problem is None and not all(isinstance(e, dict) and "error" in e for e in errors):
            problem = "not an error"
        if problem is not None:
            what = problem or f"content-type {ctype or 'none'}, {len(body)} bytes"
            tally.fail(
                "bad answer", f"{status} without a JSON-RPC error body ({what})", case, shown
            )
    elif 200 <= status < 300:
        if ctype == "text/event-stream":
            for data in reply.events:
                if data.strip() and (problem := answer_problem(data)[1]):
                    tally.fail("bad answer", f"SSE data {problem}", case, repr(data[:400]))
        elif body and ctype != "application/json":
            tally.fail(
                "bad answer", f"{status} body with content-type {ctype or 'none'}", case, shown
            )
        elif body and (problem := answer_problem(body)[1]):
            tally.fail("bad answer", f"{status} JSON body {problem}", case, shown)
    else:
        tally.fail("bad answer", f"status {status}", case, shown)
    if frame is not None and status < 500:
        judge_answers(tally, case, reply, frame, f"{shown} [{where}]")


#: Refusals sent before the body is read: it holds no id the server could know.
UNREAD = frozenset({401, 403, 405, 406, 408, 413, 415})


def judge_answers(tally: Tally, case: Case, reply: Reply, frame: Frame, shown: str) -> None:
    """The missing-answer and wrong-code oracles on a POST whose body the server read."""
    status = reply.status or 0
    if frame.oversize or status in UNREAD or (case.path.rstrip("/") or "/") != "/mcp":
        return
    answers = [m for m in _messages(reply) if "method" not in m]
    nulls = [_code(m) for m in answers if m.get("id") is None]
    codes = [_code(m) for m in answers]
    if frame.kind == "request" and frame.id is not None:
        mine = [_code(m) for m in answers if id_key(m.get("id")) == frame.id]
        acknowledged = reply.listen and reply.done.is_set() and not reply.ended
        if not mine and not acknowledged:
            how = "a null id" if nulls else "no answer carrying its id"
            tally.fail("missing answer", f"{status} with {how}", case, shown)
        allowed = frame.codes()
        for code in mine:
            if code is not None and (code == -32700 if allowed is None else code not in allowed):
                what = "a request" if frame.valid else "an invalid request"
                tally.fail("wrong code", f"{what} answered {code} ({status})", case, shown)
    if frame.kind == "notification" and any(m.get("id") is not None for m in answers):
        tally.fail("wrong code", f"a notification answered ({status})", case, shown)
    elif frame.kind == "notification" and status < 300 and answers:
        tally.fail("wrong code", f"a notification answered ({status})", case, shown)
    if frame.kind == "not json":
        if -32700 not in nulls:
            tally.fail("wrong code", f"not JSON and no -32700 ({status} {codes})", case, shown)
    elif -32700 in codes:
        tally.fail("wrong code", f"JSON answered -32700 ({status})", case, shown)
    strange = sorted({c for c in nulls if c is not None and c not in INVALID_CODES | {-32700}})
    if strange:
        tally.fail("wrong code", f"null-id answer {strange[0]} ({status})", case, shown)


def _messages(reply: Reply) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a reply: its JSON body's, or its SSE events'."""
    out: list[dict[str, Any]] = []
    for data in reply.events if reply.events else [bytes(reply.body)]:
        try:
            value = strict_json(data)
        except (ValueError, RecursionError):
            continue
        out += [m for m in (value if isinstance(value, list) else [value]) if isinstance(m, dict)]
    return out


def _code(message: dict[str, Any]) -> int | None:
    """The code of an error answer (None for a result)."""
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


# -- the ASGI app in process ------------------------------------------------------------


def asgi(app: Any) -> Exchange:
    async def exchange(
        method: str, path: str, query: bytes, headers: Headers, body: bytes, reply: Reply
    ) -> None:
        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "method": method, "scheme": "http", "path": path,
            "raw_path": path.encode("utf-8", "surrogateescape"), "query_string": query,
            "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 3001),
        }  # fmt: skip
        gone, given = asyncio.Event(), False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                reply.start(message["status"], list(message.get("headers", [])))
            elif message["type"] == "http.response.body":
                reply.feed(message.get("body", b""), message.get("more_body", False))

        task = asyncio.ensure_future(app(scope, receive, send))
        waiter = asyncio.ensure_future(reply.done.wait())
        try:
            await asyncio.wait({task, waiter}, timeout=DEADLINE, return_when="FIRST_COMPLETED")
            if not waiter.done() and not task.done():
                reply.timeout = f"no complete answer in {DEADLINE:.0f} s"
            gone.set()  # the client leaves (as uvicorn says once the connection closes)
            await asyncio.wait({task}, timeout=DEADLINE)
            if not task.done():
                reply.timeout = reply.timeout or "app still running 5 s after the client left"
                task.cancel()
                await asyncio.wait({task}, timeout=1)
            elif task.exception() is not None:
                exc = task.exception()
                assert exc is not None
                reply.error = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            elif reply.status is None:
                reply.timeout = "app returned without an answer"
            elif not reply.ended and not reply.hold and not reply.listen:
                reply.misuse = "ASGI misuse: app returned before the last body"
        finally:
            waiter.cancel()

    return exchange


class Captured(logging.Handler):
    """Records with a traceback, each with the case whose task logged it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[Case | None, str]] = []
        self.fallback: Case | None = None  # the current case of a sequential run

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = (
                record.getMessage()
                + "\n"
                + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            )
            self.records.append((CURRENT.get() or self.fallback, text))

    def take_asgi(self, case: Case) -> str | None:
        """The traceback of the server's "Exception in ASGI application" during ``case``
        (it explains a 500, which is charged as such, not as a logged traceback)."""
        for index, (owner, text) in enumerate(self.records):
            if owner is case and text.startswith("Exception in ASGI application"):
                del self.records[index]
                return text
        return None

    def charge(self, tally: Tally) -> None:
        for case, text in self.records:
            tally.fail("traceback", traceback_signature(text), case or _UNKNOWN, text[-1200:])
        self.records.clear()


_UNKNOWN = Case(-1, "?", "unattributed", [], ["logged outside any case"])


class Worker:
    """Runs cases one after another in its own legacy session of ``exchange``'s server."""

    def __init__(self, exchange: Exchange, number: int, tally: Tally, captured: Captured) -> None:
        self.exchange, self.tally, self.captured = exchange, tally, captured
        self.number, self.runs = number, 0
        self.version = LEGACY[number % len(LEGACY)]
        self.session: bytes | None = None
        self.pending: list[asyncio.Future[None]] = []

    async def handshake(self, case: Case) -> None:
        hello = request("initialize", {"protocolVersion": self.version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}})  # fmt: skip
        reply = Reply()
        await self.exchange(
            "POST", "/mcp", b"", default_headers("init", hello), json.dumps(hello).encode(), reply
        )
        self.session = next((v for k, v in reply.headers if k == b"mcp-session-id"), None)
        if self.session is None:
            got = f"{reply.status} {bytes(reply.body)[:300]!r} {reply.error or reply.timeout}"
            self.tally.fail("crash", "a valid initialize got no session", case, got)
            return
        body = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        await self.exchange(
            "POST", "/mcp", b"", self.fill(default_headers("legacy", {})), body, Reply()
        )

    def fill(self, headers: Headers) -> Headers:
        out: Headers = []
        for name, value in headers:
            if value == VERSION and self.version < "2025-06-18":
                continue
            value = {SESSION: self.session or b"", VERSION: self.version.encode()}.get(value, value)
            out.append((name, value))
        return out

    async def refuse(self, request_id: Any) -> None:
        answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}}
        headers = self.fill(default_headers("legacy", {}))
        await self.exchange("POST", "/mcp", b"", headers, json.dumps(answer).encode(), Reply())

    def refuse_later(self, request_id: Any) -> None:
        self.pending.append(asyncio.ensure_future(self.refuse(request_id)))

    async def run(self, case: Case) -> list[Reply]:
        self.runs += 1
        if self.runs % 250 == 0:  # a new session, at the next version
            self.session, self.version = None, LEGACY[(self.number + self.runs // 250) % 4]
        if self.session is None and case.era == "legacy":
            await self.handshake(case)
        CURRENT.set(case)
        self.captured.fallback = case
        headers = self.fill(case.headers)
        replies = []
        for frame in case.frames:
            read = frame_of(frame) if case.method == "POST" else None
            readable = (read.id, read.method) if read and read.id and not read.oversize else None
            listen = readable is not None and readable[1] == "subscriptions/listen"
            expected = readable[0] if readable else None
            reply = Reply(expected, listen, case.method == "GET", self.refuse_later)
            replies.append((reply, read))
        await asyncio.gather(
            *(
                self.exchange(case.method, case.path, case.query, headers, frame, reply)
                for frame, (reply, _) in zip(case.frames, replies)
            )
        )
        if self.pending:
            await asyncio.wait(self.pending, timeout=DEADLINE)
            self.pending.clear()
        for reply, read in replies:
            if reply.misuse and reply.misuse.startswith("unsendable"):
                self.tally.counts["unsendable"] += 1
                continue
            reply.cause = self.captured.take_asgi(case) if reply.status == 500 else None
            session = f"legacy session at {self.version}" if case.era == "legacy" else case.era
            method = read.method[:40] if read and read.kind == "request" else "-"
            judge(self.tally, case, reply, method, session, read)
            if reply.status == 404 and (b"mcp-session-id", self.session) in headers:
                self.session = None  # ended (DELETE, or a mutation the server took as such)
        if case.method == "DELETE":
            self.session = None
        CURRENT.set(None)
        return [reply for reply, _ in replies]


async def replay(cases: Iterable[Case], tally: Tally) -> list[Reply]:
    """The cases one by one against a fresh app, judged; every reply, in order."""
    worker = Worker(asgi(make_app()), 3, tally, Captured())
    return [reply for case in cases for reply in await worker.run(case)]


def _batches(cases: Iterable[Case], size: int) -> Iterator[list[Case]]:
    it = iter(cases)
    while batch := list(islice(it, size)):
        yield batch


def run_asgi(cases: Iterable[Case], budget: float | None = None, workers: int = 8) -> Tally:
    """The cases against a fresh app per 2,000, ``workers`` sessions at once."""
    tally = Tally("http (ASGI app in process)")
    captured = Captured()
    logging.getLogger().addHandler(captured)
    started = time.monotonic()

    async def main() -> None:
        for batch in _batches(cases, 2000):
            if budget is not None and time.monotonic() - started > budget:
                tally.notes.append(f"stopped by the time budget ({budget:.0f} s)")
                return
            exchange = asgi(make_app())
            queue = iter(batch)

            async def work(number: int) -> None:
                worker = Worker(exchange, number, tally, captured)
                for case in queue:
                    await worker.run(case)
                    tally.cases += 1

            await asyncio.gather(*(work(n) for n in range(workers)))

    try:
        asyncio.run(main())
    finally:
        logging.getLogger().removeHandler(captured)
    captured.charge(tally)
    return tally.finish()


# -- recording ----------------------------------------------------------------------------


def record() -> list[Base]:
    """Valid requests that need the server's own answers: a multi-round-trip retry carrying
    the ``requestState`` the server signed (every server of the suite shares its key)."""

    async def main() -> list[Base]:
        exchange = asgi(make_app())
        ask = request("tools/call", {"name": "test_input_required_result_request_state", "arguments": {}, "_meta": modern_meta()})  # fmt: skip
        ask["id"] = 1
        reply = Reply("1")
        await exchange(
            "POST", "/mcp", b"", default_headers("modern", ask), json.dumps(ask).encode(), reply
        )
        result = json.loads(bytes(reply.body))["result"]
        answers = {
            key: {"action": "accept", "content": {"ok": True}} for key in result["inputRequests"]
        }
        retry = request("tools/call", {**ask["params"], "inputResponses": answers, "requestState": result["requestState"]})  # fmt: skip
        return [Base("modern tools/call retry with requestState", "modern", retry, 1.5)]

    return asyncio.run(main())
