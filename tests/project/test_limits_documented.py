"""Every bound is a documented setting: each field of ``runtime.core.limits.Limits`` has a row in
the "Limits" table of docs/limits.md (its default and what a client gets when it is reached)."""

from __future__ import annotations

from pathlib import Path

from mcpgen.runtime import Limits

LIMITS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "limits.md"


def limits_table_rows() -> set[str]:
    section = LIMITS_PAGE.read_text()
    return {
        line.split("|")[1].strip().strip("`")
        for line in section.splitlines()
        if line.startswith("| `")
    }


def test_every_limits_field_has_a_row_in_the_limits_table() -> None:
    """A new ``Limits`` field without its row in docs/limits.md fails here."""
    rows = limits_table_rows()
    assert "max_message_bytes" in rows  # the table was found and read
    missing = set(Limits.__struct_fields__) - rows
    assert missing == set(), f"Limits fields without a row in docs/limits.md: {missing}"
