"""The README and the guides in docs/ say what is so: every python block is run (here, in
process; those that need processes and sockets in test_docs_processes.py), every command
names what the project has, every relative link leads somewhere, and the README stays a
front page. How blocks say how they are run: ``doc_blocks``."""

from __future__ import annotations

import ast
import asyncio
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import pytest

from support import doc_blocks
from support.asgi_driver import call, request
from support.doc_blocks import PAGES, ROOT, Block
from mcpgen.generator.cli import main as mcpgen_cli
from mcpgen.runtime.client import Mode
from mcpgen.runtime.testing import connect

TIMEOUT = 60
BOTH_ERAS: tuple[Mode, Mode] = ("legacy", "modern")
README_MAX_LINES = 200


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


# -- the pages ---------------------------------------------------------------------------------


def test_the_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_links_every_guide() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = {ROOT / target for target in re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme)}
    assert set(PAGES[1:]) <= linked, set(PAGES[1:]) - linked


def test_every_block_is_fenced_with_a_language() -> None:
    for page in PAGES:
        outside = fenced_out(page.read_text()).splitlines()
        for number, line in enumerate(outside, 1):
            previous = outside[number - 2] if number > 1 else ""
            indented = line.startswith(("    ", "\t")) and not previous.strip()
            assert not indented, f"{page.relative_to(ROOT)}:{number}: an indented code block"
    for block in doc_blocks.all_blocks():
        assert block.language in doc_blocks.LANGUAGES, f"{block.where}: {block.language!r}"


def test_every_python_block_names_a_runner_that_runs_it() -> None:
    for block in doc_blocks.all_blocks():
        if block.language != "python":
            assert block.directive is None, f"{block.where}: only python blocks are run"
            continue
        assert block.runner in doc_blocks.RUNNERS, (
            f"{block.where}: no runner: put <!-- run: RUNNER --> before the fence, RUNNER one "
            f"of {sorted(doc_blocks.RUNNERS)}"
        )
        assert set(block.settings) <= {"run", "file"}, f"{block.where}: {block.directive}"
    files = [block.file for block in doc_blocks.all_blocks() if block.file is not None]
    assert len(files) == len(set(files)), files


def test_this_module_has_a_runner_for_each_of_its_names() -> None:
    assert set(RUNNERS) == {n for n, m in doc_blocks.RUNNERS.items() if m == __name__}
    assert {b.runner for b in doc_blocks.all_blocks()} >= set(doc_blocks.RUNNERS), "unused"


# -- links and paths ---------------------------------------------------------------------------


def fenced_out(text: str) -> str:
    """``text`` with its fenced blocks blanked (line numbers kept)."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            out.append("")
        else:
            out.append("" if inside else line)
    return "\n".join(out)


def slugs(page: Path) -> set[str]:
    """The anchors of ``page``'s headings, as GitHub makes them."""
    seen: dict[str, int] = {}
    found = set()
    for line in fenced_out(page.read_text()).splitlines():
        heading = re.match(r"#+ (.*)", line)
        if heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_every_relative_link_leads_to_a_file_and_a_heading() -> None:
    checked = 0
    for page in PAGES:
        prose = re.sub(r"`[^`\n]*`", "", fenced_out(page.read_text()))
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.is_file(), f"{page.relative_to(ROOT)}: {target} leads nowhere"
            if anchor:
                assert anchor in slugs(linked), f"{page.relative_to(ROOT)}: no heading {target}"
            checked += 1
    assert checked > 20


#: Paths in backquotes that name files of other places than this checkout.
ELSEWHERE = {"tests/test_protection.py": "a file of a project `mcpgen new --auth` writes"}


def test_every_file_named_in_backquotes_exists() -> None:
    top = r"(?:runtime|generator|tests|examples|bench|schema|templates|docs|mcpgen|\.ci)/"
    for page in PAGES:
        for named in re.findall(rf"`({top}[\w./*-]*)`", fenced_out(page.read_text())):
            if named not in ELSEWHERE:
                assert list(ROOT.glob(named)), f"{page.relative_to(ROOT)}: no {named}"


# -- commands ----------------------------------------------------------------------------------


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, re.M))


def benchmarks() -> set[str]:
    tree = ast.parse((ROOT / "bench" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "BENCHMARKS":
            assert node.value is not None
            return set(ast.literal_eval(node.value))
    raise AssertionError("bench/__init__.py has no BENCHMARKS")


def extras() -> set[str]:
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["project"]["optional-dependencies"])


def simple_commands(line: str) -> Iterator[list[str]]:
    """The words of each command of a shell line (``&&``, ``;``, ``|`` between them), with
    ``<placeholders>`` as one word and the brackets of a synopsis taken off."""
    line = re.sub(r"<[^>]*>", "PLACEHOLDER", line)
    for part in re.split(r"\s(?:&&|\|\||;|\|)\s", line):
        words = [w.strip("[]") for w in shlex.split(part, comments=True)]
        words = [w for w in words if w and w != "..."]
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words = words[1:]  # VAR=value before the command
        if words:
            yield words


def check_make(words: list[str], targets: set[str]) -> None:
    for word in words[1:]:
        if not word.startswith("-") and "=" not in word:
            assert word in targets, f"make has no target {word!r}"


def check_mcpgen(words: list[str]) -> None:
    """Each command, option and argument count against the CLI itself."""
    command: click.Command = mcpgen_cli
    arguments = 0
    rest = iter(words[1:])
    for word in rest:
        if word == "--":  # what follows is arguments (`mcpgen proxy -- CMD ...`)
            arguments += sum(1 for _ in rest) + 1
        elif word.startswith("-"):
            name = word.split("=", 1)[0]
            options = [p for p in command.params if name in getattr(p, "opts", ())]
            assert options, f"`{command.name}` has no option {name}"
            if not getattr(options[0], "is_flag", False) and "=" not in word:
                next(rest, None)  # its value
        elif isinstance(command, click.Group):
            if word == "COMMAND":  # the synopsis of every command
                return
            assert word in command.commands, f"`{command.name}` has no command {word!r}"
            command = command.commands[word]
        else:
            arguments += 1
    assert not isinstance(command, click.Group), f"`{command.name}` needs a command"
    declared = [p for p in command.params if isinstance(p, click.Argument)]
    assert arguments <= len(declared) or any(p.nargs == -1 for p in declared), words


def check_bench(words: list[str], known: set[str]) -> None:
    at = words.index("-m")
    named = [w for w in words[at + 2 :] if not w.startswith("-")][:1]
    for name in named:
        assert name in known or name == "NAME", f"no benchmark {name!r}"


def test_every_command_names_what_the_project_has() -> None:
    targets, known, offered = make_targets(), benchmarks(), extras()
    seen: set[str] = set()
    for block in doc_blocks.all_blocks():
        if block.language != "sh":
            continue
        for line in doc_blocks.commands(block):
            for words in simple_commands(line):
                program = Path(words[0]).name
                try:
                    if program == "make":
                        check_make(words, targets)
                    elif program == "mcpgen":
                        check_mcpgen(words)
                    elif program.startswith("python") and words[1:3] == ["-m", "bench"]:
                        check_bench(words, known)
                        program = "bench"
                    for word in words:
                        extra = re.fullmatch(r"mcpgen\[([\w,]+)\]", word)
                        if extra:
                            assert set(extra.group(1).split(",")) <= offered, word
                except AssertionError as error:
                    raise AssertionError(f"{block.where}: `{line}`: {error}") from None
                seen.add(program)
    assert {"make", "mcpgen", "bench", "pip"} <= seen, seen


def test_the_command_checks_catch_what_does_not_exist() -> None:
    with pytest.raises(AssertionError, match="no target"):
        check_make(["make", "tset"], make_targets())
    for wrong in (
        "mcpgen schema fecth",
        "mcpgen generate --verison all",
        "mcpgen diff A B C",
        "mcpgen schema",
    ):
        with pytest.raises(AssertionError):
            check_mcpgen(next(simple_commands(wrong)))
    with pytest.raises(AssertionError, match="no benchmark"):
        check_bench(["python", "-m", "bench", "stdio_call"], benchmarks())
    check_mcpgen(next(simple_commands("mcpgen [--schema-dir DIR] COMMAND ...")))
    check_mcpgen(next(simple_commands("mcpgen schema add V --commit <a sha> [--from DIR|URL]")))


# -- running the python blocks -----------------------------------------------------------------


def test_what_a_block_says_it_prints_is_read_from_its_comments() -> None:
    code = "print(1)  # 1\nx = 2  # not output\nprint(\n    x\n)\n# 2\n"
    assert doc_blocks.printed(code) == ["1", "2"]
    assert doc_blocks.printed("print(1)  # 1\nprint(2)\n") == []  # one print says nothing


@contextmanager
def folder_of_named_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The current directory and first on ``sys.path``: a folder holding every block that
    names a file; their modules imported afresh, and forgotten afterwards."""
    folder = doc_blocks.write_named(tmp_path)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    for name in doc_blocks.named():
        monkeypatch.delitem(sys.modules, Path(name).stem, raising=False)
    try:
        yield folder
    finally:
        for name in doc_blocks.named():
            sys.modules.pop(Path(name).stem, None)


def namespace_of(block: Block, code: str | None = None) -> dict[str, Any]:
    """The block run as a module that is not ``__main__``: what it defines."""
    namespace: dict[str, Any] = {"__name__": "docs_" + re.sub(r"\W", "_", block.where)}
    exec(compile(code or block.code, block.where, "exec"), namespace)
    return namespace


def run_exec(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """As ``__main__``, in the folder of named blocks; it prints what it says it prints."""
    with folder_of_named_blocks(tmp_path, monkeypatch):
        exec(compile(block.code, block.where, "exec"), {"__name__": "__main__"})
    said = doc_blocks.printed(block.code)
    if said:
        assert capsys.readouterr().out.splitlines() == said


def run_low_level(block: Block, *_: Any) -> None:
    """The greeter on the generated stubs lists its tool and greets, in both eras."""
    server = namespace_of(block)["server"]

    async def scenario(mode: Mode) -> tuple[list[str], str]:
        async with connect(server, mode=mode) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool(name="greet", arguments={"who": "Ada"})
            return tools, result.content[0].text

    for mode in BOTH_ERAS:
        assert run(scenario(mode)) == (["greet"], "Hello, Ada!")


MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def challenge(header: str) -> dict[str, str]:
    assert header.startswith("Bearer "), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def run_protected_server(block: Block, *_: Any) -> None:
    """No token: 401 and the challenge naming the metadata, served to anyone; a verified
    principal reaches the handler, and the per-tool scope is asked for (403)."""
    from mcpgen.runtime.http.auth import Principal

    namespace = namespace_of(block)
    served = namespace["app"].http_app()
    resource, issuer = namespace["RESOURCE"], namespace["ISSUER"]

    def tool_call(name: str, arguments: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        params = {"name": name, "arguments": arguments, "_meta": META}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
        return request(1, "tools/call", params), headers

    async def scenario() -> None:
        body, headers = tool_call("whoami", {})
        reply = await call(served, body=body, headers=headers)
        assert reply.status == 401
        assert challenge(reply.headers["www-authenticate"]) == {
            "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            "scope": "mcp:access",
        }
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            metadata = (await call(served, "GET", path=path)).json()
            assert metadata["resource"] == resource and metadata["authorization_servers"] == [
                issuer
            ]
            assert metadata["scopes_supported"] == ["mcp:access"]
        # a token verified before: its verdict is cached (the issuer is not reachable here)
        served.auth.cache.put(
            served.auth.cache.digest(b"known"), Principal("ann", ["mcp:access"]), 60
        )
        bearer = {"authorization": "Bearer known"}
        reply = await call(served, body=body, headers={**headers, **bearer})
        assert reply.json()["result"]["content"][0]["text"] == "ann"
        body, headers = tool_call("write", {"path": "p", "text": "t"})
        reply = await call(served, body=body, headers={**headers, **bearer})
        assert reply.status == 403
        assert challenge(reply.headers["www-authenticate"])["scope"] == "files:write mcp:access"

    run(scenario())


def quick(block: Block) -> str:
    """The reports server with its long work made short."""
    assert "asyncio.sleep(10)" in block.code
    return block.code.replace("asyncio.sleep(10)", "asyncio.sleep(0.01)")


def run_reports_task(block: Block, *_: Any) -> None:
    """2025-11-25 on the wire: the tool lists its task support, a call with ``task`` is
    answered with a task, and ``tasks/result`` gives the outcome; a plain call still runs."""
    from support.sansio import request as message, serving

    app = namespace_of(block, quick(block))["app"]

    async def scenario() -> None:
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            await peer.send(message(1, "tools/list"))
            (tool,) = (await peer.answer_to(1))["result"]["tools"]
            assert tool["execution"] == {"taskSupport": "optional"}
            params = {"name": "build_report", "arguments": {"quarter": "Q3"}, "task": {}}
            await peer.send(message(2, "tools/call", params))
            task = (await peer.answer_to(2))["result"]["task"]
            await peer.send(message(3, "tasks/result", {"taskId": task["taskId"]}))
            result = (await peer.answer_to(3))["result"]
            assert result["content"] == [{"type": "text", "text": "report for Q3"}]
            del params["task"]
            await peer.send(message(4, "tools/call", params))
            assert (await peer.answer_to(4))["result"]["content"] == result["content"]

    run(scenario())


def run_report_client(block: Block, *_: Any) -> None:
    """The client follows the reports server's task to its text, in both eras."""
    (server,) = [b for b in doc_blocks.all_blocks() if b.file == "reports.py"]
    app = namespace_of(server, quick(server))["app"]
    report = namespace_of(block)["report"]

    async def both_eras() -> list[str]:
        said = []
        for mode in BOTH_ERAS:
            async with connect(app.server, mode=mode) as client:
                said.append(await report(client))
        return said

    assert run(both_eras()) == ["report for Q3"] * 2


RUNNERS: dict[str, Callable[..., None]] = {
    "exec": run_exec,
    "low-level": run_low_level,
    "protected-server": run_protected_server,
    "reports-task": run_reports_task,
    "report-client": run_report_client,
}


@pytest.mark.parametrize(
    "block", doc_blocks.run_by("test_docs"), ids=lambda block: f"{block.where}-{block.runner}"
)
def test_the_block_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    assert block.runner is not None
    RUNNERS[block.runner](block, tmp_path, monkeypatch, capsys)
