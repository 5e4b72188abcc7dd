"""Tasks outlive the process that runs them: two uvicorn server processes
(``tests.peers.task_app``) share one real redis-server on 127.0.0.1. A task created
through one is followed, answered and cancelled through the other, and the handler in the
first hears of it; after SIGKILL of the creating process and a restart, ``tasks/get``
still answers for its tasks: a finished one with its outcome, an unfinished one
``failed`` saying its process stopped, never silently gone. A principal's 2025-11-25 tasks
are the principal's, not its session's: after a restart its new session finds them, and
another principal does not; an unauthenticated session's are lost with the session (what
the README says a restart loses), while 2026-07-28 ones are not."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
TASKS = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "processes", "version": "0"},
}
DEADLINE_S = 20.0
LEGACY = "2025-11-25"

pytestmark = pytest.mark.slow


class Peer:
    """One server process: its URL, and the process to kill."""

    def __init__(
        self, redis: str, marks: Path, command: list[str] | None = None, auth: bool = False
    ) -> None:
        if command is None:
            command = [sys.executable, "-m", "tests.peers.task_app", "--redis", redis]
            command += ["--lease-ms", "1000", "--marks", str(marks)] + ["--auth"] * auth
        env = {**os.environ, "MCPGEN_STATE_KEY": "ab" * 32}
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"(http://\S+)", line)
        assert found, f"no address announced: {line!r}"
        self.url = found.group(1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextmanager
def peers(redis: str, marks: Path, count: int, auth: bool = False) -> Iterator[list[Peer]]:
    started: list[Peer] = []
    try:
        for _ in range(count):
            started.append(Peer(redis, marks, auth=auth))
        yield started
    finally:
        for peer in started:
            peer.stop()


def post(peer: Peer, rid: int, method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
    }
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
    return answer_of(httpx.post(peer.url, json=body, headers=headers, timeout=10))


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a response (JSON, or the last event of an SSE stream)."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:]]
        return json.loads(data[-1])
    return json.loads(text)


class Session:
    """A 2025-11-25 session with a peer (``token``: the bearer token its requests carry)."""

    def __init__(self, peer: Peer, token: str | None = None) -> None:
        self.url, self.rid = peer.url, 0
        self.headers = {"accept": "application/json, text/event-stream"}
        if token is not None:
            self.headers["authorization"] = f"Bearer {token}"
        info = {"name": "processes", "version": "0"}
        params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": info}
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        response = httpx.post(self.url, json=body, headers=self.headers, timeout=10)
        assert "result" in answer_of(response), response.text
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = LEGACY
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(self.url, json=note, headers=self.headers, timeout=10).status_code == 202

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.rid += 1
        body = {"jsonrpc": "2.0", "id": self.rid, "method": method, "params": params}
        return answer_of(httpx.post(self.url, json=body, headers=self.headers, timeout=10))

    def start(self, name: str, arguments: dict[str, Any]) -> str:
        """A task of tool ``name``: its id."""
        params = {"name": name, "arguments": arguments, "task": {}}
        answer = self.ask("tools/call", params)
        assert "result" in answer, answer
        return answer["result"]["task"]["taskId"]

    def outcome(self, task_id: str) -> str:
        """The text of the task's result (``tasks/result`` waits for it)."""
        answer = self.ask("tasks/result", {"taskId": task_id})
        assert "result" in answer, answer
        return answer["result"]["content"][0]["text"]

    def status(self, task_id: str) -> dict[str, Any]:
        answer = self.ask("tasks/get", {"taskId": task_id})
        assert "result" in answer, answer
        return answer["result"]


def call_tool(peer: Peer, rid: int, name: str, arguments: dict[str, Any]) -> str:
    answer = post(peer, rid, "tools/call", {"name": name, "arguments": arguments}, name)
    assert answer["result"]["resultType"] == "task", answer
    return answer["result"]["taskId"]


def task(peer: Peer, rid: int, task_id: str) -> dict[str, Any]:
    answer = post(peer, rid, "tasks/get", {"taskId": task_id}, task_id)
    assert "result" in answer, answer
    return answer["result"]


def until(peer: Peer, task_id: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE_S
    found: dict[str, Any] = {}
    rid = 1000
    while time.monotonic() < deadline:
        rid += 1
        found = task(peer, rid, task_id)
        if done(found):
            return found
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} never got there: {found}")


def test_a_task_made_through_one_process_is_followed_answered_and_cancelled_through_another(
    redis_url: str, tmp_path: Path
) -> None:
    with peers(redis_url, tmp_path, 2) as (a, b):
        asking = call_tool(a, 1, "ask_name", {})
        waiting = until(b, asking, lambda t: t["status"] == "input_required")
        (key,) = waiting["inputRequests"]
        answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
        acked = post(b, 2, "tasks/update", {"taskId": asking, "inputResponses": answer}, asking)
        assert acked["result"] == {"resultType": "complete"}
        done = until(b, asking, lambda t: t["status"] == "completed")  # run in a, answered in b
        assert done["result"]["content"][0]["text"] == "Hello, Ada!"
        sleeping = call_tool(a, 3, "sleepy", {"seconds": 60, "label": "far"})
        assert task(b, 4, sleeping)["status"] == "working"
        cancelled = post(b, 5, "tasks/cancel", {"taskId": sleeping}, sleeping)
        assert cancelled["result"] == {"resultType": "complete"}
        assert until(a, sleeping, lambda t: t["status"] == "cancelled")["status"] == "cancelled"
        mark = tmp_path / "far.cancelled"
        deadline = time.monotonic() + DEADLINE_S
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists(), "the handler in the first process was not cancelled"


def test_after_the_creating_process_is_killed_its_tasks_still_answer(
    redis_url: str, tmp_path: Path
) -> None:
    with peers(redis_url, tmp_path, 1) as (a,):
        finished = call_tool(a, 1, "quick", {"text": "kept"})
        until(a, finished, lambda t: t["status"] == "completed")
        unfinished = call_tool(a, 2, "sleepy", {"seconds": 60, "label": "orphan"})
        assert task(a, 3, unfinished)["status"] == "working"
        a.stop(signal.SIGKILL)
    with peers(redis_url, tmp_path, 1) as (restarted,):
        kept = task(restarted, 4, finished)
        assert kept["status"] == "completed"
        assert kept["result"]["content"][0]["text"] == "quick kept"
        orphan = until(restarted, unfinished, lambda t: t["status"] != "working")
        assert orphan["status"] == "failed"
        assert "stopped" in orphan["error"]["message"], orphan
        assert not (tmp_path / "orphan.cancelled").exists()  # killed: no handler said goodbye


def test_the_everything_example_shares_its_tasks_through_redis(
    redis_url: str, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "examples.everything", "--transport", "http"]
    command += ["--port", "0", "--task-store", redis_url]
    a, b = Peer(redis_url, tmp_path, command), Peer(redis_url, tmp_path, command)
    try:
        made = call_tool(a, 1, "slow_compute", {"seconds": 1, "label": "shared"})
        done = until(b, made, lambda t: t["status"] == "completed")
        assert done["result"]["content"][0]["text"] == "shared: computed for 1s"
    finally:
        a.stop()
        b.stop()


def test_a_principals_legacy_tasks_survive_a_restart_found_by_it_alone(
    redis_url: str, tmp_path: Path
) -> None:
    with peers(redis_url, tmp_path, 1, auth=True) as (a,):
        alice = Session(a, "alice")
        finished = alice.start("quick", {"text": "kept"})
        assert alice.outcome(finished) == "quick kept"
        unfinished = alice.start("sleepy", {"seconds": 60, "label": "alice"})
        assert alice.status(unfinished)["status"] == "working"
        old_session = dict(alice.headers)
        a.stop(signal.SIGKILL)
    with peers(redis_url, tmp_path, 1, auth=True) as (restarted,):
        gone = httpx.post(
            restarted.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": finished}},
            headers=old_session,
            timeout=10,
        )
        assert gone.status_code == 404  # the old session died with its process
        alice = Session(restarted, "alice")  # a new session, the same principal
        assert alice.status(finished)["status"] == "completed"
        assert alice.outcome(finished) == "quick kept"
        listed = alice.ask("tasks/list", {})["result"]["tasks"]
        assert [t["taskId"] for t in listed] == [finished, unfinished]
        deadline = time.monotonic() + DEADLINE_S
        while alice.status(unfinished)["status"] == "working":  # its process is gone
            assert time.monotonic() < deadline, "the orphan never failed"
            time.sleep(0.1)
        assert alice.status(unfinished)["status"] == "failed"
        bob = Session(restarted, "bob")
        for task_id in (finished, unfinished):
            refused = bob.ask("tasks/get", {"taskId": task_id})
            assert refused["error"]["code"] == -32602, refused
            assert bob.ask("tasks/result", {"taskId": task_id})["error"]["code"] == -32602
        assert bob.ask("tasks/list", {})["result"]["tasks"] == []
        assert bob.outcome(bob.start("quick", {"text": "bob's"})) == "quick bob's"
        assert alice.outcome(alice.start("quick", {"text": "again"})) == "quick again"


def test_an_unauthenticated_sessions_legacy_tasks_are_lost_by_a_restart_modern_ones_kept(
    redis_url: str, tmp_path: Path
) -> None:
    with peers(redis_url, tmp_path, 1) as (a,):
        session = Session(a)
        legacy = session.start("quick", {"text": "legacy"})
        assert session.outcome(legacy) == "quick legacy"
        modern = call_tool(a, 1, "quick", {"text": "modern"})
        until(a, modern, lambda t: t["status"] == "completed")
        a.stop()
    with peers(redis_url, tmp_path, 1) as (restarted,):
        session = Session(restarted)  # nothing ties it to the session before
        refused = session.ask("tasks/get", {"taskId": legacy})
        assert refused["error"]["code"] == -32602, refused
        assert f"no task {legacy!r}" in refused["error"]["message"]
        assert session.ask("tasks/list", {})["result"]["tasks"] == []
        kept = task(restarted, 2, modern)  # stateless: nobody in particular, kept
        assert kept["result"]["content"][0]["text"] == "quick modern"
        assert session.outcome(session.start("quick", {"text": "new"})) == "quick new"
