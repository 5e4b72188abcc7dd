"""``mcpgen new``: the project it writes, read as a stranger would read it, run in this
process's environment, and installed and run as its users would (that last test builds a
virtual environment; the others render into a temporary directory and need none).

The fast tests render every variant in process: no schema is needed (the bindings come
from those mcpgen installs), every file lints clean, the README is clean Markdown. Those
marked slow run projects as processes."""

from __future__ import annotations

import asyncio
import functools
import io
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import venv
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import black
from black.files import infer_target_version
import httpx
import msgspec
import pytest
from pyflakes.api import check as pyflakes_check
from pyflakes.reporter import Reporter

from support import messages
from support.checkout import MIRROR, ROOT
from support.scaffolds import grow, markdown_problems
from mcpgen.generator import scaffold
from mcpgen.generator.errors import GeneratorError, SchemaError
from mcpgen.generator.fetch import SOURCE_ENV
from mcpgen.generator.pins import module_name
from mcpgen.generator.pipeline import bundled_root

NAME, PACKAGE = "demo-server", "demo_server"
#: The notice every generated module of the vendored bindings carries.
SPEC_NOTICE = "Model Context Protocol a Series of LF"
#: Tests the project's own suite holds with both transports: three in-memory tests, each
#: in both eras, then one stdio and one HTTP run.
OWN_TESTS = 8
TIMEOUT = 30
#: A legacy ``initialize``, answered by any project.
INITIALIZE = messages.initialize()
#: Every ``--transport`` choice (``mcpgen new --help``): alone, in sets, in either order.
TRANSPORT_CHOICES = (
    "stdio",
    "http",
    "websocket",
    "both",
    "all",
    "http,websocket",
    "websocket,stdio",
)


def mcpgen_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m mcpgen ...`` as a separate process."""
    return subprocess.run(
        [sys.executable, "-m", "mcpgen", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="module")
def projects(
    tmp_path_factory: pytest.TempPathFactory, generated: dict[str, ModuleType]
) -> dict[str, Path]:
    """A project per ``--transport`` choice, rendered in this process."""
    made = {}
    for transport in ("stdio", "http", "both", "websocket", "all"):
        where = tmp_path_factory.mktemp(f"scaffold-{transport}") / NAME
        made[transport] = scaffold.new_project(NAME, transport=transport, directory=where)
    return made


@pytest.fixture(scope="module")
def auth_project(
    tmp_path_factory: pytest.TempPathFactory, generated: dict[str, ModuleType]
) -> Path:
    """``mcpgen new --transport both --auth``: protected over HTTP."""
    where = tmp_path_factory.mktemp("scaffold-auth") / NAME
    return scaffold.new_project(NAME, transport="both", directory=where, auth=True)


def files_of(project: Path) -> Iterator[Path]:
    """The files under ``project``, Python's caches left out."""
    return (p for p in sorted(project.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)


def code_lines(readme: str) -> list[str]:
    """The commands of a README: its indented code blocks, comments left out."""
    lines = []
    for line in readme.splitlines():
        if line.startswith("    ") and line.strip():
            command = line.strip().split("  #", 1)[0].strip()
            lines.append(command)
    return lines


# -- fast: rendered into a temporary directory ----------------------------------------------


def test_a_failed_scaffold_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: dict[str, ModuleType]
) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[Path]:
        raise RuntimeError("disk full")

    monkeypatch.setattr(scaffold, "vendor_bindings", broken)
    with pytest.raises(RuntimeError):
        scaffold.new_project("half-done", directory=tmp_path / "half-done")
    assert list(tmp_path.iterdir()) == []


def test_bad_names_and_taken_directories_are_refused_in_one_line(
    tmp_path: Path, generated: dict[str, ModuleType]
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("mine")
    cases: list[dict[str, Any]] = [
        {"name": "9lives"},
        {"name": "json"},
        {"name": "bad name"},
        {"name": "ok-name", "transport": "pigeon"},
        {"name": "ok-name", "transport": "http,pigeon"},
        {"name": "ok-name", "transport": ","},
        {"name": "taken", "directory": taken},
    ]
    for case in cases:
        with pytest.raises(GeneratorError) as refused:
            scaffold.new_project(**case)
        line = refused.value.one_line()
        assert "\n" not in line and "hint:" in line, line
    assert (taken / "file").read_text() == "mine"


def test_the_runtime_version_range_follows_the_running_mcpgen() -> None:
    assert scaffold.compatible_range("0.1.0") == ">=0.1.0,<0.2"
    assert scaffold.compatible_range("0.3.2.dev4+g1234") == ">=0.3.2.dev4,<0.4"
    assert scaffold.compatible_range("1.4.2") == ">=1.4.2,<2"
    assert scaffold.compatible_range("unknown") == ">=0.1"
    running = metadata.version("mcpgen")
    assert scaffold.running_version() == running
    assert scaffold.mcpgen_requirement(False) == f"mcpgen{scaffold.compatible_range(running)}"
    assert scaffold.mcpgen_requirement(True, "0.1.0") == "mcpgen[http]>=0.1.0,<0.2"
    websocket = scaffold.mcpgen_requirement(False, "0.1.0", websocket=True)
    assert websocket == "mcpgen[http,websocket]>=0.1.0,<0.2"


def no_schemas_and_no_network(monkeypatch: pytest.MonkeyPatch, empty: Path) -> None:
    """As on a machine where mcpgen was installed from its wheel and nothing was ever
    fetched: an empty schema directory, no source named, and no connection possible."""
    monkeypatch.setenv("MCPGEN_SCHEMA_DIR", str(empty))
    monkeypatch.delenv(SOURCE_ENV, raising=False)

    def offline(*args: Any, **kwargs: Any) -> None:
        raise OSError("no network in this test")

    monkeypatch.setattr("socket.socket.connect", offline)
    monkeypatch.setattr("socket.create_connection", offline)


def test_new_needs_no_schema_the_installed_bindings_are_vendored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: dict[str, ModuleType]
) -> None:
    """With no schema fetched and no network, ``mcpgen new`` vendors copies of the bindings
    mcpgen installs (every version), and what it says of a version's tool results comes
    from them: structured content where ``CallToolResult`` has the field, else text."""
    no_schemas_and_no_network(monkeypatch, tmp_path / "empty")
    versions = scaffold.Inputs.load().pins.ordered()
    project = scaffold.new_project(NAME, versions, "both", tmp_path / NAME)
    vendored = project / PACKAGE / "mcp"
    for version in versions:
        installed = bundled_root() / module_name(version)
        for module in ("__init__", "types", "methods", "server", "client"):
            copy = vendored / module_name(version) / f"{module}.py"
            assert copy.read_bytes() == (installed / f"{module}.py").read_bytes(), copy
    index = (vendored / "__init__.py").read_text()
    assert all(f'"{v}": "{module_name(v)}"' in index for v in versions)
    for version, expected in (("2024-11-05", False), ("2025-11-25", True)):
        fields = msgspec.structs.fields(generated[version].ROLES["CallToolResult"])
        assert any(f.encode_name == "structuredContent" for f in fields) is expected
        files = scaffold.render_project(NAME, [version])
        tests = files["tests/test_server.py"]
        assert ('structured_content == {"result": 5}' in tests) is expected, version


def test_versions_mcpgen_does_not_install_are_named_in_one_error_with_one_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: dict[str, ModuleType]
) -> None:
    """Versions pinned again at another commit (or pinned since mcpgen was built) are
    generated from their schemas: when they are not fetched, one error names every one
    and the command fetching them all, and nothing is written; then a project of the
    versions mcpgen installs is made as usual."""
    no_schemas_and_no_network(monkeypatch, tmp_path / "empty")
    inputs = scaffold.Inputs.load()
    repinned = ["2025-06-18", "2026-07-28"]
    for version in repinned:
        pin = inputs.pins.versions[version]
        inputs.pins.versions[version] = msgspec.structs.replace(pin, commit="0123456789ab" * 3)
    chosen = ["2025-03-26", *repinned]
    with pytest.raises(SchemaError) as refused:
        scaffold.new_project(NAME, chosen, "both", tmp_path / NAME, inputs=inputs)
    line = refused.value.one_line()
    assert line.startswith("2025-06-18, 2026-07-28: no bindings installed"), line
    assert "`mcpgen schema fetch --version 2025-06-18,2026-07-28`" in line, line
    assert "2025-03-26" not in line
    assert list(tmp_path.iterdir()) == []
    made = scaffold.new_project(NAME, ["2025-03-26"], "both", tmp_path / NAME)
    assert (made / PACKAGE / "mcp" / "v2025_03_26" / "types.py").is_file()


#: ``--versions`` sets of every kind: one legacy version (no structured results, invalid
#: arguments a JSON-RPC error), two legacy ones, both eras, the modern era alone, draft.
VERSION_SETS = (
    ("2024-11-05",),
    ("2025-03-26", "2025-06-18"),
    ("2025-11-25", "2026-07-28"),
    ("2026-07-28",),
    ("draft",),
)


@functools.cache
def variants() -> dict[str, dict[str, str]]:
    """Every ``--transport`` choice, with and without ``--auth`` (where it has HTTP), each
    with one of the version sets in turn (every set with several transports): the files
    each renders, by a label naming its options."""
    made = {}
    choices = [
        (transport, auth)
        for transport, auth in itertools.product(TRANSPORT_CHOICES, (False, True))
        if not auth or "http" in scaffold.transports_of(transport)
    ]
    for i, (transport, auth) in enumerate(choices):
        versions = VERSION_SETS[i % len(VERSION_SETS)]
        label = f"--transport {transport} --versions {','.join(versions)}"
        label += " --auth" if auth else ""
        made[label] = scaffold.render_project(NAME, versions, transport, auth)
    return made


def test_every_variant_of_the_scaffold_lints_clean(generated: dict[str, ModuleType]) -> None:
    """What a user's CI would say of the project: black (as it reads the project's own
    configuration: its defaults, for the Python versions the project supports) leaves
    every module as it is, and pyflakes finds nothing (no unused import or variable, no
    undefined name), in every variant; the pyproject.toml is valid TOML."""
    tomllib = pytest.importorskip("tomllib")
    supported = infer_target_version({"project": {"requires-python": ">=3.10"}})
    assert supported
    mode = black.Mode(target_versions=set(supported))
    modules: dict[tuple[str, str], list[str]] = {}  # (path, text) → the variants rendering it
    for label, files in variants().items():
        config = tomllib.loads(files["pyproject.toml"])
        assert config["tool"]["black"]["extend-exclude"] == f"^/{PACKAGE}/mcp/"
        assert infer_target_version(config) == supported
        for path, text in files.items():
            if path.endswith(".py"):
                modules.setdefault((path, text), []).append(label)
    found = []
    for (path, text), labels in modules.items():
        if black.format_str(text, mode=mode) != text:
            found.append(f"{labels[0]}: {path}: black would reformat it")
        said = io.StringIO()
        if pyflakes_check(text, path, Reporter(said, said)):
            found.append(f"{labels[0]}: {said.getvalue().strip()}")
    assert len(variants()) >= 11
    assert found == []


def test_every_variant_of_the_readme_is_clean_markdown(generated: dict[str, ModuleType]) -> None:
    """Headings, lists, paragraphs and code blocks of every variant's README as a Markdown
    renderer reads them: nothing glued to the line before, no template left over."""
    problems = {}
    for label, files in variants().items():
        found = markdown_problems(files["README.md"])
        if found:
            problems[label] = found
    assert problems == {}
    (readme,) = [
        files["README.md"]
        for label, files in variants().items()
        if label.startswith("--transport both ") and label.endswith(" --auth")
    ]
    assert "\n\n## Change it\n" in readme
    assert "\n- `demo_server/__main__.py`: the command line.\n- `demo_server/protection" in readme


def test_the_markdown_check_finds_what_a_template_tag_glues() -> None:
    """The check above, on a README whose template tags ate line ends: a paragraph's end
    glued to the next one, a heading right under a paragraph, list items in one line."""
    broken = (
        "# demo\n\n## Test\n\nIt runs over HTTP.`tests/x.py` checks it.\n## Change it\n\n"
        "- `a.py`: the command line.- `b.py`: the bindings.\n"
    )
    found = markdown_problems(broken)
    assert [problem.split(":")[0] for problem in found] == ["line 5", "line 6", "line 8"], found
    assert (
        markdown_problems(
            broken.replace(".`", ".\n`").replace(".- ", ".\n- ").replace(".\n## ", ".\n\n## ")
        )
        == []
    )


@pytest.mark.slow
def test_the_project_requires_mcpgen_by_name(projects: dict[str, Path]) -> None:
    tomllib = pytest.importorskip("tomllib")
    expected = scaffold.compatible_range(metadata.version("mcpgen"))
    for transport, project in projects.items():
        config = tomllib.loads((project / "pyproject.toml").read_text())
        extra = {"stdio": "", "http": "[http]", "both": "[http]"}.get(transport, "[http,websocket]")
        assert config["project"]["dependencies"] == [f"mcpgen{extra}{expected}"]
        optional = config["project"]["optional-dependencies"]
        assert optional["generator"] == ["mcpgen[generator]"]  # the version: as above
        assert config["project"]["scripts"] == {NAME: f"{PACKAGE}.__main__:main"}


@pytest.mark.slow
def test_no_file_names_a_path_of_this_machine(
    projects: dict[str, Path], auth_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    machine = {str(ROOT), str(ROOT.resolve()), str(base), str(base.resolve())}
    if len(Path.home().parts) > 1:
        machine.add(str(Path.home()))
    for project in [*projects.values(), auth_project]:
        for path in files_of(project):
            text = path.read_bytes().decode()
            for where in machine:  # the path itself, not a longer name it begins
                assert not re.search(re.escape(where) + r"(?![\w.-])", text), (path, where)
            if "mcp" not in path.relative_to(project).parts:  # the spec's text says file://
                assert "file:" not in text, path


@pytest.mark.slow
def test_gitignore_notice_and_the_notice_in_every_generated_module(
    projects: dict[str, Path],
) -> None:
    project = projects["both"]
    ignored = (project / ".gitignore").read_text().split()
    for pattern in (".venv/", "__pycache__/", "build/", "dist/", "*.egg-info/", ".pytest_cache/"):
        assert pattern in ignored
    notice = " ".join((project / "NOTICE").read_text().split())
    for said in (f"{PACKAGE}/mcp/", f"Copyright (c) 2024-2025 {SPEC_NOTICE} Projects, LLC"):
        assert said in notice
    assert "Apache License, Version 2.0" in notice and "MIT License" in notice
    vendored = project / PACKAGE / "mcp"
    modules = [vendored / "__init__.py"]
    for version in scaffold.default_versions(scaffold.Inputs.load()):
        folder = vendored / module_name(version)
        modules += [folder / f"{name}.py" for name in ("types", "methods", "server", "client")]
    for module in modules:
        assert SPEC_NOTICE in module.read_text(), module


@pytest.mark.slow
def test_every_readme_command_names_what_the_project_has(
    projects: dict[str, Path], auth_project: Path
) -> None:
    tomllib = pytest.importorskip("tomllib")
    for transport, project in [*projects.items(), ("both", auth_project)]:
        readme = (project / "README.md").read_text()
        assert "](" not in readme and "https://github.com/" not in readme  # no links
        config = tomllib.loads((project / "pyproject.toml").read_text())
        scripts = set(config["project"]["scripts"])
        extras = set(config["project"]["optional-dependencies"])
        commands = code_lines(readme)
        assert commands[:2] == ["python3 -m venv .venv", ".venv/bin/pip install -e '.[test]'"]
        assert ".venv/bin/pytest" in commands
        for command in commands:
            words = shlex.split(command)
            program = words[0]
            if program.startswith(".venv/bin/"):
                assert program[len(".venv/bin/") :] in {"pip", "pytest", "mcpgen", *scripts}
            for word in words:
                wanted = re.fullmatch(r"\.\[([\w,]+)\]", word)
                if wanted:
                    assert set(wanted.group(1).split(",")) <= extras, command
            if "--package" in words:
                package = words[words.index("--package") + 1]
                out = words[words.index("--out") + 1]
                assert (project / out / package.replace(".", "/") / "__init__.py").is_file()
            if "--version" in words:
                for version in words[words.index("--version") + 1].split(","):
                    assert (project / PACKAGE / "mcp" / module_name(version)).is_dir()
        serving = [c for c in commands if c.startswith(f".venv/bin/{NAME}")]
        assert (f".venv/bin/{NAME}" in serving) == (transport in ("stdio", "both", "all"))
        http_line = f".venv/bin/{NAME} --transport http --port 3001"
        assert (http_line in serving) == (transport in ("http", "both", "all"))
        websocket_line = f".venv/bin/{NAME} --transport websocket --port 3001"
        assert (websocket_line in serving) == (transport in ("websocket", "all"))
        # Files and folders named in backquotes exist.
        for named in re.findall(r"`([\w./]+/[\w./]*)`", readme):
            if not named.startswith(".venv/"):
                assert (project / named).exists(), named
        assert "DIR" in readme and "make dist" in readme  # the offline install
        assert "mcpgen[generator]" in readme


#: Run in a separate interpreter with the project importable: its server, through the
#: in-memory client in both eras.
IN_MEMORY = textwrap.dedent("""
    import asyncio, json, sys
    import msgspec
    from demo_server.server import app
    from demo_server.mcp.{typed} import types as t

    async def main() -> None:
        seen = {{}}
        for mode in ("legacy", "auto"):
            async with app.test_client(mode=mode) as client:
                tools = (await client.list_tools()).tools
                called = await client.call_tool(name="add", arguments={{"a": 2, "b": 3}})
                bad = await client.call_tool(name="add", arguments={{"a": "x", "b": 1}})
                templates = (await client.list_resource_templates()).resource_templates
                read = await client.read_resource(uri="demo-server://greetings/Ada")
                about = await client.read_resource(
                    uri=(await client.list_resources()).resources[0].uri
                )
                prompt = await client.get_prompt(name="explain", arguments={{"topic": "x"}})
                done = await client.complete(
                    ref=t.PromptReference(name="explain"),
                    argument=t.CompleteRequestParamsArgument(name="topic", value="re"),
                )
                seen[mode] = msgspec.to_builtins({{
                    "version": client.protocol_version,
                    "tools": tools,
                    "called": called.structured_content,
                    "bad": [bad.is_error, bad.content[0].text],
                    "templates": templates,
                    "read": read.contents,
                    "about": about.contents,
                    "prompt": prompt.messages,
                    "completion": done.completion.values,
                }})
        print(json.dumps(seen))

    asyncio.run(asyncio.wait_for(main(), 30))
    """)


def in_project(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Python in a separate process, the project importable (never in this one)."""
    env = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [sys.executable, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_rendered_server_serves_every_kind_in_both_eras(projects: dict[str, Path]) -> None:
    project = projects["both"]
    typed = module_name(max(scaffold.default_versions(scaffold.Inputs.load())))
    ran = in_project(project, "-c", IN_MEMORY.format(typed=typed))
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = json.loads(ran.stdout)
    assert [seen[mode]["version"] for mode in ("legacy", "auto")] == ["2025-11-25", "2026-07-28"]
    for mode, answers in seen.items():
        (tool,) = answers["tools"]
        assert tool["name"] == "add" and tool["description"] == "Add two integers.", mode
        assert tool["inputSchema"]["required"] == ["a", "b"]
        assert tool["inputSchema"]["properties"]["a"]["type"] == "integer"
        assert tool["outputSchema"]["properties"] == {"result": {"type": "integer"}}
        assert answers["called"] == {"result": 5}
        assert answers["bad"][0] is True and "$.a" in answers["bad"][1]
        (template,) = answers["templates"]
        assert template["uriTemplate"] == "demo-server://greetings/{name}"
        assert answers["read"][0]["text"] == "Hello, Ada!"
        assert answers["about"][0]["mimeType"] == "text/plain"
        assert answers["prompt"][0]["content"]["text"].startswith("Explain x")
        assert answers["completion"] == ["resources"]


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http", "both", "websocket", "all"])
def test_the_projects_own_tests_pass_in_this_environment(
    projects: dict[str, Path], transport: str
) -> None:
    """Its tests, in-memory, stdio, HTTP (Streamable and HTTP+SSE) and WebSocket runs
    included, against this checkout's mcpgen."""
    ran = in_project(projects[transport], "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert ran.returncode == 0, ran.stdout[-3000:]
    expected = {"stdio": 7, "http": 7, "both": OWN_TESTS, "websocket": 7, "all": 9}[transport]
    assert f"{expected} passed" in ran.stdout, ran.stdout[-500:]


@pytest.mark.slow
def test_the_projects_own_tests_pass_after_a_user_adds_tools_a_template_and_a_prompt(
    projects: dict[str, Path], tmp_path: Path
) -> None:
    """The tests look up what they check by name: three more tools, a resource template
    and a prompt added to ``server.py`` leave every one of them passing."""
    project = tmp_path / NAME
    shutil.copytree(projects["both"], project)
    grow(project, PACKAGE, "demo-server")
    ran = in_project(project, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert f"{OWN_TESTS} passed" in ran.stdout, ran.stdout[-500:]
    listed = in_project(
        project,
        "-c",
        "import asyncio; from demo_server.server import app\n"
        "async def main():\n"
        "    async with app.test_client() as client:\n"
        "        print(len((await client.list_tools()).tools))\n"
        "asyncio.run(main())",
    )
    assert listed.stdout.split() == ["4"], listed.stderr[-2000:]


@pytest.mark.slow
def test_a_whole_project_lints_clean_as_its_user_runs_the_tools(
    projects: dict[str, Path], auth_project: Path
) -> None:
    """``black --check .`` and ``pyflakes .`` in the project's directory, as its CI would
    run them: black reads the project's configuration (which leaves the generated
    bindings to ``mcpgen generate``), pyflakes reads everything, bindings included."""
    for project in (projects["all"], auth_project):
        for tool in (["black", "--check", "."], ["pyflakes", "."]):
            ran = subprocess.run(
                [sys.executable, "-m", *tool],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert ran.returncode == 0, (project, tool, ran.stdout[-2000:], ran.stderr[-2000:])


@pytest.mark.slow
def test_the_command_line_checks_its_options_and_serves_the_hosts_it_allows(
    projects: dict[str, Path],
) -> None:
    """``--port`` outside 0-65535 and an ``--allow-host``/``--allow-origin`` that is no
    host or origin are usage errors naming the option; then the server, run with
    ``--allow-host``, serves a request for that host, refuses (403) one for another and
    logs the refused host with the option that would allow it."""
    project = projects["both"]
    for options, said in [
        (["--port", "99999"], "argument --port: 99999 is not a port (0 to 65535)"),
        (["--port", "-1"], "argument --port: -1 is not a port (0 to 65535)"),
        (["--port", "http"], "argument --port: invalid port value: 'http'"),
        (["--allow-host", "bad host"], "allowed host 'bad host' is not a host[:port]"),
        (["--allow-origin", "evil.example"], "allowed origin 'evil.example' is not a"),
    ]:
        ran = in_project(project, "-m", PACKAGE, "--transport", "http", *options)
        assert ran.returncode == 2, (options, ran.stderr)
        assert said in ran.stderr and ran.stderr.startswith("usage:"), (options, ran.stderr)

    async def scenario() -> tuple[int, int, str]:
        env = {**os.environ, "PYTHONPATH": str(project)}
        options = ["--transport", "http", "--port", "0", "--allow-host", "mcp.example.test"]
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            PACKAGE,
            *options,
            cwd=project,
            env=env,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert server.stderr is not None
            found = None
            while found is None:
                line = await asyncio.wait_for(server.stderr.readline(), 20)
                assert line, "the server stopped before serving"
                found = re.search(r"http://\S+", line.decode())
            url = found.group()
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            headers = {"accept": "application/json, text/event-stream"}
            async with httpx.AsyncClient(timeout=20) as http:
                refused = await http.post(url, json=body, headers={**headers, "host": "evil.test"})
                allowed = await http.post(
                    url, json=INITIALIZE, headers={**headers, "host": "mcp.example.test"}
                )
            logged = await asyncio.wait_for(server.stderr.readline(), 20)
            return refused.status_code, allowed.status_code, logged.decode()
        finally:
            if server.returncode is None:
                server.terminate()
            await asyncio.wait_for(server.wait(), 20)

    refused, allowed, logged = asyncio.run(scenario())
    assert (refused, allowed) == (403, 200)
    assert "Host 'evil.test'" in logged and "--allow-host evil.test" in logged, logged


@pytest.mark.slow
def test_the_auth_project_needs_the_auth_extra_and_its_tests_pass(auth_project: Path) -> None:
    """``--auth``: mcpgen[http,auth]; protection.py from the environment; its own tests
    (in memory in both eras, stdio, and the protection: in process and over HTTP as a
    process with tokens signed here) pass against this checkout's mcpgen."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((auth_project / "pyproject.toml").read_text())
    expected = scaffold.compatible_range(metadata.version("mcpgen"))
    assert config["project"]["dependencies"] == [f"mcpgen[http,auth]{expected}"]
    protection = (auth_project / PACKAGE / "protection.py").read_text()
    for variable in (
        "MCP_AUTH_ISSUER",
        "MCP_AUTH_AUDIENCE",
        "MCP_AUTH_JWKS_URL",
        "MCP_AUTH_SCOPES",
    ):
        assert variable in protection and variable in (auth_project / "README.md").read_text()
    ran = in_project(auth_project, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert "11 passed" in ran.stdout, ran.stdout[-500:]
    unprotected = in_project(auth_project, "-m", PACKAGE, "--transport", "http")
    assert unprotected.returncode == 2 and "MCP_AUTH_ISSUER" in unprotected.stderr


@pytest.mark.slow
def test_auth_without_http_is_refused_in_one_line(tmp_path: Path) -> None:
    ran = mcpgen_cli("new", NAME, "--auth", "--dir", str(tmp_path / "p"), cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith("error: --auth protects the HTTP transport")
    assert not (tmp_path / "p").exists()


#: ``mcpgen`` where the generator extra's own dependencies are missing but click is there
#: (uvicorn, of the ``http`` extra, brings it): the scaffold's venv before ``.[generator]``.
WITHOUT_GENERATOR = textwrap.dedent("""
    import sys

    class Missing:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {"jinja2", "black", "datamodel_code_generator"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Missing())
    sys.argv[0] = "mcpgen"
    from mcpgen.generator.entry import main

    main()
    """)


@pytest.mark.slow
def test_regenerating_without_the_generator_extra_fails_in_one_line_naming_it(
    projects: dict[str, Path],
) -> None:
    project = projects["both"]
    commands = code_lines((project / "README.md").read_text())
    (regenerate,) = [c for c in commands if c.startswith(".venv/bin/mcpgen generate")]
    arguments = shlex.split(regenerate)[1:]
    ran = in_project(project, "-c", WITHOUT_GENERATOR, *arguments)
    assert ran.returncode == 2, ran.stderr[-2000:]
    (line,) = ran.stderr.strip().splitlines()
    assert line.startswith("error: ") and "mcpgen[generator]" in line, line


# -- slow: installed into a fresh virtual environment ---------------------------------------


def shell(command: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """A README command, run as pasted (the schemas come from the test mirror)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["MCPGEN_SCHEMA_SOURCE"] = str(MIRROR)
    return subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_new_project_installs_serves_and_passes_its_tests(tmp_path: Path, fetched: Path) -> None:
    """Scaffold with both transports; install this checkout's mcpgen, then the project as its
    README says, into the project's own ``.venv``; call its tool with the official SDK
    client over stdio (legacy and default mode); run its tests as the README says; and
    regenerate its bindings with the README's commands."""
    made = mcpgen_cli("new", NAME, "--transport", "both", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / NAME
    commands = code_lines((project / "README.md").read_text())
    venv.create(project / ".venv", with_pip=True)  # as `python3 -m venv .venv`, this Python
    checkout = shell(f".venv/bin/pip install -q -e '{ROOT}[http]'", project)
    assert checkout.returncode == 0, checkout.stderr[-2000:]
    install = shell(commands[1], project)  # .venv/bin/pip install -e '.[test]'
    assert install.returncode == 0, install.stderr[-2000:]
    script = project / ".venv" / "bin" / NAME
    assert script.exists()

    async def sdk_client() -> list[str]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=str(script), args=[])
        spoken = []
        for mode in ("legacy", None):
            options: dict[str, Any] = {} if mode is None else {"mode": mode}
            with anyio.fail_after(TIMEOUT):
                async with Client(params, **options) as client:
                    tools = await client.list_tools()
                    assert [t.name for t in tools.tools] == ["add"]
                    called = await client.call_tool("add", {"a": 2, "b": 3})
                    assert not called.is_error and called.structured_content == {"result": 5}
                    wrong = await client.call_tool("add", {"a": "x", "b": 1})
                    assert wrong.is_error
                    spoken.append(mode or "default")
        return spoken

    assert anyio.run(sdk_client) == ["legacy", "default"]

    own = shell(".venv/bin/pytest", project, timeout=300)
    assert own.returncode == 0, own.stdout[-3000:]
    assert re.search(rf"\b{OWN_TESTS} passed\b", own.stdout), own.stdout[-500:]
    assert "failed" not in own.stdout and "skipped" not in own.stdout

    # Regenerating: the README's commands reproduce the vendored bindings byte for byte.
    vendored = project / PACKAGE / "mcp"
    before = {p.relative_to(vendored): p.read_bytes() for p in files_of(vendored)}
    start = commands.index(".venv/bin/pip install -e '.[generator]'")
    for command in commands[start:]:
        done = shell(command, project)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    after = {p.relative_to(vendored): p.read_bytes() for p in files_of(vendored)}
    assert after == before


@pytest.mark.slow
def test_uvicorn_serves_the_scaffolded_app_as_it_is(projects: dict[str, Path]) -> None:
    """``uvicorn demo_server.server:app``: the ``App`` a project defines is an ASGI
    application itself, so the way users run any ASGI app serves it."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    project = projects["http"]
    env = {**os.environ, "PYTHONPATH": str(project)}
    command = [sys.executable, "-m", "uvicorn", f"{PACKAGE}.server:app", "--port", str(port)]
    server = subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        },
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    listed = json.loads(answer.read())
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()[-2000:]  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "uvicorn never answered"
                time.sleep(0.2)
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["add"]
    finally:
        server.terminate()
        server.wait(timeout=10)
