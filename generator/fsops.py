"""File-system steps that must not leave anything half done."""

from __future__ import annotations

import shutil
from pathlib import Path


def replace_directory(staging: Path, final: Path) -> None:
    """Move a fully written ``staging`` directory to ``final``, replacing what was there.

    The old directory is renamed aside first, so at every moment ``final`` is either the
    complete old content or the complete new one.
    """
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    staging.rename(final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
