"""The real-HTTP driver of the fuzz suite: uvicorn, configured as ``mcpgen`` serves
(``runtime/http/serve.py``), serving the everything server's ASGI app on an ephemeral port
of 127.0.0.1 (in a thread, always stopped), driven by httpx one case at a time with the
same sessions, oracles and log capture as the in-process driver. A request httpx refuses
to send (a header value no HTTP/1.1 peer may write) is counted, not judged.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpx
import uvicorn

from support.fuzz_http import Captured, Exchange, Headers, Reply, Worker, make_app
from support.fuzz_report import Tally
from support.fuzzing import DEADLINE, Case


def client_exchange(client: httpx.AsyncClient, port: int) -> Exchange:
    async def exchange(
        method: str, path: str, query: bytes, headers: Headers, body: bytes, reply: Reply
    ) -> None:
        url = f"http://127.0.0.1:{port}{path}" + ("?" + query.decode("latin-1") if query else "")

        async def talk() -> None:
            sent = client.build_request(method, url, headers=headers, content=body)
            response = await client.send(sent, stream=True)
            try:
                reply.start(response.status_code, list(response.headers.raw))
                if reply.done.is_set():
                    return  # a GET stream: it started
                async for chunk in response.aiter_raw():
                    reply.feed(chunk, True)
                    if reply.done.is_set():
                        return  # a stream that stays open, started or acknowledged
                reply.feed(b"", False)
            finally:
                await response.aclose()

        try:
            await asyncio.wait_for(talk(), DEADLINE)
        except asyncio.TimeoutError:
            reply.timeout = f"no complete answer in {DEADLINE:.0f} s"
        except (httpx.LocalProtocolError, httpx.InvalidURL, UnicodeError, ValueError) as exc:
            reply.misuse = f"unsendable: {type(exc).__name__}"
        except httpx.HTTPError as exc:
            reply.misuse = f"no HTTP answer: {type(exc).__name__}"

    return exchange


def _config(app: Any) -> uvicorn.Config:
    """The settings ``mcpgen`` serves with (its hardened protocol classes), when it has them.
    uvicorn leaves logging alone, so its loggers reach the capture."""
    try:
        from mcpgen.runtime.http import serve as http_serve
    except ImportError:  # a runtime older than its own serve: plain uvicorn
        return uvicorn.Config(
            app, log_config=None, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
    return http_serve.config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=2)


def run(cases: Iterable[Case], budget: float | None = None) -> Tally:
    """The cases one at a time against uvicorn serving a fresh app on an ephemeral port."""
    tally = Tally("http (uvicorn on 127.0.0.1)")
    captured = Captured()
    logging.getLogger().addHandler(captured)  # uvicorn's own loggers propagate to it
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(make_app()))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    started = time.monotonic()

    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(DEADLINE)) as client:
            worker = Worker(client_exchange(client, port), 0, tally, captured)
            for case in cases:
                if budget is not None and time.monotonic() - started > budget:
                    tally.notes.append(f"stopped by the time budget ({budget:.0f} s)")
                    break
                await worker.run(case)
                tally.cases += 1
            if tally.counts["unsendable"]:
                tally.notes.append(f"{tally.counts['unsendable']} requests httpx refused to send")

    try:
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        asyncio.run(main())
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        logging.getLogger().removeHandler(captured)
    captured.charge(tally)
    return tally.finish()
