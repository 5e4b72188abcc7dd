"""A synthetic spec revision for tests: draft's schema, edited, in a mirror of its own,
with a pins file and schema directory of its own (the checkout's stay untouched)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import MIRROR
from mcpgen.generator.pins import PINS_FILE


def synthetic_revision(
    tmp_path: Path, version: str, fetched: Path, edit: Callable[[dict[str, Any]], None]
) -> tuple[Path, dict[str, str]]:
    """``edit`` applied to a copy of draft's schema under ``version``: the mirror to pin it
    from (``schema add VERSION --from MIRROR``), and the environment the CLI needs for it
    (``MCPGEN_PINS``, ``MCPGEN_SCHEMA_DIR``, draft already fetched there)."""
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "draft", mirror / version, ignore=shutil.ignore_patterns("examples"))
    schema_file = mirror / version / "schema.json"
    schema = json.loads(schema_file.read_text())
    edit(schema)
    schema_file.write_text(json.dumps(schema))
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    if not (tmp_path / "schema" / "draft").exists():
        shutil.copytree(fetched / "draft", tmp_path / "schema" / "draft")
    return mirror, {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}
