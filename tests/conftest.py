"""Shared fixtures: the pinned schemas (fetched from the mirror) and the generated package."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

from mcpgen.generator.fetch import fetch, make_source
from mcpgen.generator.pins import Pins, load_pins, schema_dir
from mcpgen.generator.pipeline import Inputs, generate

ROOT = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("MCPGEN_SCHEMA_SOURCE") or ROOT.parent / "shared" / "mcp-schema")
PINS = load_pins()
VERSIONS = PINS.ordered()
#: Filled by tests, printed at the end of the run.
REPORT: dict[str, str] = {}
#: Suites that prove what only real processes, pipes, sockets and peers can, or run long
#: (fuzzing, floods): marked ``slow``. ``make unit`` leaves them out; ``make test`` and CI
#: run everything.
SLOW_MODULES = frozenset(
    {
        "test_app_sdk",
        "test_cli",
        "test_dist",
        "test_floods",
        "test_fuzz",
        "test_http_serve",
        "test_http_server",
        "test_interop_http",
        "test_interop_sdk",
        "test_readme",
        "test_scaffold",
        "test_stdio_limits",
        "test_stdio_runtime",
        "test_wire_validity",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, line in REPORT.items():
        terminalreporter.write_line(f"{title}: {line}")


@pytest.fixture(scope="session")
def pins() -> Pins:
    return PINS


@pytest.fixture(scope="session")
def fetched(pins: Pins) -> Path:
    """Every pinned version fetched (a no-op when already up to date)."""
    fetch(
        pins.ordered(),
        make_source(os.environ.get("MCPGEN_SCHEMA_SOURCE") or str(MIRROR), pins),
        pins,
    )
    return schema_dir()


@pytest.fixture(scope="session")
def generated(fetched: Path) -> dict[str, ModuleType]:
    """``mcpgen.generated`` brought up to date; version → its ``types`` module."""
    generate(VERSIONS, out=ROOT, inputs=Inputs.load())  # the checkout's mcpgen/generated
    index = importlib.import_module("mcpgen.generated")
    importlib.reload(index)
    return {v: index.load(v) for v in VERSIONS}
