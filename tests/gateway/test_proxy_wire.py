"""Every message the proxy sends is valid at the version of whom it sends it to: what
``mcpgen proxy`` sends its client against the schema of the version that client speaks,
and what it sends the upstream against the schema of the version the upstream speaks.

``mcpgen proxy`` runs over stdio in front of ``examples.everything`` (over stdio too), its
upstream era pinned each way; a tee records each side of each hop (:mod:`support.wire_capture`).
The official SDK client in its default mode and ours at every dated version drive
everything the upstream offers through it (:func:`support.wire_clients.drive`): every tool,
resource, template, prompt, completion, and the upstream's sampling, elicitation and roots
requests, answered; clients of a version with tasks (2025-11-25, 2026-07-28) also run a
tool as the proxy's task, and another whose upstream run fails, to their ends.
``jsonschema`` judges both hops (:mod:`support.wire_oracle`)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from mcpgen.runtime.client import stdio_client
from support.checkout import REPORT, ROOT
from support.wire_capture import stdio_client_messages, stdio_messages, stop_captured
from support.wire_clients import HANDSHAKE, Drive, Ours, Sdk, drive, on_log, our_client
from support.wire_clients import sdk_elicit, sdk_roots, sdk_sampling
from support.wire_oracle import Oracle, Sent, shorten

TEE = ROOT / "tests" / "support" / "wire_capture.py"
SESSION_TIMEOUT = 90.0
#: What each session must have had answered with a result, on both hops.
COVERED = {"tools/list", "tools/call", "resources/list", "resources/read", "prompts/list"}
#: What a session of a client running tasks must also have had answered at 2025-11-25 (at
#: 2026-07-28 the extension's methods are not the core schema's to judge: a call answered
#: with a task is).
TASK_METHODS = {"tasks/get", "tasks/result"}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(ROOT / "schema")


#: (client, the version it offers or None for the SDK's default mode).
CLIENTS = [("sdk", None), *(("mcpgen", v) for v in [*HANDSHAKE, "2026-07-28"])]


def proxied_command(down: Path, up: Path, upstream_mode: str) -> list[str]:
    """The downstream tee, ``mcpgen proxy``, the upstream tee, the upstream."""
    upstream = [str(TEE), str(up), "--", sys.executable, "-m", "examples.everything"]
    proxy = [sys.executable, "-m", "mcpgen", "proxy", "--upstream-mode", upstream_mode]
    return [str(TEE), str(down), "--", *proxy, "--", sys.executable, *upstream]


async def run_client(kind: str, version: str | None, command: list[str], d: Drive) -> None:
    if kind == "sdk":
        env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
        params = StdioServerParameters(
            command=sys.executable, args=command, cwd=str(ROOT), env=env or None
        )
        async with SdkClient(
            params,
            mode="auto",
            log_level="debug",
            sampling_callback=sdk_sampling,
            elicitation_callback=sdk_elicit,
            list_roots_callback=sdk_roots,
            logging_callback=on_log,
        ) as client:
            await drive(Sdk(client), d)
        return
    assert version is not None
    client_class, handlers = our_client(version)
    mode = "auto" if version == "2026-07-28" else "legacy"
    options: dict[str, Any] = {"handlers": handlers, "mode": mode, "versions": [version]}
    async with stdio_client(client_class, sys.executable, command, cwd=str(ROOT), **options) as c:
        await drive(Ours(c, handlers.types), d)
        if version in TASKED:
            await d.attempt("a task", lambda: run_tasks(c.session))


#: The versions whose clients run tools as tasks.
TASKED = ("2025-11-25", "2026-07-28")


async def run_tasks(session: Any) -> None:
    """A tool run as the proxy's task to its result, and one that fails as a tool."""
    handle = await session.call_tool_as_task("slow_compute", {"seconds": 0.3, "label": "wire"})
    assert not handle.immediate
    await handle.result()
    failing = await session.call_tool_as_task("failing_job", {})
    await failing.result()
    await failing.status()


def problems_of(sent: list[Sent], hop: str) -> list[str]:
    found = [
        f"{hop} | {s.version} | {s.kind} {s.method or ''}\n    {s.error}\n    {shorten(s.message)}"
        for s in sent
        if s.error is not None
    ]
    answered = {s.method for s in sent if s.kind == "result"} if hop == "to the client" else set()
    if hop == "to the client" and not COVERED <= answered:
        found.append(f"{hop}: never answered with a result: {sorted(COVERED - answered)}")
    return found


@pytest.mark.parametrize("upstream_mode", ["legacy", "modern"])
@pytest.mark.parametrize(
    ("kind", "version"), CLIENTS, ids=[f"{k}-{v or 'auto'}" for k, v in CLIENTS]
)
async def test_every_message_the_proxy_sends_is_valid_on_both_hops(
    kind: str, version: str | None, upstream_mode: str, oracle: Oracle, tmp_path: Path
) -> None:
    down, up = tmp_path / "down.txt", tmp_path / "up.txt"
    d = Drive(lambda: stdio_messages(down, oracle))
    failure: str | None = None
    try:
        with anyio.fail_after(SESSION_TIMEOUT):
            await run_client(kind, version, proxied_command(down, up, upstream_mode), d)
    except Exception as exc:
        failure = f"{type(exc).__name__}: {shorten(str(exc), 300)}"
    finally:
        stop_captured(down)
        stop_captured(up)
    to_client = stdio_messages(down, oracle)
    to_upstream = stdio_client_messages(up, oracle)
    for hop, sent in (("to the client", to_client), ("to the upstream", to_upstream)):
        valid = sum(s.error is None for s in sent)
        key = f"proxy wire validity, {hop}"  # "wire validity…" lines are rewritten whole
        before = REPORT.get(key, "0 of 0").split()
        REPORT[key] = f"{int(before[0]) + valid} of {int(before[2]) + len(sent)} messages valid"
    problems = problems_of(to_client, "to the client") + problems_of(to_upstream, "to the upstream")
    results = [s for s in to_client if s.kind == "result"]
    if version == "2025-11-25" and not TASK_METHODS <= {s.method for s in results}:
        problems.append(
            f"tasks never answered: {sorted(TASK_METHODS - {s.method for s in results})}"
        )
    if version == "2026-07-28" and not any(
        (s.message.get("result") or {}).get("resultType") == "task" for s in results
    ):
        problems.append("no call was answered with a task")
    upstream_versions = {s.version for s in to_upstream if s.kind == "request"}
    expected = "2026-07-28" if upstream_mode == "modern" else "2025-11-25"
    if upstream_versions != {expected}:
        problems.append(f"the upstream was spoken to at {sorted(map(str, upstream_versions))}")
    if failure is not None:
        problems.append(f"the session failed: {failure}")
    notes = "".join(f"\n  client: {note}" for note in Counter(d.notes))
    assert not problems, "\n".join(problems) + notes
