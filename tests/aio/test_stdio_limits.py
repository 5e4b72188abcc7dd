"""stdio on regular files, and the message size limit, with real subprocesses.

* The everything server reads requests from a regular file, a pipe or ``/dev/null`` and
  writes answers to a regular file, a pipe or ``/dev/null``: it exits 0 at end of input
  with one answer per request in its output.
* A line over ``Limits.max_message_bytes`` is consumed in pieces, never held whole, and
  answered with -32600 carrying the request's id when its first bytes show it; the next
  line is served as usual. The client side logs such a line from a server and skips it.

The servers are driven with ``LinePeer`` (tests/support/line_peer.py) or with plain
``subprocess`` where stdin or stdout is a file; every wait is bounded and every process
is killed at teardown.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from support.checkout import ROOT
from support.line_peer import (
    EVERYTHING,
    READ_TIMEOUT,
    SIMPLE_TEXT,
    LinePeer,
    error_code,
    tool_text,
)

from mcpgen.runtime import INVALID_REQUEST, PARSE_ERROR
from mcpgen.runtime.core.limits import DEFAULT, MiB, Limits
from mcpgen.runtime.aio.line_ends import request_id
from mcpgen.runtime.aio.stdio import StdioProcess

EXIT_TIMEOUT = 20.0

#: The requests of the file tests (the notification gets no answer), by id.
REQUESTS: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "file-peer", "version": "1.0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": "call",
        "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 4, "method": "ping"},
]
REQUEST_LINES = b"".join(json.dumps(r).encode() + b"\n" for r in REQUESTS)


# Slow: real subprocesses, pipes and files throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


def check_answers(output: bytes, expected_ids: list[Any]) -> dict[Any, Any]:
    """Every line of ``output`` is a JSON-RPC answer; exactly one per expected id, each a
    result. Returns the answers by id."""
    answers: dict[Any, Any] = {}
    for line in output.splitlines():
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and "result" in message, message
        assert message["id"] not in answers, f"answered twice: {message}"
        answers[message["id"]] = message
    assert sorted(map(str, answers)) == sorted(map(str, expected_ids)), output[:2000]
    return answers


def check_file_answers(output: bytes) -> None:
    answers = check_answers(output, [1, 2, "call", 4])
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"
    assert any(tool["name"] == "test_simple_text" for tool in answers[2]["result"]["tools"])
    assert answers["call"]["result"]["content"][0]["text"] == SIMPLE_TEXT
    assert answers[4]["result"] == {}


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; each one still alive at teardown is killed."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(READ_TIMEOUT)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., LinePeer]]:
    """Start a ``LinePeer`` on the everything server with extra options; killed at teardown."""
    peers: list[LinePeer] = []

    def start(*options: str) -> LinePeer:
        peer = LinePeer((*EVERYTHING, *options), tmp_path / f"stderr-{len(peers)}.log")
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.kill()


def start_server(
    processes: list[subprocess.Popen[bytes]],
    stdin: IO[bytes] | int,
    stdout: IO[bytes] | int,
    stderr: IO[bytes] | int = subprocess.DEVNULL,
    options: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, *EVERYTHING, *options], cwd=ROOT, stdin=stdin, stdout=stdout, stderr=stderr
    )
    processes.append(process)
    return process


# -- stdin and stdout as regular files, pipes, /dev/null --------------------------------------


def test_requests_from_a_file_answered_into_a_file(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """``server < requests.jsonl > answers.jsonl``"""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUEST_LINES)
    answers = tmp_path / "answers.jsonl"
    log = tmp_path / "stderr.log"
    with open(requests, "rb") as stdin, open(answers, "wb") as stdout, open(log, "wb") as err:
        process = start_server(processes, stdin, stdout, err)
        assert process.wait(EXIT_TIMEOUT) == 0, log.read_text()
    check_file_answers(answers.read_bytes())
    assert "Traceback" not in log.read_text()


def test_requests_from_a_file_answered_into_a_pipe(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUEST_LINES)
    with open(requests, "rb") as stdin:
        process = start_server(processes, stdin, subprocess.PIPE)
        output, _ = process.communicate(timeout=EXIT_TIMEOUT)
    assert process.returncode == 0
    check_file_answers(output)


def test_every_answer_reaches_a_slow_pipe_before_exit(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """End of input comes at once from a file while 5 MB of answers wait in the pipe
    transport's buffer for a reader that starts late: the server flushes them before it
    exits (it used to exit with most of them unsent)."""
    big = "z" * 100_000
    gets = [
        {
            "jsonrpc": "2.0",
            "id": f"g{n}",
            "method": "prompts/get",
            "params": {
                "name": "test_prompt_with_arguments",
                "arguments": {"arg1": big, "arg2": "b"},
            },
        }
        for n in range(50)
    ]
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUEST_LINES + b"".join(json.dumps(g).encode() + b"\n" for g in gets))
    with open(requests, "rb") as stdin:
        process = start_server(processes, stdin, subprocess.PIPE)
    time.sleep(1.0)  # nobody reads yet
    output, _ = process.communicate(timeout=EXIT_TIMEOUT)
    assert process.returncode == 0
    check_answers(output, [1, 2, "call", 4, *(g["id"] for g in gets)])


def test_requests_from_a_pipe_answered_into_a_file(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """Answers reach the file as they are written (the peer can wait for each one), and
    all of them are there at exit."""
    answers = tmp_path / "answers.jsonl"
    with open(answers, "wb") as stdout:
        process = start_server(processes, subprocess.PIPE, stdout)
    assert process.stdin is not None
    first, rest = REQUEST_LINES.split(b"\n", 1)
    process.stdin.write(first + b"\n")
    process.stdin.flush()
    deadline = time.monotonic() + READ_TIMEOUT
    while not answers.read_bytes().endswith(b"\n"):
        assert time.monotonic() < deadline, "no answer to initialize while stdin is open"
        time.sleep(0.01)
    assert json.loads(answers.read_bytes())["id"] == 1
    process.stdin.write(rest)
    process.stdin.close()
    assert process.wait(EXIT_TIMEOUT) == 0
    check_file_answers(answers.read_bytes())


def test_dev_null_in_and_out(processes: list[subprocess.Popen[bytes]]) -> None:
    """``/dev/null`` is a character device epoll refuses: read and written like a file."""
    with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as stdout:
        process = start_server(processes, stdin, stdout, subprocess.PIPE)
        _, stderr = process.communicate(timeout=EXIT_TIMEOUT)
    assert process.returncode == 0, stderr.decode(errors="replace")


def test_a_large_file_is_read_in_bounded_pieces(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """Many requests and a 3 MiB line (under the limit, spanning many read chunks) from a
    file, answered into a file; the line without a final newline is served too."""
    pings = [{"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"} for n in range(500)]
    big = {
        "jsonrpc": "2.0",
        "id": "big",
        "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {"pad": "x" * (3 * MiB)}},
    }
    last = {"jsonrpc": "2.0", "id": "last", "method": "ping"}
    lines = [json.dumps(m).encode() for m in (*pings, big, last)]
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUEST_LINES + b"\n".join(lines))  # no newline at the very end
    answers = tmp_path / "answers.jsonl"
    with open(requests, "rb") as stdin, open(answers, "wb") as stdout:
        process = start_server(processes, stdin, stdout)
        assert process.wait(EXIT_TIMEOUT) == 0
    got = check_answers(answers.read_bytes(), [1, 2, "call", 4, *(p["id"] for p in pings), "big", "last"])  # fmt: skip
    assert got["big"]["result"]["content"][0]["text"] == SIMPLE_TEXT


# -- the message size limit ----------------------------------------------------------------


def call_of_length(length: int, request: Any) -> bytes:
    """A ``tools/call`` line of exactly ``length`` bytes (newline excluded)."""
    message = {
        "jsonrpc": "2.0",
        "id": request,
        "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {"pad": ""}},
    }
    frame = json.dumps(message, separators=(",", ":")).encode()
    pad = length - len(frame)
    assert pad >= 0
    message["params"]["arguments"]["pad"] = "x" * pad
    frame = json.dumps(message, separators=(",", ":")).encode()
    assert len(frame) == length
    return frame


def check_too_large(answer: Any, request: Any, limit: int) -> None:
    assert answer["id"] == request, answer
    assert error_code(answer) == INVALID_REQUEST
    assert str(limit) in answer["error"]["message"], answer


@pytest.mark.parametrize("request_key", [17, "over-1"])
def test_a_line_just_over_the_limit_is_answered_and_skipped(
    spawn: Callable[..., LinePeer], request_key: Any
) -> None:
    limit = 1000
    peer = spawn("--max-message-bytes", str(limit))
    peer.initialize()
    peer.send_raw(call_of_length(limit, "at-limit"))  # the limit itself is accepted
    assert tool_text(peer.response("at-limit")) == SIMPLE_TEXT
    peer.send_raw(call_of_length(limit + 1, request_key))
    check_too_large(peer.response(request_key), request_key, limit)
    # the same connection goes on: the next line is read as usual
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert peer.request("ping")["result"] == {}
    assert peer.close() == 0


def vm_kib(pid: int, field: str) -> int:
    """``VmRSS``, ``VmHWM``, … of ``pid`` in KiB, from ``/proc/<pid>/status``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


#: What the server may grow by while skipping a 20 MiB line with the default 4 MiB limit.
#: Until a line passes the limit it may be a valid message, so up to 4 MiB of it is held
#: (as for any message that size); past it only the first 4 KiB are kept, and the reader
#: buffers at most about two 256 KiB pieces plus one pipe read. So: the limit plus 2 MiB
#: of slack, whatever the length of the line (measured: about 4.5 MiB at the peak).
HUGE = 20 * MiB
GROWTH_BOUND_KIB = (DEFAULT.max_message_bytes + 2 * MiB) // 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_huge_line_is_answered_and_skipped_in_bounded_memory(
    spawn: Callable[..., LinePeer], request: pytest.FixtureRequest
) -> None:
    peer = spawn()
    peer.initialize()
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT  # warmed up
    pid = peer.proc.pid
    rss_before, peak_before = vm_kib(pid, "VmRSS"), vm_kib(pid, "VmHWM")
    frame = call_of_length(HUGE, "huge")
    peer.send_raw(frame)  # returns once the server has read all of it
    del frame
    check_too_large(peer.response("huge", timeout=30), "huge", DEFAULT.max_message_bytes)
    rss_after, peak = vm_kib(pid, "VmRSS"), vm_kib(pid, "VmHWM")
    figures = (
        f"VmRSS {rss_before} KiB before, {rss_after} KiB after;"
        f" VmHWM {peak_before} KiB before, {peak} KiB after"
    )
    request.node.user_properties.append(("rss", figures))
    print(f"\n20 MiB line: {figures}")
    assert peak - rss_before < GROWTH_BOUND_KIB, figures
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert peer.close() == 0


def test_an_oversize_line_at_end_of_input_is_answered(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """From a file, the last line over the limit and without a newline."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(REQUEST_LINES + call_of_length(5000, "tail"))
    answers = tmp_path / "answers.jsonl"
    with open(requests, "rb") as stdin, open(answers, "wb") as stdout:
        process = start_server(processes, stdin, stdout, options=("--max-message-bytes", "2000"))
        assert process.wait(EXIT_TIMEOUT) == 0
    lines = answers.read_bytes().splitlines()
    check_file_answers(b"\n".join(lines[:-1]))
    check_too_large(json.loads(lines[-1]), "tail", 2000)


# -- garbage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("garbage", "code"),
    [
        pytest.param(b"\x00\xff garbage {", PARSE_ERROR, id="short"),
        pytest.param(os.urandom(5000).replace(b"\n", b" "), INVALID_REQUEST, id="oversize-binary"),
        pytest.param(b'{"id": ' + b"9" * 5000, INVALID_REQUEST, id="oversize-number"),
    ],
)  # fmt: skip
def test_garbage_then_a_valid_request(
    spawn: Callable[..., LinePeer], garbage: bytes, code: int
) -> None:
    peer = spawn("--max-message-bytes", "1000")
    peer.initialize()
    peer.send_raw(garbage)
    answer = peer.read()
    assert answer["id"] is None and error_code(answer) == code, answer
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert peer.backlog == []  # nothing else was said
    assert peer.close() == 0


# -- the id of an oversize message, read from its two ends ----------------------------------

#: Longer than the limit of these tests (1000 bytes) and than both ends kept (4 KiB each).
PAD = "x" * 10_000


@pytest.mark.parametrize(
    ("message", "answer_id"),
    [
        pytest.param({"jsonrpc": "2.0", "id": "first", "method": "tools/call", "params": {"pad": PAD}}, "first", id="id-first"),
        # the TypeScript SDK's order: the id after the params
        pytest.param({"method": "tools/call", "params": {"pad": PAD}, "jsonrpc": "2.0", "id": 12}, 12, id="id-last"),
        pytest.param({"params": {"pad": PAD}, "jsonrpc": "2.0", "method": "tools/call", "id": 9, "more": PAD}, None, id="id-out-of-sight"),
    ],
)  # fmt: skip
def test_an_oversize_request_is_answered_with_the_id_either_end_shows(
    spawn: Callable[..., LinePeer], message: dict[str, Any], answer_id: Any
) -> None:
    """Only the first and the last 4 KiB of a line over the limit are kept: an id in either
    is the answer's; one in the middle, out of sight of both, leaves it null."""
    peer = spawn("--max-message-bytes", "1000")
    peer.initialize()
    peer.send(message)
    answer = peer.read()
    assert answer["id"] == answer_id and error_code(answer) == INVALID_REQUEST, answer
    assert "over the limit of 1000 bytes" in answer["error"]["message"]
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert peer.backlog == []
    assert peer.close() == 0


def test_an_oversize_notification_is_not_answered(spawn: Callable[..., LinePeer]) -> None:
    """A method and no id at either end: a notification, and nobody waits for an answer."""
    peer = spawn("--max-message-bytes", "1000")
    peer.initialize()
    peer.notify("notifications/roots/list_changed", {"pad": PAD})
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT  # the next line's
    assert peer.backlog == []  # and nothing before it
    assert peer.close() == 0


# -- the id of an oversize message, read from its first bytes -------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"x":"', 42),
        (b'{ "id" : -7 , "method"', -7),
        (b'{"jsonrpc":"2.0","id":"a\\"b\\u00e9","params":{', 'a"b\u00e9'),
        (b'{"method":"tools/call","params":{"id":5,"name":"x"},"id":"outer","x":"', "outer"),
        (b'{"method":"id","id":8}', 8),
        (b'{"params":{"arguments":{"id":5,"pad":"xxxxx', None),  # only a nested id so far
        (b'{"id":1.5,"method":"ping"', None),
        (b'{"id":12', None),  # the number may go on
        (b'{"id":"unterminated', None),
        (b'{"id":"\\ud800","x":1}', None),  # a lone surrogate: not a string JSON allows
        (b'{"id":true}', None),
        (b'[{"id":1}]', None),  # a batch
        (b'"id"', None),
        (b'{"a":"\\"id\\":3"', None),  # inside a string
        (b"\xff\xfe\x00", None),
        (b"", None),
        (b'{"jsonrpc":"2.0","id":"\xc3","method":"ping"', None),  # invalid UTF-8 (fuzz)
        (b'{"id":' + b"9" * 5000 + b',"x":1', None),  # more digits than int() converts
    ],
)
def test_request_id_of_a_message_start(head: bytes, expected: Any) -> None:
    assert request_id(head) == expected


# -- the client side -------------------------------------------------------------------------

#: A "server" writing a line over the client's limit, then a normal one.
NOISY = "import sys; sys.stdout.write('x' * 5000 + '\\n' + '{\"ok\":1}\\n')"


def test_client_logs_and_skips_an_oversize_line_from_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> list[bytes | None]:
        process = await StdioProcess.spawn(
            sys.executable, ["-c", NOISY], limits=Limits(max_message_bytes=1000)
        )
        try:
            return [await process.receive(), await process.receive()]
        finally:
            await process.close()

    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.aio.stdio"):
        got = asyncio.run(asyncio.wait_for(scenario(), EXIT_TIMEOUT))
    assert got == [b'{"ok":1}\n', None]
    assert "5000 bytes" in caplog.text and "limit of 1000 bytes" in caplog.text
