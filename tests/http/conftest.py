"""The server most tests of Streamable HTTP over real sockets talk to: ``served``, the
everything server's ASGI app run in process by uvicorn in a background thread, on a socket
bound here (so ``max_body`` can be small and one test-only tool can report when it is
cancelled), one per module; ``endpoint``, its client. A module with a server of its own
defines its own ``served``."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from mcpgen.runtime.http.endpoint import McpHttpApp

from support.checkout import ROOT
from support.http_endpoint import Endpoint
from support.http_servers import SMALL_BODY, Probe, Served, ThreadedUvicorn

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """The everything server as ``build_app`` makes it, plus ``Probe``'s tool."""
    app = build_app()
    probe = Probe(app)
    http_app = McpHttpApp(app.server, max_body=SMALL_BODY)
    runner = ThreadedUvicorn(http_app)
    endpoint = Endpoint(runner.port)
    try:
        runner.start()
        yield Served(endpoint, probe, http_app)
    finally:
        endpoint.close()
        runner.stop()


@pytest.fixture
def endpoint(served: Served) -> Endpoint:
    return served.endpoint
