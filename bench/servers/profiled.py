"""``ours.py`` under cProfile, steady state only (``bench.stdio_calls --profile``).

``python -I bench/servers/profiled.py OUT.prof [ours.py options]``: builds the same server
as ``ours.py`` (imports and construction are not profiled), turns the profiler on when it
receives SIGUSR1 (the driver sends it after the warm-up calls) and writes the profile to
``OUT.prof`` once stdin closes.
"""

from __future__ import annotations

import cProfile
import importlib.util
import signal
import sys
from pathlib import Path
from types import FrameType

spec = importlib.util.spec_from_file_location("ours", Path(__file__).with_name("ours.py"))
assert spec is not None and spec.loader is not None
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)

profiler = cProfile.Profile()


def start(signum: int, frame: FrameType | None) -> None:
    profiler.enable()


if __name__ == "__main__":
    server = ours.build(sys.argv[2:])
    signal.signal(signal.SIGUSR1, start)
    try:
        server.run_stdio()
    finally:
        profiler.disable()
        profiler.dump_stats(sys.argv[1])
