"""What the echo servers share: options read from ``sys.argv`` by hand (argparse would add to
every cold start), the uvicorn settings, and ``--profile OUT``: the first SIGUSR1 starts
cProfile, the second writes ``OUT``, then an empty ``OUT.done``."""

from __future__ import annotations

import sys
from typing import Any


def option(name: str, default: str = "") -> str:
    argv = sys.argv
    return argv[argv.index(name) + 1] if name in argv[:-1] else default


def flag(name: str) -> bool:
    return name in sys.argv


def http(app: Any, **extra: Any) -> None:
    import uvicorn

    settings: dict[str, Any] = {"host": "127.0.0.1", "port": int(option("--port", "8000"))}
    settings |= {"loop": option("--loop", "auto"), "http": option("--http", "auto")}
    uvicorn.run(app, log_level="warning", access_log=False, **settings, **extra)


def profile_on_signal() -> None:
    out = option("--profile")
    if not out:
        return
    import cProfile
    import signal

    profiler = cProfile.Profile()
    running = [False]

    def toggle(signum: int, frame: object) -> None:
        running[0] = not running[0]
        if running[0]:
            profiler.enable()
            return
        profiler.disable()
        profiler.dump_stats(out)
        open(out + ".done", "w").close()

    signal.signal(signal.SIGUSR1, toggle)
