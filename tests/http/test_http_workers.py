"""Scale-out: ``uvicorn examples.everything.asgi:app --workers 2`` as a subprocess with a
shared ``MCPGEN_STATE_KEY``, plus a single-process server with a different key. Multi-round
trips complete whichever worker takes each POST, another key's state is refused, a key
rotated in stages refuses no state in flight and refuses the retired key's, every worker
checks ``Mcp-Param-*`` headers from its first call, the default body limit is 4 MiB, and
SIGTERM stops the supervisor and every worker (each process stopped by pid at
teardown)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen.runtime import INVALID_PARAMS
from mcpgen.runtime.core.errors import HEADER_MISMATCH

from support.http_endpoint import (
    PING,
    PLAIN,
    XMCP,
    TIMEOUT,
    meta,
    modern_headers,
    next_id,
    param_headers,
    result_of,
    rpc_error,
    text_of,
)
from support.http_servers import UvicornProcess, cmdline, running
from support.messages import request

DEFAULT_BODY = 4 * 1024 * 1024

# Slow: real HTTP on 127.0.0.1 throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


def worker_of(response: httpx.Response, server_port: int, workers: list[int]) -> int | None:
    """Which worker holds the server end of ``response``'s (still open) connection."""
    sock = response.extensions["network_stream"].get_extra_info("socket")
    if sock is None:
        return None
    local_port = sock.getsockname()[1]
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            here, there = int(parts[1].split(":")[1], 16), int(parts[2].split(":")[1], 16)
            if here == server_port and there == local_port:
                inode = parts[9]
    if inode is None:
        return None
    for pid in workers:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


@dataclass
class Cluster:
    shared: UvicornProcess  # two workers sharing KEY
    other: UvicornProcess  # one process with another key


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("uvicorn")
    started: list[UvicornProcess] = []
    try:
        started.append(UvicornProcess(secrets.token_hex(32), logs / "workers.log", workers=2))
        started.append(UvicornProcess(secrets.token_hex(32), logs / "other.log"))
        for server in started:
            server.wait_ready()
        yield Cluster(*started)
    finally:
        for server in started:
            server.stop()
            server.kill()


def posted_round(
    server: UvicornProcess, params: dict[str, Any], **changes: Any
) -> tuple[Any, int | None]:
    """One POST on a new connection: (its result, the worker that answered)."""
    request_id = next_id()
    body = request(request_id, "tools/call", {**params, **changes, "_meta": meta()})
    with httpx.Client(timeout=TIMEOUT) as client:
        response = client.post(
            server.endpoint.url, headers=modern_headers("tools/call", params), json=body
        )
        worker = worker_of(response, server.port, server.workers)
    return result_of(response, request_id), worker


def test_multi_round_trips_complete_across_workers_sharing_a_key(cluster: Cluster) -> None:
    server = cluster.shared
    assert len(server.workers) == 2, [cmdline(pid) for pid in server.descendants]
    params: dict[str, Any] = {"name": "test_input_required_result_multi_round", "arguments": {}}
    served_by: list[list[int | None]] = []
    for round_trip in range(30):
        first, w1 = posted_round(server, params)
        second, w2 = posted_round(
            server,
            params,
            inputResponses={"step1": {"action": "accept", "content": {"name": f"n{round_trip}"}}},
            requestState=first["requestState"],
        )
        final, w3 = posted_round(
            server,
            params,
            inputResponses={"step2": {"action": "accept", "content": {"color": "red"}}},
            requestState=second["requestState"],
        )
        assert text_of(final) == f"n{round_trip} likes red"
        served_by.append([w1, w2, w3])
    seen = {worker for trip in served_by for worker in trip}
    if None in seen:
        pytest.skip("cannot tell which worker answered (no /proc socket tables)")
    assert seen == set(server.workers), served_by
    crossed = sum(len(set(trip)) > 1 for trip in served_by)
    assert crossed > 0, "no round trip changed workers: the shared key was not exercised"


def test_a_server_with_another_key_rejects_the_request_state(cluster: Cluster) -> None:
    params: dict[str, Any] = {"name": "test_input_required_result_request_state", "arguments": {}}
    first, _ = posted_round(cluster.shared, params)
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    request_id = next_id()
    body = request(
        request_id,
        "tools/call",
        {
            **params,
            "inputResponses": answers,
            "requestState": first["requestState"],
            "_meta": meta(),
        },
    )
    response = cluster.other.endpoint.post(body, modern_headers("tools/call", params))
    error = rpc_error(response, 400, INVALID_PARAMS, request_id)
    assert "does not hold" in error["message"]
    assert error["data"]["path"] == "$.params.requestState"
    # the issuing key accepts it; the other server completes its own round trips
    final, _ = posted_round(
        cluster.shared, params, inputResponses=answers, requestState=first["requestState"]
    )
    assert text_of(final) == "state-ok: confirmed=True"
    own, _ = posted_round(cluster.other, params)
    final, _ = posted_round(
        cluster.other, params, inputResponses=answers, requestState=own["requestState"]
    )
    assert text_of(final) == "state-ok: confirmed=True"


def test_a_key_rotated_in_stages_refuses_no_state_in_flight_and_the_retired_keys(
    tmp_path: Path,
) -> None:
    """Mid-rotation, one server still signs with the old key and accepts the new, another
    signs with the new and accepts the old: 48 round trips at once (8 at a time), each
    begun on one and finished on the other, all complete. Once the old key is retired, a
    server holding only the new one refuses a state the old key signed, saying so, and
    takes one the new key signed."""
    old, new = secrets.token_hex(32), secrets.token_hex(32)
    servers = [
        UvicornProcess(old, tmp_path / "old.log", accepted=new),
        UvicornProcess(new, tmp_path / "new.log", accepted=old),
        UvicornProcess(new, tmp_path / "retired.log"),
    ]
    try:
        for server in servers:
            server.wait_ready()
        signs_old, signs_new, retired = servers
        params: dict[str, Any] = {
            "name": "test_input_required_result_request_state",
            "arguments": {},
        }
        answers = {"confirm": {"action": "accept", "content": {"ok": True}}}

        def round_trip(n: int) -> str:
            begun, ended = (signs_old, signs_new) if n % 2 else (signs_new, signs_old)
            first, _ = posted_round(begun, params)
            final, _ = posted_round(
                ended, params, inputResponses=answers, requestState=first["requestState"]
            )
            return text_of(final)

        with ThreadPoolExecutor(max_workers=8) as pool:
            done = list(pool.map(round_trip, range(48)))
        assert done == ["state-ok: confirmed=True"] * 48
        by_old, _ = posted_round(signs_old, params)
        request_id = next_id()
        retry = {**params, "inputResponses": answers, "requestState": by_old["requestState"]}
        body = request(request_id, "tools/call", {**retry, "_meta": meta()})
        response = retired.endpoint.post(body, modern_headers("tools/call", params))
        error = rpc_error(response, 400, INVALID_PARAMS, request_id)
        assert "does not hold" in error["message"]
        by_new, _ = posted_round(signs_new, params)
        final, _ = posted_round(
            retired, params, inputResponses=answers, requestState=by_new["requestState"]
        )
        assert text_of(final) == "state-ok: confirmed=True"
    finally:
        for server in servers:
            server.stop()
            server.kill()


def test_every_worker_checks_mcp_param_headers_from_its_first_call(cluster: Cluster) -> None:
    """No worker has answered tools/list here; whichever answers learns its tools'
    annotations itself."""
    for _ in range(12):
        request_id = next_id()
        body = request(request_id, "tools/call", {**XMCP, "_meta": meta()})
        with httpx.Client(timeout=TIMEOUT) as client:
            response = client.post(
                cluster.shared.endpoint.url, headers=modern_headers("tools/call", XMCP), json=body
            )
        rpc_error(response, 400, HEADER_MISMATCH, request_id)
    request_id = next_id()
    body = request(request_id, "tools/call", {**XMCP, "_meta": meta()})
    headers = {**modern_headers("tools/call", XMCP), **param_headers(XMCP)}
    response = cluster.shared.endpoint.post(body, headers)
    assert text_of(result_of(response, request_id)) == "headers matched: region='eu-west1'"


def test_default_body_limit_is_4_mib(cluster: Cluster) -> None:
    endpoint = cluster.other.endpoint
    padded = PING + b" " * (DEFAULT_BODY - len(PING))
    assert result_of(endpoint.send("POST", PLAIN, padded), "p1") == {}
    rpc_error(endpoint.send("POST", PLAIN, padded + b" "), 413, None)
    endpoint.assert_serving()


def test_sigterm_stops_the_supervisor_and_every_worker(cluster: Cluster) -> None:
    for server in (cluster.shared, cluster.other):
        pids = [server.proc.pid, *server.descendants]
        left = server.stop()
        assert left == [], {pid: cmdline(pid) for pid in left}
        assert server.proc.returncode is not None
        assert not any(map(running, pids))
