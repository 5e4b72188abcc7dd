"""What the Streamable HTTP benchmarks share: the echo servers started under uvicorn on free
ports (optionally under another tool, or on one core), their answers checked, and the wrk
script each gets."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import socket
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .harness import Cell, Process, lua_script, note, progress, tool
from .peers import CALL, MODERN_HEADERS, TEXT, Peer, legacy_headers, modern_call
from .peers import open_session, post


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running(
    chosen: Sequence[Peer],
    args: argparse.Namespace,
    *extra: str,
    under: Sequence[str] = (),
    wait: float = 60.0,
) -> Iterator[dict[str, Process]]:
    """Every server up on its own port within ``wait`` seconds (its command prefixed by
    ``under``, what it runs under); all stopped on the way out."""
    servers: dict[str, Process] = {}
    try:
        for peer in chosen:
            port = free_port()
            command = peer.command("http", "--port", str(port), *uvicorn_args(args), *extra)
            servers[peer.key] = Process([*under, *command], peer.key).listen(port, wait)
        yield servers
    finally:
        for key, server in servers.items():
            if said := server.stop().strip():
                progress(f"{key} said on exit:\n{said}")


@dataclass
class Variant:
    """One era's comparison: servers, a wrk script per server, the cells and memory."""

    name: str
    chosen: Sequence[Peer]
    scripts: dict[str, Path] = field(default_factory=dict)
    cells: dict[tuple[str, int], list[Cell]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, dict[str, float]] = field(default_factory=dict)
    legacy: bool = False


def pinned(args: argparse.Namespace) -> list[str]:
    """``--one-core``: the command that runs a server or wrk on one core only (the first
    this process may use)."""
    if not args.one_core:
        return []
    return [tool("taskset"), "--cpu-list", str(min(os.sched_getaffinity(0)))]


def uvicorn_args(args: argparse.Namespace) -> list[str]:
    return [f"--{k}={getattr(args, k)}" for k in ("loop", "http") if getattr(args, k) != "auto"]


def uvicorn_stack(args: argparse.Namespace) -> dict[str, str]:
    """The event loop and HTTP parser uvicorn's ``auto`` picks here."""
    has = {name: importlib.util.find_spec(name) is not None for name in ("uvloop", "httptools")}
    loop = args.loop if args.loop != "auto" else ("uvloop" if has["uvloop"] else "asyncio")
    http = args.http if args.http != "auto" else ("httptools" if has["httptools"] else "h11")
    return {"loop": loop, "http": http}


def prepare(variant: Variant, key: str, server: Process, check: int, tmp: Path) -> None:
    """Check a server's answers (``check`` calls, then wrk's request); write its wrk script."""
    if variant.legacy:
        headers, body, template = legacy_headers(open_session(server)), b"", CALL
        for i in range(1, check + 1):
            post(server, CALL % (i, i), headers, f"echo {i}")
        note(f"{key}: a session ({headers['Mcp-Session-Id']}), then {check} answers OK")
    else:
        headers, body, template = MODERN_HEADERS, modern_call(1), b""
        for i in range(1, check + 1):
            post(server, modern_call(i, f"check {i} ✓"), headers, f"check {i} ✓")
        data, answer = post(server, body, headers, TEXT)
        framing = "content-length" if "content-length" in answer else "chunked"
        note(f"{key}: {check + 1} answers OK ({framing}); to wrk's request: {data.decode()}")
    variant.scripts[key] = tmp / f"{key}-{'legacy' if variant.legacy else 'modern'}.lua"
    variant.scripts[key].write_text(lua_script(headers, body, template, check))
