"""Python peers that cannot share the project's venv: the official Python SDK 1.x (which
held the WebSocket transport that 2.x dropped), installed once from PyPI into a venv of
its own under ``.cache/peers`` and reused."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

from support.checkout import ROOT

#: The last 1.x release, pinned, with what its WebSocket transport and our peer need.
SDK1 = ["mcp==1.30.0", "websockets>=14", "uvicorn>=0.30"]
SDK1_VENV = ROOT / ".cache" / "peers" / "python-mcp-1.30.0"
INSTALL_TIMEOUT = 600


def sdk1_python() -> Path:
    """The interpreter of a venv holding the Python SDK 1.x (made on first use)."""
    python = SDK1_VENV / "bin" / "python"
    stamp = SDK1_VENV / ".installed"
    SDK1_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(SDK1_VENV.parent / "python-mcp-1.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the workers of ``pytest -n`` install it once
        if not stamp.exists():
            subprocess.run([sys.executable, "-m", "venv", str(SDK1_VENV)], check=True)
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", *SDK1],
                check=True,
                timeout=INSTALL_TIMEOUT,
            )
            stamp.write_text(" ".join(SDK1))
    return python
