"""``http_ours.py`` under cProfile, steady state only (``bench.http_calls --profile``).

``python -I bench/servers/http_profiled.py --out OUT.prof --port PORT [http_ours.py
options]``: builds the same server and app as ``http_ours.py`` (imports and construction are
not profiled) and serves it with the same uvicorn options. The first SIGUSR1 turns the
profiler on (the driver sends it after a warm-up); the second turns it off, writes
``OUT.prof`` and then an empty ``OUT.done`` marker. (uvicorn re-raises SIGTERM after its
shutdown, so code after ``uvicorn.run`` would never run: the dump happens on the signal.)
"""

from __future__ import annotations

import cProfile
import importlib.util
import signal
import sys
from pathlib import Path
from types import FrameType

spec = importlib.util.spec_from_file_location("ours", Path(__file__).with_name("http_ours.py"))
assert spec is not None and spec.loader is not None
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)

profiler = cProfile.Profile()
enabled = False


def main(argv: list[str]) -> None:
    out = Path(argv[argv.index("--out") + 1])
    rest = argv[: argv.index("--out")] + argv[argv.index("--out") + 2 :]

    def toggle(signum: int, frame: FrameType | None) -> None:
        global enabled
        if not enabled:
            enabled = True
            profiler.enable()
            return
        profiler.disable()
        profiler.dump_stats(str(out))
        out.with_suffix(".done").touch()

    signal.signal(signal.SIGUSR1, toggle)
    ours.serve(ours.build().http_app(), ours.options(rest))


if __name__ == "__main__":
    main(sys.argv[1:])
