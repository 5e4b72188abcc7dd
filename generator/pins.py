"""The pinned protocol versions: ``schema/pins.json`` is the only list of versions.

Each pin records the upstream commit, the era, the JSON-Schema dialect, and the sha256 of
every upstream file we read for that version (``schema.json`` and its examples). Nothing
else in mcpgen lists versions by hand; adding a version is adding a pin.
"""

from __future__ import annotations

import json
import os
import re
import sys
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


# -- where mcpgen reads and writes ----------------------------------------------------------
#
# A source checkout keeps its fetched schemas in its own ``schema/`` (git ignores them) and
# its pins in ``schema/pins.json`` (committed). An installed mcpgen never writes into its
# installation, so that uninstalling it leaves nothing behind: fetched schemas go to a
# per-user cache directory, and versions pinned with ``schema add`` to a per-user pins file
# laid over the pins it was built with.

_schema_dir_override: Path | None = None


def in_checkout() -> bool:
    """Whether this mcpgen runs from a source checkout (not an installed wheel)."""
    return (PACKAGE_DIR / "pyproject.toml").is_file()


def user_dir(kind: Literal["cache", "data"]) -> Path:
    """mcpgen's per-user cache or data directory, where the platform keeps them
    (``$XDG_CACHE_HOME``/``$XDG_DATA_HOME`` or ``~/.cache``/``~/.local/share``; macOS
    ``~/Library/Caches``/``~/Library/Application Support``; Windows ``%LOCALAPPDATA%``)."""
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / "mcpgen" / ("Cache" if kind == "cache" else "Data")
    if sys.platform == "darwin":
        folder = "Caches" if kind == "cache" else "Application Support"
        return home / "Library" / folder / "mcpgen"
    variable, fallback = (
        ("XDG_CACHE_HOME", home / ".cache")
        if kind == "cache"
        else ("XDG_DATA_HOME", home / ".local" / "share")
    )
    return Path(os.environ.get(variable) or fallback) / "mcpgen"


def use_schema_dir(path: Path | None) -> None:
    """Read and write schemas under ``path`` from now on (the CLI's ``--schema-dir``);
    None goes back to ``$MCPGEN_SCHEMA_DIR`` or the default."""
    global _schema_dir_override
    _schema_dir_override = path


def schema_dir() -> Path:
    """Where fetched schemas live: ``--schema-dir``, ``$MCPGEN_SCHEMA_DIR``, a checkout's
    ``schema/``, or the user cache directory's ``schema/``."""
    if _schema_dir_override is not None:
        return _schema_dir_override
    env = os.environ.get("MCPGEN_SCHEMA_DIR")
    if env:
        return Path(env)
    return PACKAGE_DIR / "schema" if in_checkout() else user_dir("cache") / "schema"


def pins_file() -> Path:
    """Where pins are saved: ``$MCPGEN_PINS``, a checkout's ``schema/pins.json``, or an
    installed mcpgen's per-user pins file (read over the pins it was built with)."""
    env = os.environ.get("MCPGEN_PINS")
    if env:
        return Path(env)
    return PINS_FILE if in_checkout() else user_dir("data") / "pins.json"


def load_pins(path: Path | None = None) -> Pins:
    """The pins in ``path``, or (by default) the pins in force: an installed mcpgen's
    own, with the user's pins laid over them."""
    if path is not None or os.environ.get("MCPGEN_PINS") or in_checkout():
        return _read_pins(path or pins_file())
    pins = _read_pins(PINS_FILE)
    user = pins_file()
    if user.is_file():
        pins.versions.update(_read_pins(user).versions)
    return pins


def _read_pins(path: Path) -> Pins:
    try:
        return msgspec.json.decode(path.read_bytes(), type=Pins)
    except FileNotFoundError:
        raise SchemaError(
            f"{path}: pins file missing", "restore schema/pins.json from git"
        ) from None
    except msgspec.DecodeError as exc:
        raise SchemaError(f"{path}: invalid pins file: {exc}", "restore it from git") from None


def save_pins(pins: Pins, path: Path | None = None) -> None:
    """Save ``pins`` to ``path`` (default :func:`pins_file`). An installed mcpgen's
    per-user file keeps only what differs from the pins it was built with, so that the
    pins of a newer mcpgen are not shadowed by stale copies."""
    if path is None:
        path = pins_file()
        if path != PINS_FILE and not os.environ.get("MCPGEN_PINS"):
            built = _read_pins(PINS_FILE).versions
            own = {v: p for v, p in pins.versions.items() if built.get(v) != p}
            pins = Pins(upstream=pins.upstream, versions=own)
    data = json.loads(msgspec.json.encode(pins))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
