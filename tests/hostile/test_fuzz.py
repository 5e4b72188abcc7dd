"""Hostile input against ``examples/everything``: mutations of valid traffic of both eras,
over stdio, over the ASGI app in process, over a real uvicorn on 127.0.0.1, and over its
WebSocket and HTTP+SSE transports.

The engine is ``tests/support/fuzzing.py`` (corpus, cases, oracles) with its helpers beside it
(``fuzz_mutators``, ``fuzz_headers``, ``fuzz_report``, ``fuzz_stdio``, ``fuzz_http``,
``fuzz_uvicorn``, ``fuzz_sockets``). This is the CI run, about a minute and a half: 20,000
cases over HTTP in process, and bounded subsets over stdio (5,000), real HTTP (400),
WebSocket (3,000) and HTTP+SSE (800); ``python -m bench fuzz`` runs 20,000 or more per
transport. ``MCPGEN_FUZZ_CASES`` (``stdio,http,uvicorn,websocket,sse``) and
``MCPGEN_FUZZ_SEED`` change the sizes and the seed. Every failure class is printed with its
smallest case (exact bytes and headers) and what the server did.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from support.checkout import REPORT

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the engine is imported as tests.*, as bench/fuzz.py does
    sys.path.append(str(ROOT))

from support import fuzz_http  # noqa: E402
from support.fuzz_mutators import dump  # noqa: E402
from support.fuzzing import (  # noqa: E402
    Case,
    Generator,
    Tally,
    default_headers,
    init_corpus,
    legacy_corpus,
    modern_corpus,
    run,
)

SIZES: dict[str, int] = {
    "stdio": 5000,
    "http": 20000,
    "uvicorn": 400,
    "websocket": 3000,
    "sse": 800,
}
if os.environ.get("MCPGEN_FUZZ_CASES"):
    SIZES = dict(zip(SIZES, map(int, os.environ["MCPGEN_FUZZ_CASES"].split(","))))
SEED = int(os.environ.get("MCPGEN_FUZZ_SEED", "11"))
#: Seconds each transport may take at most (a server that hangs costs 5 s per case).
BUDGET: dict[str, float] = {
    "stdio": 60.0,
    "http": 45.0,
    "uvicorn": 20.0,
    "websocket": 30.0,
    "sse": 45.0,
}


# Slow: thousands of cases over pipes and real sockets (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("transport", list(SIZES))
def test_fuzz(transport: str) -> None:
    tally = run(transport, SIZES[transport], SEED, budget=BUDGET[transport])
    REPORT[f"fuzz {transport}"] = tally.summary()
    print(tally.details())
    assert tally.failures == 0, tally.details()
    assert tally.cases >= SIZES[transport] // 2, tally.details()


def test_cases_are_deterministic_and_every_mutator_is_used() -> None:
    first = [(c.frames, c.headers, c.method, c.path) for c in Generator(5, "http").cases(300)]
    again = [(c.frames, c.headers, c.method, c.path) for c in Generator(5, "http").cases(300)]
    assert first == again
    generator = Generator(6, "http")
    done = " | ".join(m for case in generator.cases(3000) for m in case.mutations)
    names = [op.__name__ for _, op in generator.mutator.json_ops + generator.mutator.byte_ops]
    words = {
        "drop": "drop ", "replace": "replace with", "retype": "retype", "add_key": "add key",
        "nest": "nest ", "huge_number": "number", "id_type": "id = ", "dup_key": "duplicate key",
        "notification": "as a notification", "response": "into a response", "method": "method =",
        "bad_utf8": "invalid UTF-8", "escape": "escape", "batch": "batch", "garbage_after": "then",
        "scalar": "whole message =", "params_shape": "params =", "meta": "_meta", "big": "big ",
        "whitespace": "surround", "jsonrpc": "jsonrpc =", "flip": "flip bits", "truncate": "truncate",
        "insert": "insert", "delete": "delete", "overwrite": "byte ", "splice": "splice",
        "repeat": "repeat", "swap": "swap",
    }  # fmt: skip
    assert sorted(names) == sorted(words)
    assert [n for n in names if words[n] not in done] == []
    for header in ("host", "origin", "accept", "content-type", "mcp-name", "last-event-id"):
        assert header in done
    assert "send it twice" in done and "method GET" in done and "path " in done


def test_corpus_is_valid_traffic() -> None:
    """Each base message, unmutated, is answered as a valid client's would be: a result
    (an error only where the base asks for a tool, resource or version that is not there),
    202 for notifications and responses."""
    recorded = fuzz_http.record()
    assert recorded, "no requestState recorded"
    bases = legacy_corpus() + modern_corpus(recorded) + init_corpus()
    cases = [
        Case(
            i, b.era, b.name, [dump({**b.message, "id": i} if "id" in b.message else b.message)], []
        )
        for i, b in enumerate(bases)
    ]
    for case, base in zip(cases, bases):
        case.headers = default_headers(case.era, base.message)
    tally = Tally("corpus")
    replies = asyncio.run(fuzz_http.replay(cases, tally))
    assert tally.failures == 0, tally.details()
    refused = ("no_such_tool", "test://nope", "page-2")
    for case, reply in zip(cases, replies):
        message = json.loads(case.frames[0])
        if "id" not in message or "method" not in message:
            assert reply.status == 202, case.show()
            continue
        assert reply.events or reply.body, (case.show(), reply.status, reply.timeout, reply.error)
        answers = [json.loads(e) for e in reply.events if e] or [json.loads(bytes(reply.body))]
        answer = answers[-1]
        wanted = "error" if any(r in case.base for r in refused) else "result"
        if case.base == "modern subscriptions/listen":
            assert answer["method"] == "notifications/subscriptions/acknowledged", answer
        else:
            assert wanted in answer, (case.show(), answer)
    REPORT["fuzz corpus"] = f"{len(cases)} valid messages ({len(recorded)} recorded)"
