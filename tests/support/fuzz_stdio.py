"""The stdio driver of the fuzz suite: ``python -m examples.everything --transport stdio``.

One server process per era at a time: a legacy one (handshake done, at each legacy version
in turn), a modern one (no handshake) and one for mutated ``initialize`` requests (replaced
once an ``initialize`` succeeded, so each meets a fresh process). Every case is written with
a sentinel request after it (``ping``; ``server/discover`` for the modern process) and read
until the sentinel's answer: the server is alive, the case's answers precede it, and what
the server logged on stderr by then belongs to the case. No threads: one ``select`` loop
over the child's three pipes, every wait bounded by :data:`fuzzing.DEADLINE`.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from support.fuzz_oracle import INVALID_CODES, PARSE_ERROR, Frame, id_key
from support.fuzz_report import Tally, traceback_signature
from support.fuzzing import (
    DEADLINE,
    LEGACY,
    STATE_KEY,
    Case,
    answer_problem,
    frame_of,
    initialize,
    modern_meta,
    notification,
    request,
)

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ("-m", "examples.everything", "--transport", "stdio")
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


class Proc:
    """A server child driven through non-blocking pipes."""

    def __init__(self) -> None:
        env = dict(os.environ, MCPGEN_STATE_KEY=STATE_KEY.hex())
        self.proc = subprocess.Popen(
            [sys.executable, *COMMAND],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.fds = {"in": self.proc.stdin.fileno(), "out": self.proc.stdout.fileno()}
        self.fds["err"] = self.proc.stderr.fileno()
        for fd in self.fds.values():
            os.set_blocking(fd, False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fds["out"], selectors.EVENT_READ, "out")
        self.sel.register(self.fds["err"], selectors.EVENT_READ, "err")
        self.pending = bytearray()
        self.writing = False
        self.out = bytearray()
        self.lines: list[bytes] = []
        self.err = bytearray()
        self.err_seen = 0  # how much of ``err`` earlier cases took
        self.eof = False
        self.broken = False
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        self.pending += data
        self._flush()

    def _flush(self) -> None:
        while self.pending and not self.broken:
            try:
                sent = os.write(self.fds["in"], self.pending[: 1 << 20])
            except BlockingIOError:
                break
            except OSError:  # BrokenPipeError: the child is gone
                self.broken = True
                self.pending.clear()
                break
            del self.pending[:sent]
        wanted = bool(self.pending) and not self.broken
        if wanted != self.writing:
            if wanted:
                self.sel.register(self.fds["in"], selectors.EVENT_WRITE, "in")
            else:
                self.sel.unregister(self.fds["in"])
            self.writing = wanted

    def _pump(self, timeout: float) -> None:
        for key, _ in self.sel.select(max(timeout, 0.0)):
            if key.data == "in":
                self._flush()
                continue
            try:
                chunk = os.read(key.fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                self.sel.unregister(key.fd)
                self.eof = self.eof or key.data == "out"
            elif key.data == "out":
                self.out += chunk
                if b"\n" not in chunk:  # a long line: split once it ends
                    continue
                *done, rest = self.out.split(b"\n")
                self.lines += [bytes(line) for line in done]
                self.out = bytearray(rest)
            else:
                self.err += chunk

    def line(self, deadline: float) -> bytes | None:
        """The next stdout line; None once ``deadline`` passed; EOFError at end of output."""
        while not self.lines:
            if self.eof:
                raise EOFError
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # one last look: it may have come while we were busy
                self._pump(0)
                if not self.lines:
                    return None
                break
            self._pump(remaining)
        return self.lines.pop(0)

    def new_stderr(self) -> str:
        """What the child wrote to stderr since the last call (read without waiting)."""
        if not self.closed:
            self._pump(0)
        text = self.err[self.err_seen :].decode("utf-8", "replace")
        self.err_seen = len(self.err)
        if len(self.err) > 1 << 20:  # keep a tail for crash reports
            del self.err[: len(self.err) - (1 << 16)]
            self.err_seen = len(self.err)
        return text

    def stderr_tail(self) -> str:
        deadline = time.monotonic() + 2
        while (
            "err" in [k.data for k in self.sel.get_map().values()] and time.monotonic() < deadline
        ):
            self._pump(deadline - time.monotonic())
        return self.err[-4000:].decode("utf-8", "replace")

    def close(self) -> int | None:
        """End of input, then up to :data:`DEADLINE` to exit; killed after that."""
        if self.writing:
            self.sel.unregister(self.fds["in"])
            self.writing = False
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + DEADLINE
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.05)  # keep reading: a child blocked on a full pipe cannot exit
        code = self.proc.poll()
        if code is None:
            self.proc.kill()
            self.proc.wait(DEADLINE)
        deadline = time.monotonic() + 1
        while self.sel.get_map() and time.monotonic() < deadline:
            self._pump(0.05)  # what it wrote last (a traceback logged at exit)
        self.closed = True
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            stream.close()
        self.sel.close()
        return code


def _frame(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


class Runner:
    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.procs: dict[str, Proc] = {}
        self.last: dict[str, Case] = {}
        self.spawned = 0

    def proc(self, era: str) -> Proc:
        proc = self.procs.get(era)
        if proc is not None:
            return proc
        proc = self.procs[era] = self.new_process()
        self.spawned += 1
        if era == "legacy":
            version = LEGACY[self.spawned % len(LEGACY)]
            hello = initialize(version, {"roots": {"listChanged": True}})
            hello["id"] = "hs"
            proc.write(_frame(hello) + b"\n")
            deadline = time.monotonic() + DEADLINE
            answer = proc.line(deadline) if not proc.eof else None
            if answer is None or b'"result"' not in answer:
                raise RuntimeError(f"no initialize result at {version}: {answer!r}")
            proc.write(_frame(notification("notifications/initialized")) + b"\n")
        return proc

    def new_process(self) -> Proc:
        """A server for an era's cases (here a process; ``fuzz_sockets``: a connection)."""
        return Proc()

    def retire(self, era: str, kill: bool = False, crashed: bool = False) -> int | None:
        """Close the era's process; tracebacks it logged since its last case are that
        case's (a task that failed is often only reported when it is collected)."""
        proc = self.procs.pop(era)
        if kill:
            proc.proc.kill()
        code = proc.close()
        last = self.last.get(era)
        if not crashed and last is not None:
            for text in _tracebacks(proc.new_stderr()):
                self.tally.fail("traceback", traceback_signature(text), last, _last_lines(text))
        return code

    def sentinel(self, case: Case) -> tuple[str, bytes]:
        ident = f"live-{case.index}"
        message = (
            request("server/discover", {"_meta": modern_meta()})
            if case.era == "modern"
            else request("ping")
        )
        message["id"] = ident
        return ident, _frame(message)

    def run_case(self, case: Case) -> None:
        proc = self.proc(case.era)
        self.last[case.era] = case
        # what the server reads: one message per line that is not blank
        lines = [line for frame in case.frames for line in frame.split(b"\n")]
        owed = Owed([frame_of(line) for line in lines if line and not line.isspace()])
        ident, sentinel = self.sentinel(case)
        proc.write(b"\n".join(case.frames) + b"\n" + sentinel + b"\n")
        deadline = time.monotonic() + DEADLINE
        alive = dead = succeeded = False
        while not (alive and owed.settled()):
            try:
                line = proc.line(deadline)
            except EOFError:
                dead = True
                break
            if line is None:
                break
            value, problem = answer_problem(line)
            if problem:
                self.tally.fail("bad answer", f"stdout line {problem}", case, repr(line[:300]))
                continue
            owed.arrays += isinstance(value, list)
            for message in value if isinstance(value, list) else [value]:
                answers = message.get("id")
                if "method" in message:
                    self.from_server(proc, message, owed.waiting)
                elif answers == ident:
                    alive = True
                elif answers is None and isinstance(value, list):
                    owed.in_batches.append(_code(message))
                    self.tally.outcomes[_outcome(message) + " (null id, in a batch)"] += 1
                elif answers is None:
                    owed.nulls.append(_code(message))
                    self.tally.outcomes[_outcome(message) + " (null id)"] += 1
                elif owed.answer(id_key(answers), _code(message)):
                    succeeded = succeeded or "result" in message
                    self.tally.outcomes[_outcome(message)] += 1
        self.judge(case, proc, dead, alive, owed)
        if case.era == "init" and succeeded and case.era in self.procs:
            self.retire("init")  # the next initialize meets a fresh process

    def from_server(self, proc: Proc, message: dict[str, Any], expected: Counter[str]) -> None:
        if "id" in message:  # a request to the client: refuse it, as a bare client would
            answer = {"jsonrpc": "2.0", "id": message["id"]}
            answer["error"] = {"code": -32601, "message": "the fuzz client answers nothing"}
            proc.write(_frame(answer) + b"\n")
            return
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and SUBSCRIPTION in meta:  # a listen's acknowledgement
            key = id_key(meta[SUBSCRIPTION])
            if expected[key] > 0:
                expected[key] -= 1

    def judge(self, case: Case, proc: Proc, dead: bool, alive: bool, owed: Owed) -> None:
        if dead or proc.broken:
            tail = proc.stderr_tail()
            code = self.retire(case.era, crashed=True)
            where = traceback_signature(tail) if "Traceback" in tail else f"exit status {code}"
            self.tally.fail("crash", where, case, f"exit {code}; stderr:\n" + _last_lines(tail))
            return
        for text in _tracebacks(proc.new_stderr()):
            self.tally.fail("traceback", traceback_signature(text), case, _last_lines(text))
        if not alive:
            self.tally.fail(
                "hang", "stopped answering: the ping after the case unanswered in 5 s", case, ""
            )
            self.retire(case.era, kill=True)
            return
        for kind, signature, detail in owed.failures(len(case.frames) > 1):
            self.tally.fail(kind, signature, case, detail)


class Owed:
    """What the lines of one case must get (``fuzz_oracle``) and what they got: answers
    carrying their ids, and the errors with a null id, in the order they came."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames
        requests = {f.id: f for f in frames if f.kind == "request" and f.id is not None}
        #: Readable request ids still without an answer carrying them.
        self.waiting = Counter(f.id for f in frames if f.kind == "request" and f.id is not None)
        self.by_id = requests
        #: The codes of the answers with a null id (None: not an error), and of those in
        #: batch answers (they answer nothing outside their batch).
        self.nulls: list[int | None] = []
        self.in_batches: list[int | None] = []
        self.wrong: list[str] = []
        #: Null-id errors the lines are owed: what is not JSON, a request whose id is not
        #: readable (a line over the size limit is answered as that limit says).
        self.owed = sum(
            not f.oversize and (f.kind == "not json" or (f.kind == "request" and f.id is None))
            for f in frames
        )
        #: Batches that get an answer (some element is no notification): an error, or an
        #: array once all of the batch is answered (at times after the ping that follows
        #: it); and the arrays seen.
        self.batches = sum(f.kind == "batch" and f.valid for f in frames)
        self.arrays = 0

    def answer(self, key: str, code: int | None) -> bool:
        """An answer carrying the id ``key`` (``code``: its error's); False: none is owed."""
        if self.waiting[key] <= 0:
            return False
        self.waiting[key] -= 1
        frame = self.by_id[key]
        allowed = frame.codes()
        if code is not None and (code == PARSE_ERROR if allowed is None else code not in allowed):
            what = "a request" if frame.valid else "an invalid request"
            self.wrong.append(f"{what} answered {code}")
        return True

    def settled(self) -> bool:
        """Every readable request answered, or as many more null-id errors came as are still
        waiting (the server lost those ids: no use waiting out the deadline)."""
        may = sum(f.oversize or f.kind == "other" for f in self.frames)
        spare = max(0, len(self.nulls) - self.owed - may)
        return sum(self.waiting.values()) + max(0, self.batches - self.arrays) <= spare

    def failures(self, twice: bool) -> list[tuple[str, str, str]]:
        """``(kind, signature, detail)`` of each missing answer and wrong code."""
        out = [("wrong code", why, "") for why in self.wrong]
        frames = [f for f in self.frames if not f.oversize]
        if PARSE_ERROR in self.in_batches:
            out.append(("wrong code", "batch element answered -32700", f"{self.in_batches}"))
        parse_errors = self.nulls.count(PARSE_ERROR)
        not_json = sum(f.kind == "not json" for f in frames)
        if parse_errors > not_json:
            out.append(("wrong code", "JSON answered -32700", f"null-id codes {self.nulls}"))
        elif parse_errors < not_json:
            out.append(("wrong code", "not JSON and no -32700", f"null-id codes {self.nulls}"))
        strange = sorted(
            {
                c
                for c in self.nulls + self.in_batches
                if c is not None and c not in INVALID_CODES | {PARSE_ERROR}
            }
        )
        if strange:
            out.append(("wrong code", f"null-id answer {strange[0]}", f"codes {self.nulls}"))
        spare = len(self.nulls) - self.owed
        for key, count in self.waiting.items():
            for _ in range(count):
                frame = self.by_id[key]
                if frame.oversize and spare > 0:  # its id may lie past what the server kept
                    spare -= 1
                    continue
                how = (
                    "answered with a null id" if spare > 0 else f"not answered in {DEADLINE:.0f} s"
                )
                spare -= 1
                again = " (sent twice)" if twice else ""
                detail = f"{frame.method[:40]} id {key[:40]}; null-id codes {self.nulls}"
                out.append(("missing answer", f"request with a readable id{again} {how}", detail))
        may = sum(f.oversize or f.kind == "other" for f in self.frames)
        if spare > may and not any(f.kind == "batch" for f in self.frames):
            notified = any(f.kind == "notification" for f in self.frames)
            what = "a notification answered" if notified else "an answer nobody asked for"
            out.append(("wrong code", what, f"null-id codes {self.nulls}"))
        return out


def _outcome(message: dict[str, Any]) -> str:
    error = message.get("error")
    return f"error {error.get('code')}" if isinstance(error, dict) else "result"


def _code(message: dict[str, Any]) -> int | None:
    """The code of an error answer (None for a result)."""
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None


def _tracebacks(text: str) -> list[str]:
    marker = "Traceback (most recent call last)"
    if marker not in text:
        return []
    parts = text.split(marker)[1:]
    return [marker + part for part in parts]


def _last_lines(text: str, count: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


def run(cases: Iterable[Case], budget: float | None = None) -> Tally:
    tally = Tally("stdio")
    runner = Runner(tally)
    started = time.monotonic()
    try:
        for case in cases:
            if budget is not None and time.monotonic() - started > budget:
                tally.notes.append(f"stopped by the time budget ({budget:.0f} s)")
                break
            runner.run_case(case)
            tally.cases += 1
    finally:
        for era in list(runner.procs):
            code = runner.retire(era)
            if code is None:
                last = Case(-1, era, "end of input", [], ["stdin closed after the last case"])
                tally.fail("hang", f"no exit within {DEADLINE:.0f} s of end of input", last, "")
            elif code != 0:
                tally.notes.append(f"the {era} server exited with {code} at end of input")
    tally.notes.append(f"{runner.spawned} server processes")
    return tally.finish()
