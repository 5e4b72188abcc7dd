"""Redis stopped for ten seconds under load, then started again: three uvicorn workers of
``examples/everything/asgi.py`` behind haproxy (the deployment guide's configuration),
2025-11-25 sessions and 2026-07-28 stateless clients calling all along. Every request is
answered: served, or refused with a clear error that says the store is unavailable; no
worker stops; stateless calls never notice; once Redis is back, every session is served
again with no restart; each worker's memory stays bounded throughout."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.http_endpoint import Endpoint, Legacy, open_session, request, result_of
from support.workers import Workers, workers

pytestmark = pytest.mark.slow
OUTAGE_S = 10.0
CLIENTS = 3  # of each era
#: Growth of a worker's resident memory over the outage that counts as bounded (MiB).
RSS_GROWTH_MIB = 40


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Workers]:
    with workers("examples.everything.asgi:app", 3, tmp_path) as up:
        yield up


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def outcome(call: Callable[[], Any]) -> str:
    """``ok``, ``clear`` (refused, saying the store is unavailable) or what else happened."""
    try:
        result = call()
    except AssertionError as refused:
        said = str(refused)
        return "clear" if "unavailable" in said or "Service Unavailable" in said else said[:200]
    except httpx.HTTPError as error:
        return f"{type(error).__name__}: {error}"
    text = str(result.get("content"))
    return "ok" if "simple text response" in text else text[:200]


def legacy_call(session: Legacy) -> Any:
    response = session.post(request(1, "tools/call", {"name": "test_simple_text"}))
    assert response.status_code == 200, f"{response.status_code} {response.text[:300]}"
    return result_of(response, 1)


def test_redis_stopped_under_load_is_a_clear_error_and_service_returns_by_itself(
    cluster: Workers,
) -> None:
    front = Endpoint(cluster.port)
    sessions = [open_session(Endpoint(cluster.port), "2025-11-25") for _ in range(CLIENTS)]
    phase = ["before"]
    seen: dict[str, Counter[str]] = {p: Counter() for p in ("before", "outage", "after")}
    stateless: Counter[str] = Counter()
    stop = threading.Event()

    def legacy_loop(session: Legacy) -> None:
        while not stop.is_set():
            seen[phase[0]][outcome(lambda: legacy_call(session))] += 1

    def modern_loop() -> None:
        endpoint = Endpoint(cluster.port)
        while not stop.is_set():
            stateless[outcome(lambda: endpoint.call("test_simple_text"))] += 1

    loops = [threading.Thread(target=legacy_loop, args=(s,), daemon=True) for s in sessions]
    loops += [threading.Thread(target=modern_loop, daemon=True) for _ in range(CLIENTS)]
    for loop in loops:
        loop.start()
    time.sleep(2)
    before = {p.pid: rss_mib(p.pid) for p in cluster.processes}
    port = cluster.redis.port
    phase[0] = "outage"
    cluster.redis.stop(keep_dir=True)
    time.sleep(OUTAGE_S)
    during = {p.pid: rss_mib(p.pid) for p in cluster.processes}
    health = [httpx.get(f"http://127.0.0.1:{p}/healthz", timeout=5) for p in cluster.ports]
    cluster.redis.start(port)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # each worker's stores find Redis again
        states = [
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code
            for port in cluster.ports
        ]
        if states == [200] * len(states):
            break
        time.sleep(0.2)
    phase[0] = "after"
    time.sleep(3)
    stop.set()
    for loop in loops:
        loop.join(30)
    assert all(p.poll() is None for p in cluster.processes), "a worker stopped"
    for said in health:  # each worker's health endpoint said so
        assert said.status_code == 503 and "unreachable" in said.text, said.text
    report = {p: dict(c) for p, c in seen.items()}
    print(f"legacy sessions: {report}; stateless: {dict(stateless)}")
    print(f"worker RSS MiB before/after the outage: {before} / {during}")
    assert set(seen["before"]) == {"ok"}, report
    assert set(seen["outage"]) <= {"ok", "clear"} and seen["outage"]["clear"] > 0, report
    assert set(seen["after"]) == {"ok"} and seen["after"]["ok"] >= 3 * CLIENTS, report
    assert set(stateless) == {"ok"}, stateless  # stateless calls need no Redis
    for pid, mib in during.items():
        assert mib - before[pid] < RSS_GROWTH_MIB, (pid, before[pid], mib)
    for session in sessions:  # the same sessions, served again
        assert "simple text" in str(legacy_call(session))
    assert front.call("test_simple_text")
