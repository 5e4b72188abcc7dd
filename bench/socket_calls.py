"""``tools/call`` round trips over every transport in one run (see docs/performance.md):
stdio, Streamable HTTP (a legacy session), HTTP+SSE and WebSocket, for our echo server and
the official SDK's (which serves all but WebSocket: its 2.x has none).

One request in flight from a synchronous driver in this process: each server gets the
2025-11-25 handshake, ``--warmup`` untimed calls, then ``--calls`` timed ones (every answer
checked); reported per lane: calls/s, p50 and p99 latency, and the server's CPU per call
(``/proc/<pid>/task/*/schedstat``). Rounds alternate the lanes' order.
"""

from __future__ import annotations

import argparse
import http.client
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from . import BENCHMARKS
from .harness import SERVERS, BenchError, Process, alternate, cpu_seconds, emit, heading
from .harness import load, load_note, medians, note, progress, python, ratio, table
from .peers import CALL, INITIALIZE, INITIALIZED

NAME = "socket_calls"
#: (lane, server script, its options, transport).
LANES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "ours stdio": ("ours.py", (), "stdio"),
    "ours http": ("ours.py", (), "http"),
    "ours sse": ("ours.py", (), "sse"),
    "ours websocket": ("ours.py", (), "websocket"),
    "sdk stdio": ("sdk.py", (), "stdio"),
    "sdk http": ("sdk.py", ("--stateful",), "http"),
    "sdk sse": ("sdk.py", (), "sse"),
}
#: A Streamable HTTP POST's headers (a legacy session's, once it has an id).
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class Lane:
    """One server over one transport: ``call(i)`` sends call ``i`` and returns its answer."""

    def __init__(self, name: str) -> None:
        script, options, transport = LANES[name]
        self.name, self.transport = name, transport
        command = python(str(SERVERS / script), "--transport", transport, *options)
        if transport == "stdio":
            self.server = Process(command, name, pipes=True)
            self.call: Callable[[bytes], bytes] = self._stdio
        else:
            port = _free_port()
            self.server = Process([*command, "--port", str(port)], name).listen(port)
            self.port = port
            calls = {"sse": self._sse, "websocket": self._websocket, "http": self._http}
            self.call = calls[transport]
            opens = {"sse": self._open_sse, "websocket": self._open_websocket}
            opens.get(transport, self._open_http)()
        answer = self.call(INITIALIZE)
        if b'"protocolVersion"' not in answer:
            raise BenchError(f"{name}: bad initialize answer {answer[:300]!r}")
        self.send_only(INITIALIZED)

    # -- the transports ----------------------------------------------------------------------

    def _stdio(self, frame: bytes) -> bytes:
        os.write(self.server.fd_in, frame + b"\n")
        return self.server.read_line()

    def _open_http(self) -> None:
        self.posts = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.headers = dict(POST_HEADERS)

    def _http(self, frame: bytes) -> bytes:
        """One Streamable HTTP POST of a legacy session: its answer (JSON, or the data of
        the SSE event that carries it)."""
        self.posts.request("POST", "/mcp", body=frame, headers=self.headers)
        answer = self.posts.getresponse()
        body = answer.read()
        session = answer.getheader("mcp-session-id")
        if session and "Mcp-Session-Id" not in self.headers:
            self.headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        if answer.status not in (200, 202):
            raise BenchError(f"{self.name}: POST answered {answer.status}: {body[:200]!r}")
        if (answer.getheader("content-type") or "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
            return data[-1] if data else b""
        return body

    def _open_websocket(self) -> None:
        from websockets.sync.client import connect

        url = f"ws://127.0.0.1:{self.port}/mcp"
        self.socket = connect(url, subprotocols=["mcp"], compression=None, max_size=None)  # type: ignore[list-item]

    def _websocket(self, frame: bytes) -> bytes:
        self.socket.send(frame.decode())
        answer = self.socket.recv()
        return answer.encode() if isinstance(answer, str) else answer

    def _open_sse(self) -> None:
        self.stream = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.stream.request("GET", "/sse", headers={"Accept": "text/event-stream"})
        self.events = self.stream.getresponse()
        self.posts = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        kind, data = self._event()
        if kind != "endpoint":
            raise BenchError(f"{self.name}: no endpoint event first ({kind}: {data[:200]!r})")
        self.endpoint = data.decode()

    def _event(self) -> tuple[str, bytes]:
        kind, data = "message", b""
        while True:
            line = self.events.readline()
            if not line:
                raise BenchError(f"{self.name}: the SSE stream ended")
            line = line.rstrip(b"\r\n")
            if not line:
                if data:
                    return kind, data
                continue
            if line.startswith(b"event:"):
                kind = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data += line[5:].removeprefix(b" ")

    def _sse(self, frame: bytes) -> bytes:
        self.send_only(frame)
        while True:
            kind, data = self._event()
            if kind == "message":
                return data

    def send_only(self, frame: bytes) -> None:
        if self.transport == "stdio":
            os.write(self.server.fd_in, frame + b"\n")
        elif self.transport == "http":
            self._http(frame)
        elif self.transport == "websocket":
            self.socket.send(frame.decode())
        else:
            headers = {"Content-Type": "application/json"}
            self.posts.request("POST", self.endpoint, body=frame, headers=headers)
            answer = self.posts.getresponse()
            answer.read()
            if answer.status not in (200, 202):
                raise BenchError(f"{self.name}: POST answered {answer.status}")

    def close(self) -> None:
        if self.transport == "websocket":
            self.socket.close()
        elif self.transport == "sse":
            self.posts.close()
            self.stream.close()
        elif self.transport == "http":
            self.posts.close()
        self.server.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def round_of(name: str, calls: int, warmup: int) -> dict[str, float]:
    lane = Lane(name)
    try:
        for i in range(1, warmup + 1):
            lane.call(CALL % (i, i))
        latencies: list[int] = []
        cpu = cpu_seconds(lane.server.pid)
        started = time.perf_counter_ns()
        for i in range(warmup + 1, warmup + calls + 1):
            t = time.perf_counter_ns()
            answer = lane.call(CALL % (i, i))
            latencies.append(time.perf_counter_ns() - t)
            if f"echo {i}".encode() not in answer:
                raise BenchError(f"{name}: wrong answer to call {i}: {answer[:300]!r}")
        total = time.perf_counter_ns() - started
        used = cpu_seconds(lane.server.pid) - cpu
    finally:
        lane.close()
    latencies.sort()
    return {
        "calls_per_s": calls / (total / 1e9),
        "p50_us": latencies[len(latencies) // 2] / 1e3,
        "p99_us": latencies[int(len(latencies) * 0.99)] / 1e3,
        "cpu_us_per_call": used / calls * 1e6,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    started = load()
    lanes = list(args.lanes)
    heading(
        f"tools/call round trips, one in flight: {args.calls} calls after {args.warmup},"
        f" {args.rounds} rounds alternating"
    )
    rounds: dict[str, list[dict[str, float]]] = defaultdict(list)
    for i in range(args.rounds):
        for name in alternate(lanes, i):
            progress(f"round {i + 1}/{args.rounds}: {name}")
            rounds[name].append(round_of(name, args.calls, args.warmup))
    fields = ("calls_per_s", "p50_us", "p99_us", "cpu_us_per_call")
    found = {name: medians(rounds[name], fields) for name in lanes}
    rows = [[name, *(f"{found[name][f]:,.1f}" for f in fields)] for name in lanes]
    print(table(["lane", "calls/s", "p50 µs", "p99 µs", "server CPU µs/call"], rows))
    verdicts: dict[str, str] = {}
    for transport in ("stdio", "http", "sse"):
        ours, sdk = found.get(f"ours {transport}"), found.get(f"sdk {transport}")
        if ours and sdk:
            cpu = ratio(ours["cpu_us_per_call"], sdk["cpu_us_per_call"], "less", "more")
            rate = ratio(1 / ours["calls_per_s"], 1 / sdk["calls_per_s"])
            verdicts[transport] = f"CPU per call: {cpu}; calls/s: {rate}"
            note(f"{transport}: ours against the SDK: {verdicts[transport]}")
    payload = {"lanes": found, "rounds": dict(rounds), "verdicts": verdicts}
    return emit(NAME, payload | {"load_average": load_note(started)})


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog=f"python -m bench {NAME}", description=BENCHMARKS[NAME])
    p.add_argument("--calls", type=int, default=2000, help="timed calls per round (2000)")
    p.add_argument("--warmup", type=int, default=200, help="untimed calls first (200)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    lanes = "comma-separated, of: " + ", ".join(LANES)
    p.add_argument(
        "--lanes",
        type=lambda text: [x.strip() for x in text.split(",")],
        default=list(LANES),
        help=lanes,
    )
    args = p.parse_args(argv)
    unknown = [lane for lane in args.lanes if lane not in LANES]
    if unknown:
        raise BenchError(f"unknown lanes {unknown}; known: {list(LANES)}")
    return measure(args)


if __name__ == "__main__":
    main()
