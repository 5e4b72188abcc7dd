"""The server most tests of Streamable HTTP over real sockets talk to: ``served``, the
everything server's ASGI app run in process by each ASGI server of ``asgi_servers.SERVERS``
(uvicorn, hypercorn) in a background thread, on a socket bound here (so ``max_body`` can be
small and one test-only tool can report when it is cancelled), one per module and server:
every test using it runs under each; ``endpoint``, its client. A module with a server of
its own defines its own ``served``."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from mcpgen.runtime.http.endpoint import McpHttpApp

from support.checkout import ROOT
from support.http_endpoint import Endpoint
from support.asgi_servers import SERVERS
from support.http_servers import BODY_TIMEOUT, SMALL_BODY, Probe, Served

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402


@pytest.fixture(scope="module", params=sorted(SERVERS))
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The everything server as ``build_app`` makes it, plus ``Probe``'s tool, served by
    each ASGI server in turn."""
    app = build_app()
    probe = Probe(app)
    limits = app.server.limits.replace(body_timeout=BODY_TIMEOUT)
    http_app = McpHttpApp(app.server, limits=limits, max_body=SMALL_BODY)
    runner = SERVERS[request.param](http_app)
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
