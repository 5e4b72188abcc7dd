"""The checkout the suite runs in, for every test module and support module: its root, the
schema mirror, the pinned versions, the report printed at the end of the run, and pyright
over the checkout's generated package (started early, read late)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mcpgen.generator.fetch import SOURCE_ENV, is_url, mirror_path
from mcpgen.generator.pins import load_pins

ROOT = Path(__file__).resolve().parents[2]
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

#: The test that type-checks ``mcpgen/generated`` with pyright, a process of a few seconds:
#: when it is selected, pyright starts as soon as the package is up to date and runs on
#: another core while the tests before it run.
PYRIGHT_TEST = "test_generated_modules_pass_pyright"
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


def stop_pyright() -> None:
    """End pyright if its test was not reached."""
    if _pyright is not None and _pyright.poll() is None:
        _pyright.kill()
        _pyright.communicate()
