"""What the tests share and no test proves by itself: drivers (in-memory, ASGI in process,
raw sockets, JSON lines over pipes), servers run in threads or as processes and stopped
whatever happens, the wire oracle, the fuzz engine, test-only authorization servers, and
the checkout's root, mirror and pinned versions (:mod:`support.checkout`).

``tests/`` is on ``sys.path`` (pytest's ``pythonpath``), so a test imports
``from support.processes import stop`` and a peer as ``peers.extended_app``."""
