"""The ``requestState`` key rotated in three stages by rolling restarts (``SIGTERM``, then
a start with the new environment) of three uvicorn workers of ``examples/everything``
behind haproxy (the deployment guide's configuration), under load from 2026-07-28 clients
whose multi-round calls carry ``requestState`` from one worker to another, and from
2025-11-25 sessions whose calls ask their client something: no call fails, through nine
restarts; once the old key is retired, a state it signed is refused, saying so."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen.runtime.client import http_client
from support.http_endpoint import meta, modern_headers, next_id, request, result_of, rpc_error
from support.workers import Workers, workers
from support.wire_clients import our_client, plain

pytestmark = [pytest.mark.slow]
OLD, NEW = secrets.token_hex(32), secrets.token_hex(32)
MULTI_ROUND = {"name": "test_input_required_result_multi_round", "arguments": {}}
INVALID_PARAMS = -32602


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Workers]:
    with workers("examples.everything.asgi:app", 3, tmp_path, MCPGEN_STATE_KEY=OLD) as up:
        yield up


def first_round(url: str) -> dict[str, Any]:
    """The first round of a multi-round call, posted by hand: its ``input_required``."""
    request_id = next_id()
    body = request(request_id, "tools/call", {**MULTI_ROUND, "_meta": meta()})
    response = httpx.post(url, headers=modern_headers("tools/call", MULTI_ROUND), json=body)
    return result_of(response, request_id)


async def calls(url: str, mode: str, stop: threading.Event, outcomes: Counter[str]) -> None:
    """One client's calls until ``stop``: multi-round ones (2026-07-28) or ones asking the
    client's model (a 2025-11-25 session); each outcome counted."""
    version = "2025-11-25" if mode == "legacy" else "2026-07-28"
    client_class, handlers = our_client(version)
    async with http_client(client_class, url, handlers=handlers, mode=mode) as client:  # type: ignore[arg-type]
        while not stop.is_set():
            try:
                if mode == "legacy":
                    got = plain(
                        await client.call_tool(name="test_sampling", arguments={"prompt": "p"})
                    )
                    expected = "LLM response"
                else:
                    got = plain(await client.call_tool(**MULTI_ROUND))
                    expected = " likes "
                text = str(got.get("content"))
                ok = expected in text and not got.get("isError")
                outcomes["ok" if ok else f"{mode}: {text[:160]}"] += 1
            except Exception as error:  # counted, and the load goes on
                outcomes[f"{mode}: {type(error).__name__}: {str(error)[:160]}"] += 1


def test_a_key_rotated_by_rolling_restarts_under_load_fails_no_call_and_retires_the_old(
    cluster: Workers,
) -> None:
    signed_by_old = first_round(cluster.url)
    stop = threading.Event()
    outcomes: Counter[str] = Counter()

    def load() -> None:
        async def all_clients() -> None:
            jobs = [calls(cluster.url, "auto", stop, outcomes) for _ in range(3)]
            jobs += [calls(cluster.url, "legacy", stop, outcomes) for _ in range(2)]
            await asyncio.gather(*jobs)

        asyncio.run(all_clients())

    runner = threading.Thread(target=load, daemon=True)
    runner.start()
    time.sleep(2)
    stages: list[dict[str, str | None]] = [
        {"MCPGEN_STATE_KEY": OLD, "MCPGEN_STATE_KEYS_ACCEPTED": NEW},
        {"MCPGEN_STATE_KEY": NEW, "MCPGEN_STATE_KEYS_ACCEPTED": OLD},
        {"MCPGEN_STATE_KEY": NEW, "MCPGEN_STATE_KEYS_ACCEPTED": None},
    ]
    for stage in stages:
        for n in range(len(cluster.ports)):
            cluster.restart(n, **stage)
            time.sleep(1.5)  # haproxy's check finds it up again
    time.sleep(2)
    stop.set()
    runner.join(60)
    assert not runner.is_alive()
    print(f"calls through nine restarts: {dict(outcomes)}")
    assert set(outcomes) == {"ok"} and outcomes["ok"] > 50, dict(outcomes)
    request_id = next_id()
    answers = {"step1": {"action": "accept", "content": {"name": "n"}}}
    retry = {
        **MULTI_ROUND,
        "inputResponses": answers,
        "requestState": signed_by_old["requestState"],
    }
    body = request(request_id, "tools/call", {**retry, "_meta": meta()})
    refused = httpx.post(cluster.url, headers=modern_headers("tools/call", MULTI_ROUND), json=body)
    error = rpc_error(refused, 400, INVALID_PARAMS, request_id)
    assert "does not hold" in error["message"], error
