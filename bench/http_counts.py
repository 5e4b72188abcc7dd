"""``http_calls --instructions``: each whole server process's instructions per request under
callgrind, loaded by wrk (see docs/performance.md)."""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import peers
from .harness import BenchError, Process, clean_env, cpu_seconds, heading, note, progress
from .harness import table, tool, wrk
from .http_servers import Variant, prepare, running, uvicorn_stack
from .peers import PATH

#: Seconds wrk waits for an answer from a server under callgrind (the SDK's, at 32
#: connections, takes up to seconds).
SLOW = 120
SUMMARY = re.compile(rb"^summary: (\d+)$", re.MULTILINE)


class Grind:
    """One server under callgrind, and the dumps ``callgrind_control -d`` asks of it: each
    counts what the process did since the one before (``cg.PID.N``, N from 1)."""

    def __init__(self, folder: Path, server: Process) -> None:
        self.folder, self.server, self.dumps = folder, server, 0

    def dump(self) -> int:
        """Instructions since the last dump, once the server has finished what it was
        doing (its CPU time stops growing); a missing dump is an error, not a zero."""
        settle(self.server.pid)
        self.dumps += 1
        command = [tool("callgrind_control"), "-d", str(self.server.pid)]
        # (the servers' environment, so that vgdb looks where valgrind put its pipes)
        said = subprocess.run(command, capture_output=True, text=True, env=clean_env(), timeout=60)
        path = self.folder / f"cg.{self.server.pid}.{self.dumps}"
        found = SUMMARY.search(path.read_bytes()) if path.exists() else None
        if found is None:
            raise BenchError(f"{self.server.label}: no callgrind dump {path.name}\n{said.stdout}")
        return int(found[1])


def settle(pid: int, step: float = 0.2) -> None:
    """Wait until process ``pid`` uses no more CPU; an error after a minute (a count taken
    while it still works would hold work no request of the run asked for)."""
    before, deadline = cpu_seconds(pid), time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(step)
        now = cpu_seconds(pid)
        if now - before < step / 20:
            return
        before = now
    raise BenchError(f"process {pid} still busy a minute after its load stopped")


def counted(variant: Variant, args: argparse.Namespace) -> dict[str, int]:
    """Instructions per request of each whole server process (uvicorn, the event loop and
    the app; not the kernel) under callgrind, loaded by wrk: after a warm-up, a run of
    ``--duration`` seconds and one of twice that, each between two dumps; the difference
    of the two runs' counts over the difference of their answered requests cancels what
    the requests still in flight when a run ends cost. One server at a time."""
    per: dict[str, int] = {}
    for peer in variant.chosen:
        with tempfile.TemporaryDirectory(prefix="mcpgen-bench-") as tmp:
            folder = Path(tmp)
            grind = [
                tool("valgrind"),
                "-q",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg.%p",
            ]
            progress(f"{variant.name}: starting {peer.key} under callgrind")
            with running([peer], args, under=grind, wait=600.0) as servers:
                server = servers[peer.key]
                prepare(variant, peer.key, server, args.check, folder)
                script, counts = variant.scripts[peer.key], Grind(folder, server)
                for c in args.concurrency:
                    progress(f"{variant.name}: {peer.key}, c={c}, under callgrind")
                    wrk(script, server, PATH, c, max(args.warmup, 1), SLOW)
                    counts.dump()  # (the warm-up, and what came before it)
                    short = wrk(script, server, PATH, c, args.duration, SLOW)
                    i_short = counts.dump()
                    long = wrk(script, server, PATH, c, 2 * args.duration, SLOW)
                    i_long = counts.dump()
                    requests = long.requests - short.requests
                    if requests <= 0:
                        raise BenchError(f"{peer.key}, c={c}: the longer run answered no more")
                    per[f"{peer.key}@c{c}"] = round((i_long - i_short) / requests)
    return per


def count(args: argparse.Namespace) -> dict[str, Any]:
    """``--instructions``: each server's instructions per request at each concurrency, and
    their ratios (counts do not move with the machine's load, nor with what waking the
    client on another core costs the server's kernel time)."""
    variants = [Variant("modern (stateless 2026-07-28)", peers.selected(args))]
    if args.legacy:
        stateful = replace(peers.PEERS["sdk"], args=("--stateful",))
        variants.append(
            Variant("legacy (2025-11-25 session)", [peers.PEERS["ours"], stateful], legacy=True)
        )
    result: dict[str, Any] = {"duration_s": args.duration, "uvicorn": uvicorn_stack(args)}
    for variant in variants:
        per = counted(variant, args)
        heading(f"{variant.name}: instructions per request under callgrind (whole server process)")
        keys = [p.key for p in variant.chosen]
        rows = [[c, k, f"{per[f'{k}@c{c}']:,}"] for c in args.concurrency for k in keys]
        print(table(["conc", "server", "instructions per request"], rows))
        ratios: dict[str, float] = {}
        for c in args.concurrency:
            for top, bottom in (
                ("ours", "bare"),
                ("ours", "checked"),
                ("checked", "bare"),
                ("sdk", "ours"),
            ):
                a, b = per.get(f"{top}@c{c}"), per.get(f"{bottom}@c{c}")
                if a and b:
                    ratios[f"{top}_over_{bottom}@c{c}"] = r = round(a / b, 3)
                    note(f"c={c}: {top} / {bottom}: {r:.2f}× the instructions per request")
        result["legacy" if variant.legacy else "modern"] = {"per_request": per, "ratios": ratios}
    if args.legacy:
        for c in args.concurrency:
            stateless, session = result["modern"]["per_request"], result["legacy"]["per_request"]
            if f"ours@c{c}" in stateless:
                r = round(session[f"ours@c{c}"] / stateless[f"ours@c{c}"], 3)
                result["legacy"]["ratios"][f"session_over_stateless@c{c}"] = r
                note(f"c={c}: ours, a legacy session's request / a stateless one: {r:.2f}×")
    return result | {"instructions": True}
