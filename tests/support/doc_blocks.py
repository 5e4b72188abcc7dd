"""The code blocks of the README and of ``docs/*.md`` (``docs/dev/`` left out), and how
each is run by the tests.

Every block is fenced and names its language: ``python`` blocks are run, ``sh`` blocks are
commands (checked against what the project has), ``text`` blocks are left alone. The line
before a ``python`` block's fence says how it is run::

    <!-- run: RUNNER -->
    <!-- run: RUNNER, file: NAME -->

``RUNNER`` is a key of ``RUNNERS``, which names the test module that runs it. ``NAME`` is
the file the block is written as: every such block is written into the folder each block
is run in, so that blocks can import or run others (``from server import app``).

The generic runners, ``exec`` (in process, as ``__main__``) and ``script`` (``python NAME``
in a process of its own), check what a block prints: a ``print(...)`` statement followed by
a comment, on its own line or alone on the next, must print that comment's text.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose blocks are tested: the README and the guides (not the notes in docs/dev/).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Every runner a block may name, and the test module that runs the blocks naming it.
RUNNERS: dict[str, str] = {
    # in process (fast)
    "exec": "test_docs",
    "low-level": "test_docs",
    "protected-server": "test_docs",
    "reports-task": "test_docs",
    "report-client": "test_docs",
    # real processes and sockets (slow)
    "script": "test_docs_processes",
    "calculator-http": "test_docs_processes",
    "oauth-client": "test_docs_processes",
}

LANGUAGES = frozenset({"python", "sh", "text"})
DIRECTIVE = re.compile(r"<!--\s*run:(.*?)-->")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, counted from 1
    language: str
    code: str
    #: The line before the fence, when it is a ``<!-- run: ... -->`` comment.
    directive: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def settings(self) -> dict[str, str]:
        """``run`` and ``file`` from the directive (empty without one); a part that is not
        ``key: value`` is kept under its own text, so that it fails as unknown."""
        if self.directive is None:
            return {}
        runner, *others = (part.strip() for part in self.directive.split(","))
        found = {"run": runner}
        for part in others:
            key, colon, value = part.partition(":")
            found[key.strip() if colon else part] = value.strip()
        return found

    @property
    def runner(self) -> str | None:
        return self.settings.get("run")

    @property
    def file(self) -> str | None:
        return self.settings.get("file")


def blocks_of(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` (fences at the start of a line, as all of ours are)."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = lines[index]
        if not opening.startswith("```"):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end] != "```":
            end += 1
        assert end < len(lines), f"{page.relative_to(ROOT)}:{index + 1}: unclosed fence"
        previous = lines[index - 1] if index else ""
        directive = DIRECTIVE.fullmatch(previous.strip())
        code = "\n".join(lines[index + 1 : end]) + "\n"
        language = opening[3:].strip()
        found.append(
            Block(page, index + 1, language, code, directive.group(1) if directive else None)
        )
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks_of(page)]


def run_by(module: str) -> list[Block]:
    """The python blocks whose runner ``module`` runs."""
    return [
        block
        for block in all_blocks()
        if block.language == "python" and RUNNERS.get(block.runner or "") == module
    ]


def named() -> dict[str, Block]:
    """The blocks written as files, by file name."""
    return {block.file: block for block in all_blocks() if block.file is not None}


def write_named(folder: Path) -> Path:
    """Every block that names a file, written into ``folder``."""
    for name, block in named().items():
        (folder / name).write_text(block.code)
    return folder


def printed(code: str) -> list[str]:
    """What the block says it prints: the comment after each ``print(...)`` statement (on
    its line, or alone on the next), in order; [] when some print says nothing."""
    comments = {
        token.start[0]: token.string[1:].strip()
        for token in tokenize.generate_tokens(io.StringIO(code).readline)
        if token.type == tokenize.COMMENT
    }
    lines = code.splitlines()
    said: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(code)):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
        ):
            continue
        end = node.end_lineno or node.lineno
        if end in comments:
            said.append((node.lineno, comments[end]))
        elif end < len(lines) and lines[end].strip().startswith("#"):
            said.append((node.lineno, comments[end + 1]))
        else:
            return []
    return [text for _, text in sorted(said)]


def commands(block: Block) -> Iterator[str]:
    """The commands of an ``sh`` block: one a line, comments left out."""
    for line in block.code.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield line
