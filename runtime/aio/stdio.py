"""stdio transports: newline-delimited JSON-RPC on a child's or this process's stdin/stdout.

Pipes, sockets and ttys go through asyncio's pipe transports (no thread per read or write).
What the event loop cannot wait on (regular files, ``/dev/null``: epoll refuses them) is
read by a small feeding task and written synchronously, so ``server < in.jsonl > out.jsonl``
works too. The client spawns the server and shuts it down by closing its stdin, then
SIGTERM, then SIGKILL.

Lines are read in pieces of at most :data:`PIECE` bytes, so a line longer than
``Limits.max_message_bytes`` is skipped without ever being held whole: the server answers
it with -32600, carrying the request's id when its first or last bytes show it
(``line_ends``; a notification gets nothing), a client logs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import selectors
import stat
import sys
from collections.abc import Awaitable, Mapping, Sequence

from ..core.errors import INVALID_REQUEST
from ..core.jsonrpc import encode_error
from ..core.limits import CLIENT, DEFAULT, Limits
from .line_ends import EDGE, identify

log = logging.getLogger("mcpgen.runtime.aio.stdio")

#: The StreamReader's own limit: the longest piece of a line read at once. The reader
#: buffers at most about twice this before it stops reading (backpressure), whatever the
#: length of the line; longer lines are assembled from pieces up to the message limit.
PIECE = 256 * 1024
#: How long closing the server side waits for the peer to take what is left to write.
FLUSH_TIMEOUT = 5.0


class _LineReader:
    """Lines from a StreamReader, each at most ``max_bytes`` long (newline excluded)."""

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        self.reader = reader
        self.max_bytes = max_bytes

    async def receive(self) -> bytes | None:
        """The next non-blank line, or ``None`` at end of input."""
        while True:
            try:
                line: bytes | None = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial
            except asyncio.LimitOverrunError as exc:
                line = await self._long_line(await self.reader.readexactly(exc.consumed))
            if line and not line.isspace():
                return line
            if self.reader.at_eof():
                return None

    async def _piece(self) -> tuple[bytes, bool]:
        """The next piece of the current line, and whether it ends the line (with its
        newline, or at end of input)."""
        try:
            return await self.reader.readuntil(b"\n"), True
        except asyncio.LimitOverrunError as exc:
            return await self.reader.readexactly(exc.consumed), False
        except asyncio.IncompleteReadError as exc:
            return exc.partial, True

    async def _long_line(self, first: bytes) -> bytes | None:
        """The rest of a line longer than one piece: the whole line, or ``None`` when it
        is over the limit (then it has been consumed and :meth:`oversized` called)."""
        parts = [first]
        size = len(first)
        head = tail = b""
        while True:
            piece, ended = await self._piece()
            size += len(piece)
            length = size - 1 if piece.endswith(b"\n") else size
            if parts:
                parts.append(piece)
                if length > self.max_bytes:  # from here on only its two ends are kept
                    head, tail = _ends(parts)
                    parts.clear()
            else:
                tail = (tail + piece)[-EDGE - 1 :]
            if ended:
                break
        if parts:
            return b"".join(parts)
        await self.oversized(head, tail.removesuffix(b"\n"), length)
        return None

    async def oversized(self, head: bytes, tail: bytes, length: int) -> None:
        """A line of ``length`` bytes (starting with ``head``, ending with ``tail``) was
        over the limit."""
        log.warning(
            "skipped a message of %d bytes: over the limit of %d bytes", length, self.max_bytes
        )


def _ends(parts: list[bytes]) -> tuple[bytes, bytes]:
    """The first and the last :data:`~line_ends.EDGE` bytes of the concatenation of
    ``parts`` (one more at the end: the newline, if it is there)."""
    head = tail = b""
    for part in parts:
        head += part[: EDGE - len(head)]
        if len(head) >= EDGE:
            break
    for part in reversed(parts):
        tail = part[-(EDGE + 1 - len(tail)) :] + tail
        if len(tail) > EDGE:
            break
    return head, tail


def _pollable(fd: int, events: int) -> bool:
    """Whether the event loop can wait on ``fd``: pipes, sockets, ttys; not regular files
    or ``/dev/null`` (epoll refuses them with EPERM)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, events)
        except OSError:
            return False
    return True


class _FileFeeder(asyncio.ReadTransport):
    """Feeds a file the event loop cannot wait on into a StreamReader, in chunks.

    Plain ``os.read`` in the loop's thread rather than ``loop.run_in_executor``: such a
    file never blocks for long (a regular file is read from the page cache or the disk,
    ``/dev/null`` answers at once), a 64 KiB read costs less than a hop to a worker thread
    and back, and no thread is started at all. The task yields after every chunk, and
    waits while the reader holds more than twice its limit (it calls
    :meth:`pause_reading` as it does on a pipe transport), so memory stays bounded
    however large the file.
    """

    CHUNK = 64 * 1024

    def __init__(self, fd: int, reader: asyncio.StreamReader) -> None:
        super().__init__()
        self._fd = fd
        self._reader = reader
        self._resumed = asyncio.Event()
        self._resumed.set()
        reader.set_transport(self)
        self._task = asyncio.get_running_loop().create_task(self._feed())

    async def _feed(self) -> None:
        try:
            while chunk := os.read(self._fd, self.CHUNK):
                self._reader.feed_data(chunk)
                await asyncio.sleep(0)
                await self._resumed.wait()
        except OSError as exc:
            log.error("reading stdin failed: %s", exc)
        finally:
            self._reader.feed_eof()

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_reading(self) -> bool:
        return self._resumed.is_set() and not self._task.done()

    def close(self) -> None:
        self._task.cancel()

    def is_closing(self) -> bool:
        return self._task.done()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class StdioServerTransport(_LineReader):
    """This process's stdin (requests in) and stdout (responses out).

    ``writer`` is None when stdout is written synchronously (see the module docstring);
    an oversize request line is skipped and answered here, with -32600.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter | None,
        limits: Limits = DEFAULT,
        feeder: _FileFeeder | None = None,
    ) -> None:
        super().__init__(reader, limits.max_message_bytes)
        self.writer = writer
        #: What the writer writes to (its ``transport`` property, read once).
        self.pipe = writer.transport if writer is not None else None
        self.out = sys.stdout.fileno()
        self.feeder = feeder

    @classmethod
    async def open(cls, limits: Limits = DEFAULT) -> StdioServerTransport:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=min(PIECE, limits.max_message_bytes))
        stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
        feeder = None
        if _pollable(stdin, selectors.EVENT_READ):
            read_pipe = os.fdopen(os.dup(stdin), "rb", buffering=0)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), read_pipe)
        else:
            feeder = _FileFeeder(stdin, reader)
        writer = None
        if _pollable(stdout, selectors.EVENT_WRITE):
            write_pipe = os.fdopen(os.dup(stdout), "wb", buffering=0)
            transport, protocol = await loop.connect_write_pipe(
                lambda: asyncio.streams.FlowControlMixin(loop), write_pipe
            )
            writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        return cls(reader, writer, limits, feeder)

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        rest = self.write_now(data)
        if rest is not None:
            await rest

    def write_now(self, data: bytes) -> Awaitable[None] | None:
        """Write one frame: None once the pipe (or file) took it all, else the writer's
        drain to await (``transport.WritesNow``)."""
        writer, pipe = self.writer, self.pipe
        if writer is None or pipe is None:
            _write_all(self.out, data + b"\n")  # unbuffered: in the file once this returns
            return None
        pipe.write(data + b"\n")
        return writer.drain() if pipe.get_write_buffer_size() else None

    async def oversized(self, head: bytes, tail: bytes, length: int) -> None:
        await super().oversized(head, tail, length)
        request_id, notification = identify(head, tail)
        if notification:
            return  # nobody waits for an answer
        message = (
            f"Invalid request: message of {length} bytes is over the limit of"
            f" {self.max_bytes} bytes"
        )
        with contextlib.suppress(ConnectionError, OSError):
            await self.send(encode_error(request_id, INVALID_REQUEST, message))

    async def close(self) -> None:
        """Stop reading; hand what is left to write to the peer (bounded in time)."""
        if self.feeder is not None:
            self.feeder.close()
        if self.writer is None:
            return
        with contextlib.suppress(ConnectionError, OSError, RuntimeError, asyncio.TimeoutError):
            # drain() returns below the high-water mark; at 0 it waits for an empty buffer
            self.writer.transport.set_write_buffer_limits(high=0)
            await asyncio.wait_for(self.writer.drain(), FLUSH_TIMEOUT)
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            self.writer.close()


class StdioProcess(_LineReader):
    """A spawned server process, talked to over its stdin/stdout. An oversize line from
    the server is logged and skipped."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        terminate_after: float,
        limits: Limits = CLIENT,
    ) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(process.stdout, limits.max_message_bytes)
        self.process = process
        self.stdin = process.stdin
        self.terminate_after = terminate_after
        #: Why nothing more comes, once the server's output ended (what its waiting
        #: requests fail with).
        self.ended: str | None = None

    async def receive(self) -> bytes | None:
        data = await super().receive()
        if data is None and self.ended is None:
            try:  # the output ends as the process exits: say how it did, if it has
                code = await asyncio.wait_for(self.process.wait(), 0.5)
            except asyncio.TimeoutError:
                self.ended = "the server process closed its output"
            else:
                how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                self.ended = f"the server process {how}"
        return data

    @classmethod
    async def spawn(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | None = None,
        terminate_after: float = 2.0,
        limits: Limits = CLIENT,
    ) -> StdioProcess:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=min(PIECE, limits.max_message_bytes),
        )
        return cls(process, terminate_after, limits)

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        self.stdin.write(data + b"\n")
        await self.stdin.drain()

    async def close(self) -> None:
        """Close stdin and wait; then SIGTERM; then SIGKILL."""
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            self.stdin.close()
        for signal_step in (None, "terminate", "kill"):
            if signal_step == "terminate":
                with contextlib.suppress(ProcessLookupError):
                    self.process.terminate()
            elif signal_step == "kill":
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
            try:
                await asyncio.wait_for(self.process.wait(), self.terminate_after)
                return
            except asyncio.TimeoutError:
                log.debug("server did not exit after %s", signal_step or "closing stdin")
