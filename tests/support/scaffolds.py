"""What tests do to a project ``mcpgen new`` made: grow its server as a user would (more
tools, a resource template and a prompt after the ones it came with), and read its
README as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

#: A user's additions to the scaffold's ``server.py``: three tools, a template and a
#: prompt, registered after the scaffold's own (so they come first in no list).
ADDITIONS = '''


@app.tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@app.tool
def shout(words: str) -> str:
    """Say it louder."""
    return words.upper()


@app.tool
def count(items: list[str]) -> int:
    """How many items there are."""
    return len(items)


@app.resource("{scheme}://notes/{{day}}", mime_type="text/plain")
def note(day: str) -> str:
    """The note of a day."""
    return f"Nothing planned on {{day}}."


@app.prompt
def summarize(text: str) -> str:
    """Ask for a summary of a text."""
    return f"Summarize in one sentence: {{text}}"
'''


def grow(project: Path, package: str, scheme: str) -> None:
    """Add :data:`ADDITIONS` to the project's ``server.py``."""
    server = project / package / "server.py"
    server.write_text(server.read_text() + ADDITIONS.format(scheme=scheme))


_TEMPLATE_LEFTOVERS = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}")
#: Text glued to the end of a sentence: a code span or a list item where a new line or
#: a new paragraph was meant (what a template tag that ate its line end leaves).
_GLUED = re.compile(r"[.;!?)]\0|[.;!?)]- \S")
#: A code span, which :data:`_GLUED` sees as one character (``\0``).
_CODE_SPAN = re.compile(r"`[^`]*`")


def markdown_problems(text: str) -> list[str]:
    """What keeps ``text`` from rendering as the Markdown it means, by the rules a
    renderer applies to headings, lists, indented code and code spans: each problem
    as ``line N: what``. Empty when clean."""
    problems = []
    lines = text.split("\n")
    if not text.endswith("\n") or text.endswith("\n\n"):
        problems.append("the file must end with exactly one line end")
    fences = 0
    paragraph: list[str] = []

    def end_paragraph(number: int) -> None:
        if "".join(paragraph).count("`") % 2:
            problems.append(f"line {number}: a code span is not closed in this paragraph")
        paragraph.clear()

    blank_run = 0
    for number, line in enumerate(lines, 1):
        before = lines[number - 2] if number > 1 else ""
        after = lines[number] if number < len(lines) else ""
        if line != line.rstrip():
            problems.append(f"line {number}: trailing whitespace")
        if _TEMPLATE_LEFTOVERS.search(line):
            problems.append(f"line {number}: template syntax left over: {line.strip()}")
        blank_run = blank_run + 1 if not line.strip() else 0
        if blank_run == 2 and number < len(lines):
            problems.append(f"line {number}: two blank lines in a row")
        if line.startswith("```"):
            fences += 1
            continue
        if fences % 2:  # inside a fenced block: anything goes
            continue
        if not line.strip():
            end_paragraph(number)
            continue
        if line.startswith("#"):
            if not re.match(r"#{1,6} \S", line):
                problems.append(f"line {number}: a heading needs a space after its #s")
            if before.strip() and number > 1:
                problems.append(f"line {number}: no blank line before the heading")
            if after.strip():
                problems.append(f"line {number}: no blank line after the heading")
            end_paragraph(number)
            continue
        if line.startswith("    "):  # indented code: after a blank line or more code
            if before.strip() and not before.startswith("    "):
                problems.append(f"line {number}: indented code must follow a blank line")
            continue
        if line.startswith("- ") and before.strip() and not before.startswith(("- ", "  ")):
            problems.append(f"line {number}: a list must follow a blank line")
        if line.startswith("- "):
            end_paragraph(number)
        paragraph.append(line)
        if _GLUED.search(_CODE_SPAN.sub("\0", line)):
            problems.append(f"line {number}: text glued to the end of a sentence: {line}")
    end_paragraph(len(lines))
    if fences % 2:
        problems.append("a fenced code block is not closed")
    return problems
