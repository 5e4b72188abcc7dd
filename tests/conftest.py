"""Shared fixtures: the pinned schemas (fetched from the mirror) and the generated package."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from importlib.metadata import version as installed_version
from pathlib import Path
from types import ModuleType

import pytest

from mcpgen.generator.fetch import SOURCE_ENV, fetch, is_url, make_source, mirror_path
from mcpgen.generator.pins import Pins, load_pins, schema_dir
from mcpgen.generator.pipeline import Inputs, generate

ROOT = Path(__file__).resolve().parent.parent
# A relative mirror path names a directory from where the tests were started: made absolute
# here, before any test changes directory, and put back into the environment so that every
# command a test runs elsewhere (a scaffolded project, a wheel's venv, `make dist`) reads the
# same mirror. A URL stays as it is.
if os.environ.get(SOURCE_ENV) and not is_url(os.environ[SOURCE_ENV]):
    os.environ[SOURCE_ENV] = str(mirror_path(os.environ[SOURCE_ENV]))
MIRROR = Path(os.environ.get(SOURCE_ENV) or ROOT.parent / "shared" / "mcp-schema")
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


def pytest_collection_finish(session: pytest.Session) -> None:
    global _pyright_wanted
    _pyright_wanted = any(item.name == PYRIGHT_TEST for item in session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _pyright is not None and _pyright.poll() is None:  # its test was not reached
        _pyright.kill()
        _pyright.communicate()


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
        make_source(os.environ.get(SOURCE_ENV) or str(MIRROR), pins),
        pins,
    )
    return schema_dir()


#: The test that type-checks ``mcpgen/generated`` with pyright, a process of a few seconds:
#: when it is selected, pyright starts as soon as the package is up to date and runs on
#: another core while the tests before it run.
PYRIGHT_TEST = "test_generated_modules_pass_pyright"
_pyright_wanted = False
_pyright: subprocess.Popen[str] | None = None


def pyright_of_generated() -> subprocess.Popen[str]:
    """pyright over the checkout's ``generated/`` (standard mode, Python 3.10), started
    once per session; read its outcome with ``communicate()``."""
    global _pyright
    if _pyright is None:
        pyright = Path(sys.executable).parent / "pyright"
        _pyright = subprocess.Popen(
            [
                str(pyright),
                "--pythonpath",
                sys.executable,
                "--pythonversion",
                "3.10",
                str(ROOT / "generated"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )
    return _pyright


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
    stamp = generation_stamp(fetched)
    try:
        current = json.loads(GENERATED_STAMP.read_text()) == stamp
    except (OSError, ValueError):
        current = False
    if not current:
        generate(VERSIONS, out=ROOT, inputs=Inputs.load())  # the checkout's mcpgen/generated
        GENERATED_STAMP.parent.mkdir(parents=True, exist_ok=True)
        GENERATED_STAMP.write_text(json.dumps(generation_stamp(fetched)))
    if _pyright_wanted:
        pyright_of_generated()  # runs beside the tests until its test reads the verdict
    index = importlib.import_module("mcpgen.generated")
    importlib.reload(index)
    return {v: index.load(v) for v in VERSIONS}


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the session (tests/redis_server.py): its URL.
    No redis-server binary is a failure, not a skip."""
    from redis_server import RedisServer

    with RedisServer() as server:
        yield server.url
