"""Upstream's TSDoc links become readable docstring text, labels included, whatever the
conversion to JSON Schema did to them."""

from __future__ import annotations

import pytest

from mcpgen.generator.descriptions import clean_description

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
