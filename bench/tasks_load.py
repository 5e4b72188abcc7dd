"""Many tasks at once in one server process, in both eras: all created, all answered with
their own outcome, and the process's memory before, at the peak and after the tasks' TTL
(see docs/performance.md). The server is ``bench/servers/tasks.py`` over stdio."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from typing import Any

from .harness import BenchError, Process, emit, heading, note, python, table

NAME = "tasks_load"
TASKS = "io.modelcontextprotocol/tasks"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def send(server: Process, messages: Sequence[dict[str, Any]]) -> None:
    os.write(server.fd_in, b"".join(json.dumps(m).encode() + b"\n" for m in messages))


def answers(server: Process, ids: set[int]) -> dict[int, Any]:
    found: dict[int, Any] = {}
    while len(found) < len(ids):
        message = json.loads(server.read_line())
        if message.get("id") in ids and "method" not in message:
            found[message["id"]] = message
    return found


def call(method: str, rid: int, params: dict[str, Any], era: str) -> dict[str, Any]:
    if era == "modern":
        params = {**params, "_meta": MODERN_META}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def memory(server: Process, rid: int, era: str) -> dict[str, int]:
    send(server, [call("tools/call", rid, {"name": "memory", "arguments": {}}, era)])
    answer = answers(server, {rid})[rid]["result"]
    return json.loads(answer["content"][0]["text"])


def one_era(server: Process, era: str, count: int, ttl_ms: int, base: int) -> dict[str, Any]:
    """``count`` tasks at once, then every outcome; memory before, at the peak, after."""
    started = time.perf_counter()
    before = memory(server, base, era)
    started = time.perf_counter()
    task = {"task": {"ttl": ttl_ms}} if era == "legacy" else {}
    send(server, [
        call("tools/call", base + 1 + n, {"name": "square", "arguments": {"n": n}, **task}, era)
        for n in range(count)
    ])  # fmt: skip
    created = answers(server, {base + 1 + n for n in range(count)})
    created_s = time.perf_counter() - started
    ids = {}
    for n in range(count):
        result = created[base + 1 + n].get("result")
        if result is None or ("task" if era == "legacy" else "taskId") not in result:
            raise BenchError(f"{era}: no task made: {str(created[base + 1 + n])[:300]}")
        ids[n] = result["task"]["taskId"] if era == "legacy" else result["taskId"]
    if len(set(ids.values())) != count:
        raise BenchError(f"{era}: {count - len(set(ids.values()))} task ids repeated")
    peak = memory(server, base + 2 * count + 1, era)
    pending, rid, lost = set(range(count)), base + 3 * count, 0
    while pending:
        asked = {}
        for n in sorted(pending):
            rid += 1
            asked[rid] = n
        method = "tasks/result" if era == "legacy" else "tasks/get"
        send(server, [call(method, r, {"taskId": ids[n]}, era) for r, n in asked.items()])
        for r, message in answers(server, set(asked)).items():
            n = asked[r]
            result = message.get("result") or {}
            if era == "modern" and result.get("status") == "working":
                continue
            inner = result if era == "legacy" else result.get("result") or {}
            if inner.get("content", [{}])[0].get("text") != str(n * n):
                lost += 1
            pending.discard(n)
        if pending:
            time.sleep(0.1)
    done_s = time.perf_counter() - started
    time.sleep(ttl_ms / 1000 + 1.0)  # past the TTL, and a sweep or more
    after = memory(server, rid + 1, era)
    return {
        "era": era, "tasks": count, "lost": lost, "created_s": round(created_s, 3),
        "all_done_s": round(done_s, 3), "before": before, "peak": peak, "after": after,
    }  # fmt: skip


def main(argv: Sequence[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}")
    p.add_argument("--tasks", type=int, default=1000, help="tasks at once (default 1000)")
    p.add_argument("--ttl-ms", type=int, default=3000, help="their TTL (default 3000)")
    args = p.parse_args(argv)
    command = python("bench/servers/tasks.py", str(args.ttl_ms), str(args.tasks))
    rows, records = [], []
    for era in ("legacy", "modern"):  # a process each: a legacy session answers as legacy
        with Process(command, f"mcpgen tasks ({era})", pipes=True) as server:
            if era == "legacy":
                init = {"protocolVersion": "2025-11-25", "capabilities": {}}
                init["clientInfo"] = {"name": "bench", "version": "0"}
                send(server, [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}])
                answers(server, {0})
                send(server, [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
            # a first round warms what a process makes once (caches, imports, arenas)
            one_era(server, era, min(100, args.tasks), args.ttl_ms, 1)
            record = one_era(server, era, args.tasks, args.ttl_ms, 1_000_000)
        records.append(record)
        b, k, a = record["before"], record["peak"], record["after"]
        rows.append([
            era, record["tasks"], record["lost"], f"{record['created_s']:.2f}",
            f"{record['all_done_s']:.2f}", f"{b['tasks']}/{k['tasks']}/{a['tasks']}",
            f"{b['blocks']:,}/{k['blocks']:,}/{a['blocks']:,}",
            f"{b['rss_kib'] // 1024}/{k['rss_kib'] // 1024}/{a['rss_kib'] // 1024}",
        ])  # fmt: skip
    heading(f"{args.tasks} tasks at once over stdio, TTL {args.ttl_ms} ms")
    headers = ["era", "tasks", "lost", "created (s)", "all done (s)", "held b/peak/after"]
    print(table([*headers, "Python blocks b/peak/after", "VmRSS MiB b/peak/after"], rows))
    note("'before' follows a first round of 100 tasks (what a process makes once is made);")
    note("'after' is read once the TTL passed: the tasks and their results are gone.")
    for record in records:
        if record["lost"] or record["after"]["tasks"]:
            raise BenchError(
                f"{record['era']}: {record['lost']} lost, {record['after']['tasks']} left"
            )
    return emit(NAME, {"records": records})
