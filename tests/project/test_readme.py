"""The README's "Serve and call" section runs as pasted: its code blocks are written to
files and run (server, client over stdio and HTTP), with the in-memory test and the low
level of docs/serving.md and the tasks of docs/tasks.md."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.runtime.testing import connect
from mcpgen.runtime.client import http_client
from support.processes import announced_http

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60


# Slow: the README's code runs as processes (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


def blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Serve and call") : text.index("## Where next")]
    serving = (ROOT / "docs" / "serving.md").read_text()
    readme = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    # serving.md's in-memory test of the README's server and the low-level server the
    # README points to, found by what they are, wherever serving.md puts them
    found = re.findall(r"<!-- run: ([^>]*?) -->\n```python\n(.*?)```", serving, re.DOTALL)
    (check,) = [code for _, code in found if "from server import app" in code]
    (low_level,) = [code for run, code in found if run.split(",")[0] == "low-level"]
    return [*readme, check, low_level]


def written(tmp_path: Path) -> Path:
    server, client, check, low_level = blocks()
    (tmp_path / "server.py").write_text(server)
    (tmp_path / "client.py").write_text(client)
    (tmp_path / "check.py").write_text(check)
    (tmp_path / "greeter.py").write_text(low_level)
    return tmp_path


def run(script: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_section_has_the_blocks_this_test_runs() -> None:
    assert len(blocks()) == 4


def test_the_client_calls_the_server_over_stdio(tmp_path: Path) -> None:
    out = run("client.py", written(tmp_path))
    assert out.splitlines() == ["{'result': 5}", "This is note groceries."]


def test_the_in_memory_test_passes(tmp_path: Path) -> None:
    run("check.py", written(tmp_path))


def test_the_server_over_http(tmp_path: Path) -> None:
    folder = written(tmp_path)
    with announced_http([sys.executable, "server.py", "0"], folder) as url:

        async def call() -> object:
            async with http_client(c.Client, url) as client:
                result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
                return result.structured_content

        assert asyncio.run(asyncio.wait_for(call(), TIMEOUT)) == {"result": 5}


def test_the_low_level_server(tmp_path: Path) -> None:
    path = written(tmp_path) / "greeter.py"
    spec = importlib.util.spec_from_file_location("readme_greeter", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def call() -> str:
        async with connect(module.server, mode="legacy") as client:
            result = await client.call_tool(name="greet", arguments={"who": "Ada"})
            return result.content[0].text

    assert asyncio.run(asyncio.wait_for(call(), TIMEOUT)) == "Hello, Ada!"


def test_the_tasks_example_runs_as_a_task(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "tasks.md").read_text()
    section = text[: text.index("| setting | default | what it bounds |")]
    code = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[0]
    path = tmp_path / "reports.py"
    path.write_text(code.replace("asyncio.sleep(10)", "asyncio.sleep(0.01)"))
    spec = importlib.util.spec_from_file_location("readme_reports", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from support.sansio import request, serving

    async def scenario() -> dict[str, object]:
        async with serving(module.app.server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "build_report", "arguments": {"quarter": "Q3"}, "task": {}}
            await peer.send(request(1, "tools/call", params))
            task_id = (await peer.answer_to(1))["result"]["task"]["taskId"]
            await peer.send(request(2, "tasks/result", {"taskId": task_id}))
            return (await peer.answer_to(2))["result"]

    result = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert result["content"] == [{"type": "text", "text": "report for Q3"}]


def test_the_tasks_client_example_follows_a_task(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "tasks.md").read_text()
    section = text[: text.index("| setting | default | what it bounds |")]
    server_code, client_code = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    (tmp_path / "reports.py").write_text(
        server_code.replace("asyncio.sleep(10)", "asyncio.sleep(0.01)")
    )
    (tmp_path / "report_client.py").write_text(client_code)
    modules = {}
    for name in ("reports", "report_client"):
        spec = importlib.util.spec_from_file_location(f"readme_{name}", tmp_path / f"{name}.py")
        assert spec is not None and spec.loader is not None
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])

    async def both_eras() -> list[str]:
        said = []
        for mode in ("legacy", "modern"):
            async with connect(modules["reports"].app.server, mode=mode) as client:
                said.append(await modules["report_client"].report(client))
        return said

    assert asyncio.run(asyncio.wait_for(both_eras(), TIMEOUT)) == ["report for Q3"] * 2
