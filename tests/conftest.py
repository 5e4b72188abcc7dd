"""Shared fixtures: the pinned schemas (fetched from the mirror), the generated package and
a real redis-server. What tests import rather than receive as fixtures is in ``support/``;
which tests are slow is said where they are (``interop/conftest.py``, ``pytestmark``)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Iterable, Iterator
from importlib.metadata import version as installed_version
from pathlib import Path
from types import ModuleType
from typing import cast

import pytest

from mcpgen.generator.fetch import SOURCE_ENV, fetch, make_source
from mcpgen.generator.pins import Pins, schema_dir
from mcpgen.generator.pipeline import Inputs, generate

from support.checkout import (
    MIRROR,
    PINS,
    PYRIGHT_TEST,
    REPORT,
    ROOT,
    VERSIONS,
    pyright_of_generated,
    stop_pyright,
)

_pyright_wanted = False


#: Set in the workers of ``pytest -n`` (pytest-xdist; ``make unit`` runs that way).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
#: Where a worker hands its figures to the controller, which prints them.
WORKER_REPORT = "mcpgen_report"


def pytest_collection_finish(session: pytest.Session) -> None:
    global _pyright_wanted
    # A worker cannot know whether it will run pyright's test: it runs it when it does.
    wanted = any(item.name == PYRIGHT_TEST for item in session.items)
    _pyright_wanted = wanted and XDIST_WORKER is None


def pytest_sessionfinish(session: pytest.Session) -> None:
    stop_pyright()  # its test was not reached
    handed: dict[str, object] | None = getattr(session.config, "workeroutput", None)
    if handed is not None:
        handed[WORKER_REPORT] = dict(REPORT)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """A worker of ``pytest -n`` ended: its figures join the controller's report."""
    handed: dict[str, object] = getattr(node, "workeroutput", {})
    REPORT.update(cast("dict[str, str]", handed.get(WORKER_REPORT, {})))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, line in sorted(REPORT.items()) if XDIST_WORKER is None else []:
        terminalreporter.write_line(f"{title}: {line}")


@contextlib.contextmanager
def exclusive(name: str) -> Iterator[None]:
    """One process at a time in the block: the workers of ``pytest -n`` share a checkout."""
    lock_file = ROOT / ".cache" / f"{name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def pins() -> Pins:
    return PINS


@pytest.fixture(scope="session")
def fetched(pins: Pins) -> Path:
    """Every pinned version fetched (a no-op when already up to date)."""
    with exclusive("fetch"):
        fetch(
            pins.ordered(),
            make_source(os.environ.get(SOURCE_ENV) or str(MIRROR), pins),
            pins,
        )
    return schema_dir()


#: What the last generation by the ``generated`` fixture read and wrote (digests).
GENERATED_STAMP = ROOT / ".cache" / "generated-by-tests.json"
#: Distributions whose code shapes generated files.
GENERATOR_DISTRIBUTIONS = ("black", "datamodel-code-generator", "jinja2", "msgspec")


def _digest(paths: Iterable[Path]) -> str:
    """One digest of the files at or under ``paths`` (their names and contents)."""
    sha = hashlib.sha256()
    for i, path in enumerate(paths):
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and "__pycache__" not in file.parts:
                name = f"{i}/{file.relative_to(path) if file != path else file.name}"
                sha.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    return sha.hexdigest()


def generation_stamp(fetched: Path) -> dict[str, str]:
    """What ``mcpgen/generated`` is made from (the generator's code, templates and tools,
    the pins, overrides, patches and fetched schemas) and what it holds, as digests."""
    tools = [sys.version, *(installed_version(d) for d in GENERATOR_DISTRIBUTIONS)]
    read = [ROOT / "generator", ROOT / "templates", ROOT / "schema", fetched]
    if os.environ.get("MCPGEN_PINS"):
        read.append(Path(os.environ["MCPGEN_PINS"]))
    inputs = _digest(read)
    return {
        "inputs": hashlib.sha256("\n".join([*tools, inputs]).encode()).hexdigest(),
        "output": _digest([ROOT / "generated"]),
    }


@pytest.fixture(scope="session")
def generated(fetched: Path) -> dict[str, ModuleType]:
    """``mcpgen.generated`` brought up to date; version → its ``types`` module.

    Generation (a few seconds) is skipped when neither what it reads nor what it wrote
    changed since this fixture last generated; ``test_default_package_is_up_to_date``
    generates afresh all the same, and fails if the package is stale."""
    with exclusive("generated"):
        stamp = generation_stamp(fetched)
        try:
            current = json.loads(GENERATED_STAMP.read_text()) == stamp
        except (OSError, ValueError):
            current = False
        if not current:
            generate(VERSIONS, out=ROOT, inputs=Inputs.load())  # the checkout's package
            GENERATED_STAMP.write_text(json.dumps(generation_stamp(fetched)))
    if _pyright_wanted:
        pyright_of_generated()  # runs beside the tests until its test reads the verdict
    index = importlib.import_module("mcpgen.generated")
    importlib.reload(index)
    return {v: index.load(v) for v in VERSIONS}


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the session (tests/support/redis_server.py): its URL.
    No redis-server binary is a failure, not a skip."""
    from support.redis_server import RedisServer

    with RedisServer() as server:
        yield server.url


@pytest.fixture
def anyio_backend() -> str:
    """What ``pytest.mark.anyio`` tests run on: asyncio, the runtime's only loop."""
    return "asyncio"
