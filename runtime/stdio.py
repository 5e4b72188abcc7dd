"""stdio transports: newline-delimited JSON-RPC on a child's or this process's pipes.

Both sides use asyncio pipes directly (no thread per read or write). The client spawns the
server and shuts it down by closing its stdin, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence

log = logging.getLogger("mcpgen.runtime.stdio")

#: Longest accepted line; longer ones are skipped and answered with a parse error.
LINE_LIMIT = 64 * 1024 * 1024
_OVERSIZED = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: message too large"}}'


class _LineReader:
    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def receive(self) -> bytes | None:
        """The next non-empty line, or ``None`` at end of input."""
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial
                if not line.strip():
                    return None
            except asyncio.LimitOverrunError as exc:
                await self._skip_line(exc.consumed)
                return _OVERSIZED
            if line.strip():
                return line

    async def _skip_line(self, consumed: int) -> None:
        await self.reader.readexactly(consumed)
        while True:
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self.reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


class StdioServerTransport(_LineReader):
    """This process's stdin (requests in) and stdout (responses out)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader)
        self.writer = writer

    @classmethod
    async def open(cls) -> StdioServerTransport:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), read_pipe)
        write_pipe = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop), write_pipe
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        return cls(reader, writer)

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        self.writer.write(data + b"\n")
        await self.writer.drain()

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            self.writer.close()


class StdioProcess(_LineReader):
    """A spawned server process, talked to over its stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process, terminate_after: float) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(process.stdout)
        self.process = process
        self.stdin = process.stdin
        self.terminate_after = terminate_after

    @classmethod
    async def spawn(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | None = None,
        terminate_after: float = 2.0,
    ) -> StdioProcess:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=LINE_LIMIT,
        )
        return cls(process, terminate_after)

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
