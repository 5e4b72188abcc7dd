"""A misbehaving test peer: it answers the handshake, then ignores the end of its input
(and, with ``--ignore-sigterm``, SIGTERM as well).

Run from the repository root::

    python -m tests.peers.stubborn [--ignore-sigterm] [--linger SECONDS]

It writes ``eof`` to stderr when its stdin closes and ``sigterm ignored`` for every SIGTERM
it shrugs off, then lingers; it exits by itself after ``--linger`` seconds so that a failing
test cannot leave it behind for long.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from types import FrameType

from mcpgen.generated.v2025_11_25 import server as s
from mcpgen.runtime import Server, run


class Nothing(s.ServerHandlers):
    """Serves no request of its own (ping and the handshake still work)."""


def say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def ignore_sigterm(signum: int, frame: FrameType | None) -> None:
    say("sigterm ignored")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.peers.stubborn")
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--linger", type=float, default=20.0)
    args = parser.parse_args(argv)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, ignore_sigterm)
    say(f"stubborn started pid={os.getpid()}")
    run(Server(Nothing(), name="stubborn"))
    say("eof")
    deadline = time.monotonic() + args.linger
    while time.monotonic() < deadline:  # ignore the end of input
        time.sleep(0.05)
    say("lingered out")


if __name__ == "__main__":
    main()
