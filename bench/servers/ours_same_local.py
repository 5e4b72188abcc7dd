"""Diagnostic variant of ``ours.py`` (``bench.stdio_calls --profile``): the same server, with
``Server.local`` replaced by the very ``VersionInfo`` object its ``Versions`` table holds for
2025-11-25.

The runtime skips re-shaping params and results only when the negotiated version ``is``
``Server.local``; ``Server`` builds that object and ``Versions.around`` builds another one
for the same binding, so the identity never holds and every request and result goes
through ``to_builtins`` + ``convert``. Comparing this variant with ``ours.py`` measures what
that costs. ``python -I bench/servers/ours_same_local.py [ours.py options]``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("ours", Path(__file__).with_name("ours.py"))
assert spec is not None and spec.loader is not None
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)

if __name__ == "__main__":
    server = ours.build(sys.argv[1:])
    server.local = server.versions[server.local.version]
    server.run_stdio()
