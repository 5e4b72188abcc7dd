"""The pinned protocol versions: ``schema/pins.json`` is the only list of versions.

Each pin records the upstream commit, the era, the JSON-Schema dialect, and the sha256 of
every upstream file we read for that version (``schema.json`` and its examples). Nothing
else in mcpgen lists versions by hand; adding a version is adding a pin.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal

import msgspec

from .errors import SchemaError, UsageError

Era = Literal["legacy", "modern"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PINS_FILE = PACKAGE_DIR / "schema" / "pins.json"
VERSION_PATTERN = re.compile(r"^(\d{4}-\d{2}-\d{2}|draft)$")


class Upstream(msgspec.Struct, frozen=True):
    repository: str
    raw_url: str
    tree_url: str


class Pin(msgspec.Struct, frozen=True):
    commit: str
    era: Era
    dialect: str
    files: dict[str, str]

    @property
    def schema_sha256(self) -> str:
        return self.files["schema.json"]

    @property
    def examples(self) -> dict[str, str]:
        return {p: h for p, h in self.files.items() if p.startswith("examples/")}


class Pins(msgspec.Struct):
    upstream: Upstream
    versions: dict[str, Pin]

    def ordered(self) -> list[str]:
        """Dated versions oldest first, then ``draft``."""
        return sorted(self.versions, key=version_sort_key)

    def get(self, version: str) -> Pin:
        try:
            return self.versions[version]
        except KeyError:
            raise UsageError(
                f"unknown protocol version {version!r}",
                f"pinned versions are {', '.join(self.ordered())}; "
                "add one with `mcpgen schema add VERSION --commit SHA`",
            ) from None

    def select(self, version: str) -> list[str]:
        """Resolve a ``--version`` argument (``all``, one version, or a comma list)."""
        if version == "all":
            return self.ordered()
        chosen = [v.strip() for v in version.split(",") if v.strip()]
        for v in chosen:
            self.get(v)
        return sorted(set(chosen), key=version_sort_key)


def version_sort_key(version: str) -> tuple[int, str]:
    return (1, version) if version == "draft" else (0, version)


def module_name(version: str) -> str:
    """The Python subpackage name of a version: ``2025-11-25`` → ``v2025_11_25``."""
    if not VERSION_PATTERN.match(version):
        raise UsageError(
            f"invalid protocol version {version!r}",
            "versions look like 2025-11-25 or 'draft'",
        )
    return "draft" if version == "draft" else "v" + version.replace("-", "_")


def schema_dir() -> Path:
    """Where fetched schemas live: ``$MCPGEN_SCHEMA_DIR`` or the package's ``schema/``."""
    env = os.environ.get("MCPGEN_SCHEMA_DIR")
    return Path(env) if env else PACKAGE_DIR / "schema"


def pins_file() -> Path:
    """``$MCPGEN_PINS`` or the package's ``schema/pins.json``."""
    env = os.environ.get("MCPGEN_PINS")
    return Path(env) if env else PINS_FILE


def load_pins(path: Path | None = None) -> Pins:
    path = path or pins_file()
    try:
        return msgspec.json.decode(path.read_bytes(), type=Pins)
    except FileNotFoundError:
        raise SchemaError(
            f"{path}: pins file missing", "restore schema/pins.json from git"
        ) from None
    except msgspec.DecodeError as exc:
        raise SchemaError(f"{path}: invalid pins file: {exc}", "restore it from git") from None


def save_pins(pins: Pins, path: Path | None = None) -> None:
    path = path or pins_file()
    data = json.loads(msgspec.json.encode(pins))
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
