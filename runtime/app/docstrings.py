"""What a function's docstring says about it and about each of its parameters.

Tools, prompts and resources take their descriptions from the functions that implement
them, as server authors already write them: a summary, then parameters in the Google
(``Args:``), NumPy (``Parameters`` + dashes) or Sphinx (``:param name:``) style.
"""

from __future__ import annotations

import inspect
import re

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Returns?|Raises|Yields?|Examples?|"
    r"Notes?|See Also|Attributes)\s*:?\s*$"
)
_DASHES = re.compile(r"^-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")
_SPHINX = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_PARAMETER_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args"}


class Doc:
    """A docstring read apart: ``summary`` (everything before the first section) and
    ``params`` (parameter name → its description, lines joined)."""

    __slots__ = ("summary", "params")

    def __init__(self, summary: str | None, params: dict[str, str]) -> None:
        self.summary = summary
        self.params = params


def parse(doc: str | None) -> Doc:
    """Read ``doc`` (a raw ``__doc__``); an absent docstring gives an empty :class:`Doc`."""
    if not doc:
        return Doc(None, {})
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None  # the section being read; "other" for any but parameters
    numpy = False  # the section's heading was underlined (NumPy style)
    indent: int | None = None  # the indentation of the section's parameter lines
    current: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        heading = _SECTION.match(stripped)
        underlined = index + 1 < len(lines) and bool(_DASHES.match(lines[index + 1].strip()))
        if heading and (stripped.endswith(":") or underlined):
            section, numpy, current, indent = heading.group(1), underlined, None, None
            index += 2 if underlined else 1
            continue
        sphinx = _SPHINX.match(stripped)
        if sphinx:
            name: str = sphinx.group(1)
            section, current = "sphinx", name
            params[name] = sphinx.group(2)
        elif stripped.startswith(":") and (section is None or section == "sphinx"):
            section, current = "other", None  # another Sphinx field (:returns:, :raises:)
        elif section is None:
            summary.append(line)
        elif section == "sphinx" and current is not None and stripped:
            params[current] = f"{params[current]} {stripped}"
        elif section in _PARAMETER_SECTIONS and stripped:
            here = len(line) - len(line.lstrip())
            indent = here if indent is None else indent
            current = _item(stripped, here == indent, params, current, numpy)
        index += 1
    text = "\n".join(summary).strip()
    return Doc(text or None, {k: v.strip() for k, v in params.items()})


def _item(
    stripped: str, starts: bool, params: dict[str, str], current: str | None, numpy: bool
) -> str | None:
    """One line of a parameter section (``starts``: at the indentation parameters are
    introduced at): a new parameter, or more of the current one's description."""
    if starts:
        found = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(stripped)
        if found:
            name = found.group(1).lstrip("*")
            params[name] = "" if numpy else found.group(2)
            return name
    if current is not None:
        params[current] = f"{params[current]} {stripped}"
    return current
