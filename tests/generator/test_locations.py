"""Where mcpgen reads and writes when installed, not run from a checkout: schemas in the
user cache, added pins in a per-user file laid over the built-in ones, generated code
under the working directory; never anything inside the installation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcpgen.generator import pins as p
from mcpgen.generator.pipeline import DEFAULT_PACKAGE, package_root

BUILT = p.load_pins(p.PINS_FILE)


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """mcpgen as a wheel lays it out (no pyproject.toml), with a home of its own."""
    package = tmp_path / "site-packages" / "mcpgen"
    (package / "schema").mkdir(parents=True)
    shutil.copy(p.PINS_FILE, package / "schema" / "pins.json")
    monkeypatch.setattr(p, "PACKAGE_DIR", package)
    monkeypatch.setattr(p, "PINS_FILE", package / "schema" / "pins.json")
    for variable in ("MCPGEN_SCHEMA_DIR", "MCPGEN_PINS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    p.use_schema_dir(None)
    return package


def test_an_installed_mcpgen_keeps_schemas_in_the_user_cache(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not p.in_checkout()
    assert p.schema_dir() == tmp_path / "cache" / "mcpgen" / "schema"
    monkeypatch.setenv("MCPGEN_SCHEMA_DIR", str(tmp_path / "env"))
    assert p.schema_dir() == tmp_path / "env"
    p.use_schema_dir(tmp_path / "flag")  # --schema-dir wins over the environment
    try:
        assert p.schema_dir() == tmp_path / "flag"
    finally:
        p.use_schema_dir(None)


def test_added_pins_go_to_a_user_file_over_the_built_in_ones(installed: Path) -> None:
    before = (installed / "schema" / "pins.json").read_bytes()
    pins = p.load_pins()
    newest = pins.ordered()[-1]
    pins.versions["2099-01-01"] = pins.versions[newest]
    p.save_pins(pins)
    assert (installed / "schema" / "pins.json").read_bytes() == before
    user = json.loads(p.pins_file().read_text())
    assert list(user["versions"]) == ["2099-01-01"]  # only what differs from the built-in
    merged = p.load_pins()
    assert merged.versions == {**BUILT.versions, "2099-01-01": BUILT.versions[newest]}


def test_generated_code_goes_under_the_working_directory(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert package_root(DEFAULT_PACKAGE, None) == tmp_path / "mcpgen" / "generated"
    assert package_root("acme.mcp", tmp_path / "src") == tmp_path / "src" / "acme" / "mcp"


def test_a_checkout_keeps_its_own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("MCPGEN_SCHEMA_DIR", "MCPGEN_PINS"):
        monkeypatch.delenv(variable, raising=False)
    assert p.in_checkout()
    assert p.pins_file() == p.PINS_FILE
    assert p.schema_dir() == p.PACKAGE_DIR / "schema"
