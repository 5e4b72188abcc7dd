"""Several uvicorn worker processes of one ASGI app sharing one real redis-server
(``MCPGEN_STORE``), behind haproxy running the configuration of docs/deployment.md, with
the environment the guide gives them, all on 127.0.0.1 and stopped at the end; a worker
can be killed (``SIGKILL``) or restarted (``SIGTERM``, a new environment) on the way."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from support.checkout import ROOT
from support.doc_blocks import blocks_of
from support.haproxy import Haproxy
from support.node_tools import wait_listening
from support.processes import free_port, stop
from support.redis_server import RedisServer

GUIDE = ROOT / "docs" / "deployment.md"


def guide_config(front: int, workers: list[int]) -> str:
    """The haproxy configuration of the deployment guide, on these ports (the guide's
    workers beyond ``len(workers)`` left out)."""
    text = next(b.code for b in blocks_of(GUIDE) if "frontend mcp" in b.code)
    text = text.replace("127.0.0.1:8000", f"127.0.0.1:{front}")
    for n, port in enumerate(workers, start=1):
        text = text.replace(f"127.0.0.1:800{n}", f"127.0.0.1:{port}")
    text = "\n".join(line for line in text.splitlines() if not re.search(r":800\d", line))
    assert f"127.0.0.1:{workers[-1]}" in text, text
    return text + "\n"


@dataclass
class Workers:
    """The running cluster: the balancer's URL, each worker's port and process."""

    url: str
    ports: list[int]
    redis: RedisServer
    logs: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    envs: list[dict[str, str]] = field(default_factory=list)

    def launch(self, n: int) -> None:
        """Start worker ``n`` (again) as ``commands[n]`` with ``envs[n]``."""
        with open(self.logs / f"worker{n}.log", "ab") as out:
            process = subprocess.Popen(
                self.commands[n], cwd=ROOT, env=self.envs[n], stdout=out, stderr=out
            )
        if n < len(self.processes):
            self.processes[n] = process
        else:
            self.processes.append(process)

    def restart(self, n: int, **env: str | None) -> None:
        """A rolling restart's step: worker ``n`` stopped as a supervisor stops it
        (``SIGTERM``, then its shutdown), started again with ``env`` changed (None: unset),
        once it listens."""
        stop(self.processes[n], grace=60)
        changed = dict(self.envs[n])
        for name, value in env.items():
            if value is None:
                changed.pop(name, None)
            else:
                changed[name] = value
        self.envs[n] = changed
        self.launch(n)
        wait_listening(self.ports[n], 30)

    @property
    def port(self) -> int:
        """The balancer's port."""
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def kill(self, n: int) -> None:
        """``kill -9`` of worker ``n``: no shutdown, no goodbye."""
        process = self.processes[n]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)


@contextmanager
def workers(
    app: str, count: int, logs: Path, app_dir: Path = ROOT, **env_extra: str
) -> Iterator[Workers]:
    """``count`` uvicorn processes of ``app`` (``module:attribute``, imported from
    ``app_dir``), one Redis (keeping its data across a restart), haproxy in front."""
    with RedisServer(persist=True) as redis:
        env = {**os.environ, "MCPGEN_STORE": redis.url, "PYTHONPATH": str(ROOT), **env_extra}
        env.setdefault("MCPGEN_STATE_KEY", secrets.token_hex(32))
        env.setdefault("MCPGEN_STOP_DELAY", "3")  # as the guide has it
        env.pop("MCPGEN_TASK_STORE", None)
        ports = [free_port() for _ in range(count)]
        running = Workers("", ports, redis, logs)
        balancer: Haproxy | None = None
        try:
            for n, port in enumerate(ports):
                command = [sys.executable, "-m", "uvicorn", app, "--app-dir", str(app_dir)]
                command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
                running.commands.append(command)
                running.envs.append(dict(env))
                running.launch(n)
            for port in ports:
                wait_listening(port, 30)
            front = free_port()
            balancer = Haproxy(guide_config(front, ports), front)
            running.url = f"http://127.0.0.1:{front}/mcp"
            yield running
        finally:
            if balancer is not None:
                balancer.stop()
            for process in running.processes:  # all at once: each serves on a while
                if process.poll() is None:
                    process.terminate()
            for process in running.processes:
                stop(process, grace=30)
