"""mcpgen's task server for ``bench/tasks_load``: one tool that may run as a task, and one
that reports the process's memory (Python's allocated blocks, tasks held, VmRSS)."""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, run
from mcpgen.runtime.tasks.store import MemoryTaskStore
from mcpgen.runtime.tasks.engine import Tasks


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def build(ttl_ms: int, count: int) -> App:
    store = MemoryTaskStore(
        default_ttl_ms=ttl_ms, sweep_every_s=0.2, max_tasks=4 * count, max_tasks_per_owner=4 * count
    )  # one requester (stdio): its bounds are the server's
    tasks = Tasks(store, max_running=2 * count, max_running_per_owner=2 * count)
    app = App("mcpgen-tasks", "1.0.0", binding=stubs, tasks=tasks)

    @app.tool(task="optional", immediate_ms=0)
    async def square(n: int) -> str:
        """Square n after a pause (every task is in flight at once)."""
        await asyncio.sleep(0.2)
        return str(n * n)

    @app.tool
    def memory() -> dict[str, int]:
        """This process's memory now, what is garbage collected first."""
        gc.collect()
        return {"blocks": sys.getallocatedblocks(), "tasks": len(store), "rss_kib": rss_kib()}

    return app


if __name__ == "__main__":
    run(build(int(sys.argv[1]), int(sys.argv[2])))
