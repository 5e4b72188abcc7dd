"""Our 2025-11-25 server's tasks with the TypeScript SDK 1.x client's task support
(``client.experimental.tasks``; the SDK from the npm registry, pinned in
``tests/support/node_tools.py``): ``tests/peers/ts_task_client.mjs`` drives examples.everything
over stdio and over Streamable HTTP on 127.0.0.1 and reports what it saw.

The SDK learns each tool's ``execution.taskSupport`` from ``tools/list``, calls the
task tools with ``params.task``, polls ``tasks/get`` at our ``pollInterval`` and fetches
``tasks/result``: a task completes with its result; one asking for input goes
``input_required`` and the SDK's elicitation handler answers the request tied to it;
failed tasks are reported failed, with the tool's ``isError`` result or the request's
error from ``tasks/result``; a task is cancelled (cancelling it again is the spec's
-32602) and every task is listed.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.node_tools import TS_SDK, node_bin, node_env, npm_package  # noqa: E402
from support.processes import free_port  # noqa: E402
from support.node_tools import wait_listening  # noqa: E402
from support.processes import stop  # noqa: E402

pytestmark = pytest.mark.slow
SCRIPT = ROOT / "tests" / "peers" / "ts_task_client.mjs"
EVERYTHING = [sys.executable, "-m", "examples.everything"]
RUN_TIMEOUT = 120


def drive(target: list[str]) -> dict[str, Any]:
    env = {**node_env(), "TS_SDK_DIR": str(npm_package(TS_SDK))}
    done = subprocess.run(
        [str(node_bin() / "node"), str(SCRIPT), *target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_over(transport: str) -> dict[str, Any]:
    if transport == "stdio":
        return drive(["stdio", *EVERYTHING, "--transport", "stdio"])
    port = free_port()
    server = subprocess.Popen(
        [*EVERYTHING, "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 30)
        return drive(["http", f"http://127.0.0.1:{port}/mcp"])
    finally:
        stop(server)


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    return [m["type"] if m["type"] != "taskStatus" else m["status"] for m in messages]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_client_runs_our_tools_as_tasks(transport: str) -> None:
    seen = run_over(transport)
    assert seen["capabilities"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert seen["taskSupport"]["slow_compute"] == "optional"
    assert seen["taskSupport"]["confirm_delete"] == "required"

    slow = seen["slow"]
    assert kinds(slow)[0] == "taskCreated" and kinds(slow)[-2:] == ["completed", "result"]
    assert slow[-1] == {"type": "result", "text": "ts: computed for 1s", "isError": False}

    confirm = seen["confirm"]
    assert kinds(confirm)[0] == "taskCreated" and confirm[-1]["text"] == "a.txt deleted"
    assert "input_required" in kinds(confirm)
    task_id = confirm[0]["taskId"]
    assert seen["elicited"] == [{"message": "Delete a.txt?", "related": {"taskId": task_id}}]

    assert kinds(seen["failing"])[-2:] == ["failed", "error"]  # isError fails the task here
    assert seen["failingResult"] == {
        "text": "failing_job failed, as it always does",
        "isError": True,
    }
    assert kinds(seen["protocolError"])[-2:] == ["failed", "error"]
    assert seen["protocolErrorResult"]["code"] == -32603
    assert "protocol_error_job broke" in seen["protocolErrorResult"]["message"]

    assert seen["cancelled"]["status"] == "cancelled" and seen["afterCancel"] == "cancelled"
    assert seen["cancelled"]["taskId"] == seen["cancelCreated"]["taskId"]
    assert seen["cancelAgain"]["code"] == -32602

    listed = {task["taskId"]: task["status"] for task in seen["listed"]}
    made = [seen[k][0]["taskId"] for k in ("slow", "confirm", "failing", "protocolError")]
    assert [listed[t] for t in made] == ["completed", "completed", "failed", "failed"]
    assert listed[seen["cancelCreated"]["taskId"]] == "cancelled"
    assert seen["plain"] == "plain: computed for 0s"  # no task asked: an ordinary call
