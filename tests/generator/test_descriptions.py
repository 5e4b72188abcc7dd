"""Upstream's prose becomes docstrings a linter accepts: TSDoc links readable, labels
included, whatever the conversion to JSON Schema did to them; lines wrapped to the length
the generated code is formatted to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpgen.generator.descriptions import clean_description
from mcpgen.generator.render import LINE_LENGTH, docstring

NAMES = {"CallToolRequest", "CallToolResult", "MetaObject", "Tool", "ToolAnnotations"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("for a {@link CallToolRequesttools/call} request.", "for a `tools/call` request."),
        (
            "follow the {@link MetaObject`_meta` key naming rules}.",
            "follow the `_meta` key naming rules.",
        ),
        ("see {@link CallToolResult.content}", "see `CallToolResult.content`"),
        ("see {@link ToolAnnotations} and {@link Tool}", "see `ToolAnnotations` and `Tool`"),
        ("see {@link Tool | the tool}", "see `the tool`"),
        ("a {@link Unknownthing} here", "a `Unknownthing` here"),
        ("no links at all ", "no links at all"),
        ("an unterminated {@link Tool", "an unterminated `Tool`"),
        ("   ", None),
        (None, None),
    ],
)
def test_links_render_as_their_label_or_their_target(
    text: str | None, expected: str | None
) -> None:
    assert clean_description(text, NAMES) == expected


def test_docstrings_are_wrapped_to_the_line_length_where_they_are_placed() -> None:
    text = "word " * 60 + "\n- an item " + "that goes on " * 12 + "\n```\n" + "x" * 120 + "\n```"
    literal = docstring(text.strip(), "        ")
    assert literal is not None
    lines = literal.splitlines()  # placed 8 columns in: the later lines carry their indent
    placed = ["        " + lines[0], *lines[1:]]
    assert all(len(line) <= LINE_LENGTH for line in placed if "x" * 120 not in line)
    assert "x" * 120 in literal  # fenced code is left as it is
    item = next(i for i, line in enumerate(lines) if "- an item" in line)
    assert lines[item + 1].startswith("          that")  # hangs under the item's text
    assert docstring("short") == '"""short"""'
    url = "see https://example.com/" + "a" * 120
    assert "https://example.com/" + "a" * 120 in (docstring(url) or "")  # not broken


def test_no_generated_line_is_longer_than_the_line_length(generated: dict[str, Any]) -> None:
    for types in generated.values():
        for module in Path(types.__file__).parent.glob("*.py"):
            long = [
                n
                for n, line in enumerate(module.read_text().splitlines(), 1)
                if len(line) > LINE_LENGTH
            ]
            assert not long, f"{module}: lines {long[:5]} are longer than {LINE_LENGTH}"
