"""Schema acquisition: verified copies from a mirror or URL, one-line errors, no half-writes."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from support.cli_runner import Ran, mcpgen
from support.checkout import MIRROR, PINS
from support.processes import free_port
from mcpgen.generator import fetch as fetch_module
from mcpgen.generator.errors import SchemaError, UsageError
from mcpgen.generator.fetch import (
    SOURCE_ENV,
    DirSource,
    UrlSource,
    add_pin,
    fetch,
    is_fetched,
    make_source,
    manifest_commits,
)
from mcpgen.generator.pins import PINS_FILE, Pin, Pins, load_pins, schema_dir

SMALL = "2024-11-05"  # one file: quick to copy
WITH_EXAMPLES = "2026-07-28"


def mirror_copy(tmp_path: Path, *versions: str) -> Path:
    root = tmp_path / "mirror"
    for v in versions:
        shutil.copytree(MIRROR / v, root / v)
    return root


def run_cli(*args: str, schema_dir: Path, cwd: Path | None = None) -> Ran:
    return mcpgen(
        *args, env={"MCPGEN_SCHEMA_DIR": str(schema_dir), "MCPGEN_SCHEMA_SOURCE": None}, cwd=cwd
    )


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


def test_fetch_from_a_mirror_verifies_every_file(tmp_path: Path) -> None:
    dest = tmp_path / "schema"
    outcome = fetch([SMALL, WITH_EXAMPLES], DirSource(MIRROR), PINS, dest)
    assert outcome == {SMALL: "fetched", WITH_EXAMPLES: "fetched"}
    assert is_fetched(WITH_EXAMPLES, PINS, dest)
    assert len(list((dest / WITH_EXAMPLES / "examples").rglob("*.json"))) == 129
    assert fetch([SMALL], DirSource(MIRROR), PINS, dest) == {SMALL: "up to date"}
    assert leftovers(dest) == []


def test_checksum_mismatch_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path, SMALL, WITH_EXAMPLES)
    example = next((mirror / WITH_EXAMPLES / "examples").rglob("*.json"))
    example.write_bytes(example.read_bytes().replace(b"{", b"{ ", 1))
    dest = tmp_path / "schema"
    with pytest.raises(SchemaError) as info:
        fetch([SMALL, WITH_EXAMPLES], DirSource(mirror), PINS, dest)
    message = info.value.one_line()
    assert str(example) in message and "sha256 mismatch" in message and "\n" not in message
    # the good version fetched first was not swapped in either: all or nothing
    assert not (dest / SMALL).exists() and not (dest / WITH_EXAMPLES).exists()
    assert leftovers(dest) == []


def test_a_failed_refetch_keeps_the_previous_files(tmp_path: Path) -> None:
    dest = tmp_path / "schema"
    fetch([SMALL], DirSource(MIRROR), PINS, dest)
    before = (dest / SMALL / "schema.json").read_bytes()
    (dest / SMALL / "schema.json").write_bytes(before + b" ")  # local copy damaged
    broken = mirror_copy(tmp_path, SMALL)
    (broken / SMALL / "schema.json").write_text("{}")
    with pytest.raises(SchemaError):
        fetch([SMALL], DirSource(broken), PINS, dest)
    assert (dest / SMALL / "schema.json").read_bytes() == before + b" "
    fetch([SMALL], DirSource(MIRROR), PINS, dest)  # and it still works afterwards
    assert is_fetched(SMALL, PINS, dest)


def test_missing_file_and_unknown_version(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path, WITH_EXAMPLES)
    victim = sorted((mirror / WITH_EXAMPLES / "examples").rglob("*.json"))[3]
    victim.unlink()
    with pytest.raises(SchemaError, match="file missing from mirror") as info:
        fetch([WITH_EXAMPLES], DirSource(mirror), PINS, tmp_path / "schema")
    assert str(victim) in info.value.message
    with pytest.raises(UsageError, match="unknown protocol version '1999-01-01'"):
        PINS.select("1999-01-01")
    with pytest.raises(UsageError):
        make_source(str(tmp_path / "no-such-dir"), PINS)


def test_a_relative_mirror_path_is_taken_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$MCPGEN_SCHEMA_SOURCE=../mirror`` (or ``--from ../mirror``) names the directory
    from where it is read, once: the source keeps that directory when the process moves
    on, and from somewhere the path leads nowhere the error names where it looked."""
    mirror = mirror_copy(tmp_path, SMALL).resolve()
    work = tmp_path / "work"
    deeper = work / "deeper"
    deeper.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv(SOURCE_ENV, "../mirror")
    source = make_source(None, PINS)
    assert isinstance(source, DirSource) and source.root == mirror
    from_option = make_source("../mirror", PINS)
    assert isinstance(from_option, DirSource) and from_option.root == mirror
    monkeypatch.chdir(deeper)
    assert fetch([SMALL], source, PINS, tmp_path / "schema") == {SMALL: "fetched"}
    for spec, named in ((None, "$MCPGEN_SCHEMA_SOURCE"), ("../mirror", "--from")):
        with pytest.raises(UsageError) as info:
            make_source(spec, PINS)
        message = info.value.message
        assert message.startswith(f"{work.resolve() / 'mirror'}: not a directory"), message
        assert f"{named}=../mirror" in message and str(deeper.resolve()) in message, message
        assert "absolute path" in info.value.hint


def test_malformed_json_is_reported_even_when_the_hash_matches(tmp_path: Path) -> None:
    garbage = b'{"$defs": {'
    mirror = tmp_path / "mirror" / "9999-01-01"
    mirror.mkdir(parents=True)
    (mirror / "schema.json").write_bytes(garbage)
    pins = Pins(
        upstream=PINS.upstream,
        versions={
            "9999-01-01": Pin(
                commit="0" * 40,
                era="modern",
                dialect="2020-12",
                files={"schema.json": hashlib.sha256(garbage).hexdigest()},
            )
        },
    )
    with pytest.raises(SchemaError, match="malformed JSON"):
        fetch(["9999-01-01"], DirSource(mirror.parent), pins, tmp_path / "schema")


#: Seconds between the checks a test HTTP server makes for being shut down.
POLL = 0.01


@pytest.fixture
def http_mirror() -> Iterator[str]:
    """The mirror served over HTTP on loopback for the duration of one test."""
    handler = functools.partial(_QuietHandler, directory=str(MIRROR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the loop's next poll: poll often, so each test ends at once
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_fetch_over_http_and_unreachable_url(tmp_path: Path, http_mirror: str) -> None:
    dest = tmp_path / "schema"
    assert fetch([WITH_EXAMPLES], UrlSource(PINS, base=http_mirror), PINS, dest) == {
        WITH_EXAMPLES: "fetched"
    }
    with pytest.raises(SchemaError, match="not found") as info:
        UrlSource(PINS, base=http_mirror).read("1999-01-01", "schema.json")
    assert "1999-01-01/schema.json" in info.value.message
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SchemaError, match="unreachable") as info:
        fetch([SMALL], UrlSource(PINS, base=dead), PINS, tmp_path / "other")
    assert "--from DIR" in info.value.hint
    assert not (tmp_path / "other" / SMALL).exists()


def test_the_default_source_is_the_pinned_upstream_url() -> None:
    source = make_source(None, PINS) if not os.environ.get("MCPGEN_SCHEMA_SOURCE") else None
    url = UrlSource(PINS).url(SMALL, "schema.json")
    assert url == (
        "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/"
        f"{PINS.get(SMALL).commit}/schema/{SMALL}/schema.json"
    )
    assert source is None or isinstance(source, UrlSource)


def test_cli_errors_are_one_line_with_exit_codes_and_then_it_works(
    tmp_path: Path,
) -> None:
    dest = tmp_path / "schema"
    bad = mirror_copy(tmp_path, SMALL)
    (bad / SMALL / "schema.json").write_text('{"not": "the pinned file"}')
    cases = [
        (("schema", "fetch", "--version", "1999-01-01", "--from", str(MIRROR)), 2),
        (
            (
                "schema",
                "fetch",
                "--version",
                SMALL,
                "--from",
                str(tmp_path / "nowhere"),
            ),
            2,
        ),
        (("schema", "fetch", "--version", SMALL, "--from", str(bad)), 3),
        (
            (
                "schema",
                "fetch",
                "--version",
                SMALL,
                "--from",
                f"http://127.0.0.1:{free_port()}",
            ),
            3,
        ),
        (("generate", "--version", SMALL, "--package", "not a package"), 2),
    ]
    for args, code in cases:
        result = run_cli(*args, schema_dir=dest)
        assert result.returncode == code, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "hint:" in lines[0], lines
        assert "Traceback" not in result.stderr
    ok = run_cli("schema", "fetch", "--version", SMALL, "--from", str(MIRROR), schema_dir=dest)
    assert ok.returncode == 0, ok.stderr
    assert f"{SMALL}: fetched" in ok.stdout
    missing = run_cli(
        "generate",
        "--version",
        "2025-03-26",
        "--out",
        str(tmp_path),
        "--package",
        "x",
        schema_dir=dest,
    )
    assert missing.returncode == 3 and "mcpgen schema fetch --version 2025-03-26" in missing.stderr


def test_schema_add_pins_hashes_dialect_and_era(tmp_path: Path) -> None:
    pins_path = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins_path)
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "draft", mirror / "2099-01-01")
    pin = add_pin("2099-01-01", "abc1234", str(mirror), None, pins_path, tmp_path / "schema")
    assert pin.era == "modern" and pin.dialect == "2020-12" and len(pin.files) == 130
    saved = load_pins(pins_path)
    assert saved.get("2099-01-01").files == pin.files
    assert saved.ordered()[-2:] == ["2099-01-01", "draft"]
    assert is_fetched("2099-01-01", saved, tmp_path / "schema")
    shutil.copytree(MIRROR / "2024-11-05", mirror / "2098-01-01")
    assert (
        add_pin("2098-01-01", "abc1234", str(mirror), None, pins_path, tmp_path / "schema").era
        == "legacy"
    )
    with pytest.raises(UsageError):
        add_pin(
            "not-a-version",
            "abc1234",
            str(mirror),
            None,
            pins_path,
            tmp_path / "schema",
        )
    with pytest.raises(UsageError):
        add_pin("2097-01-01", "zz", str(mirror), None, pins_path, tmp_path / "schema")
    (mirror / "2096-01-01").mkdir()
    (mirror / "2096-01-01" / "schema.json").write_text("[1, 2")
    with pytest.raises(SchemaError, match="malformed JSON"):
        add_pin("2096-01-01", "abc1234", str(mirror), None, pins_path, tmp_path / "schema")
    # failures left the pins file as it was after the successful adds
    assert msgspec.json.decode(pins_path.read_bytes())["versions"].keys() == json.loads(
        msgspec.json.encode(saved)
    )["versions"].keys() | {"2098-01-01"}


def one_error_line(result: Ran, code: int) -> str:
    """The single ``error: ... (hint: ...)`` line a failed command printed (besides the
    indented progress lines of ``generate``)."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("  ")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "(hint: " in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def pinning(tmp_path: Path) -> tuple[Path, dict[str, str | None]]:
    """A copy of the pins and the environment of commands that use it and a private
    schema directory."""
    pins_path = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins_path)
    env: dict[str, str | None] = {
        "MCPGEN_PINS": str(pins_path),
        "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema"),
        "MCPGEN_SCHEMA_SOURCE": None,
    }
    return pins_path, env


def test_schema_add_refuses_to_repin_without_force(tmp_path: Path) -> None:
    pins_path, env = pinning(tmp_path)
    before = pins_path.read_bytes()
    current = PINS.get(SMALL).commit
    mirror = mirror_copy(tmp_path, SMALL)
    add = ("schema", "add", SMALL, "--commit", "abcdef1", "--from", str(mirror))
    line = one_error_line(mcpgen(*add, env=env), 5)
    assert SMALL in line and current in line and "--force" in line.split("hint:")[1], line
    assert pins_path.read_bytes() == before, "the pins file is unchanged, byte for byte"
    assert not (tmp_path / "schema").exists(), "nothing fetched"
    # the same commit again is a re-pin too
    again = ("schema", "add", SMALL, "--commit", current, "--from", str(mirror))
    one_error_line(mcpgen(*again, env=env), 5)
    assert pins_path.read_bytes() == before
    # and with --force it is re-pinned as asked
    forced = mcpgen(*add, "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.startswith(f"pinned {SMALL}: legacy era")
    saved = load_pins(pins_path)
    assert saved.get(SMALL).commit == "abcdef1"
    assert saved.get(SMALL).files == PINS.get(SMALL).files
    assert {v: p for v, p in saved.versions.items() if v != SMALL} == {
        v: p for v, p in PINS.versions.items() if v != SMALL
    }
    listed = mcpgen("versions", env=env)
    assert listed.returncode == 0
    row = next(r.split() for r in listed.stdout.splitlines() if r.startswith(SMALL))
    assert row[3] == "abcdef1" and row[4] == "yes"


def mirror_with_manifest(tmp_path: Path, manifest: bytes | None) -> Path:
    """A mirror holding a new version 2099-01-01 (a copy of 2024-11-05) and the given
    MANIFEST.md (none for None)."""
    root = tmp_path / "mirror"
    shutil.copytree(MIRROR / SMALL, root / "2099-01-01")
    if manifest is not None:
        (root / "MANIFEST.md").write_bytes(manifest)
    return root


def test_schema_add_checks_the_commit_against_a_mirror_manifest(tmp_path: Path) -> None:
    pins_path, env = pinning(tmp_path)
    before = pins_path.read_bytes()
    mirror = mirror_with_manifest(tmp_path, (MIRROR / "MANIFEST.md").read_bytes())
    held = manifest_commits((MIRROR / "MANIFEST.md").read_text())
    assert len(held) == 1 and re.fullmatch(r"[0-9a-f]{40}", held[0])
    mirror_commit = held[0]

    def add(commit: str, *more: str) -> Ran:
        return mcpgen(
            "schema", "add", "2099-01-01", "--commit", commit, "--from", str(mirror), *more, env=env
        )

    wrong = "abcdef1" if not mirror_commit.startswith("abcdef1") else "1234567"
    line = one_error_line(add(wrong), 3)
    assert wrong in line and f"the mirror holds commit {mirror_commit}" in line, line
    assert str(mirror / "MANIFEST.md") in line
    # a longer sha that shares the first characters is still another commit
    one_error_line(add(mirror_commit[:12] + ("0" if mirror_commit[12] != "0" else "1")), 3)
    assert pins_path.read_bytes() == before and not (tmp_path / "schema").exists()
    # a prefix of the commit the mirror names is accepted, and so is the whole sha
    ok = add(mirror_commit[:7])
    assert ok.returncode == 0, ok.stderr
    assert load_pins(pins_path).get("2099-01-01").commit == mirror_commit[:7]
    full = add(mirror_commit, "--force")
    assert full.returncode == 0, full.stderr
    assert load_pins(pins_path).get("2099-01-01").commit == mirror_commit


def test_schema_add_says_the_missing_version_before_a_commit_mismatch(tmp_path: Path) -> None:
    """A version the mirror lacks, asked for at another commit than the mirror's: the
    missing version is the error (the cause), with what the mirror holds and, after it,
    the commit the mirror names; then the right version at the right commit is pinned."""
    pins_path, env = pinning(tmp_path)
    before = pins_path.read_bytes()
    mirror = mirror_with_manifest(tmp_path, (MIRROR / "MANIFEST.md").read_bytes())
    held = manifest_commits((MIRROR / "MANIFEST.md").read_text())[0]
    wrong = "abcdef1" if not held.startswith("abcdef1") else "1234567"
    add = ("schema", "add", "2098-01-01", "--commit", wrong, "--from", str(mirror))
    line = one_error_line(mcpgen(*add, env=env), 3)
    missing = f"error: {mirror / '2098-01-01' / 'schema.json'}: file missing from mirror"
    assert line.startswith(missing), line
    hint = line.split("(hint: ", 1)[1]
    assert hint.startswith("the mirror holds 2099-01-01, not 2098-01-01; besides, "), hint
    assert f"{mirror / 'MANIFEST.md'} names commit {held}, not {wrong}" in hint, hint
    assert "does not match" not in line
    # the version alone missing: the same error, without the commit
    line = one_error_line(mcpgen(*add[:3], "--commit", held, *add[5:], env=env), 3)
    assert line.startswith(missing) and "besides" not in line, line
    assert pins_path.read_bytes() == before and not (tmp_path / "schema").exists()
    ok = mcpgen("schema", "add", "2099-01-01", "--commit", held, "--from", str(mirror), env=env)
    assert ok.returncode == 0, ok.stderr


def test_a_version_upstream_lacks_at_the_commit_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's tree at ``--commit`` without the version's folder lists no file: the
    error names the version and the commit, not a schema that is no JSON Schema object."""

    class NoSuchFolder(UrlSource):
        def list(self, version: str) -> list[str]:
            return []

    def source(spec: str | None, pins: Pins, commit: str | None = None) -> UrlSource:
        return NoSuchFolder(pins, commit=commit)

    monkeypatch.setattr(fetch_module, "make_source", source)
    pins_path, _ = pinning(tmp_path)
    with pytest.raises(SchemaError) as info:
        add_pin("2098-01-01", "abcdef1", None, pins_path=pins_path, root=tmp_path / "schema")
    line = info.value.one_line()
    assert "2098-01-01/schema.json: not found at commit abcdef1" in line, line
    assert "check VERSION and --commit" in line, line


def test_fetch_names_every_missing_version_at_once_before_a_changed_file(tmp_path: Path) -> None:
    """Fetching three versions from a mirror that lacks two and holds a changed copy of
    the third: one error naming both missing versions (the changed file comes after they
    are there), nothing written; then each remaining error, and a good fetch."""
    _, env = pinning(tmp_path)
    mirror = mirror_copy(tmp_path, SMALL)
    changed = mirror / SMALL / "schema.json"
    good = changed.read_bytes()
    changed.write_bytes(good.replace(b"{", b"{ ", 1))
    fetch_three = (
        "schema",
        "fetch",
        "--version",
        f"{SMALL},2025-06-18,draft",
        "--from",
        str(mirror),
    )
    line = one_error_line(mcpgen(*fetch_three, env=env), 3)
    assert line.startswith("error: versions 2025-06-18, draft missing from the source"), line
    assert f"the mirror holds {SMALL}, not 2025-06-18, draft" in line, line
    assert not (tmp_path / "schema" / SMALL).exists() and leftovers(tmp_path / "schema") == []
    for version in ("2025-06-18", "draft"):
        shutil.copytree(MIRROR / version, mirror / version)
    line = one_error_line(mcpgen(*fetch_three, env=env), 3)
    assert f"{changed}: sha256 mismatch" in line and "names commit" not in line, line
    changed.write_bytes(good)
    ok = mcpgen(*fetch_three, env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[0] == f"{SMALL}: fetched (1 files)"


def test_a_changed_file_from_a_mirror_of_another_commit_names_that_commit(tmp_path: Path) -> None:
    """A file that differs from its pin, read from a mirror whose manifest names another
    commit than the pin's: the error says both commits (the cause) and how to re-pin."""
    _, env = pinning(tmp_path)
    mirror = mirror_copy(tmp_path, SMALL)
    other = "c" * 40
    (mirror / "MANIFEST.md").write_text(f"A mirror of commit `{other}`.\n")
    changed = mirror / SMALL / "schema.json"
    changed.write_bytes(changed.read_bytes().replace(b"{", b"{ ", 1))
    line = one_error_line(
        mcpgen("schema", "fetch", "--version", SMALL, "--from", str(mirror), env=env), 3
    )
    pinned = PINS.get(SMALL).commit
    assert f"{changed}: sha256 mismatch" in line, line
    assert f"names commit {other}, and {SMALL} is pinned at commit {pinned}" in line, line
    assert f"`mcpgen schema add {SMALL} --commit {other} --from {mirror} --force`" in line, line
    ok = mcpgen("schema", "fetch", "--version", SMALL, "--from", str(MIRROR), env=env)
    assert ok.returncode == 0, ok.stderr


def test_generate_and_diff_name_every_version_not_fetched(tmp_path: Path) -> None:
    """Nothing fetched: ``generate`` and ``diff`` say every version they need in one error
    with the one command that fetches them all, which then lets them run."""
    _, env = pinning(tmp_path)
    line = one_error_line(mcpgen("generate", "--version", f"{SMALL},2025-03-26", env=env), 3)
    assert f"not fetched into {tmp_path / 'schema'}: {SMALL}, 2025-03-26" in line, line
    assert f"`mcpgen schema fetch --version {SMALL},2025-03-26`" in line, line
    line = one_error_line(mcpgen("diff", SMALL, "2025-03-26", env=env), 3)
    assert f"`mcpgen schema fetch --version {SMALL},2025-03-26`" in line, line
    fetched = mcpgen(
        "schema", "fetch", "--version", f"{SMALL},2025-03-26", "--from", str(MIRROR), env=env
    )
    assert fetched.returncode == 0, fetched.stderr
    ok = mcpgen("diff", SMALL, "2025-03-26", env=env)
    assert ok.returncode == 0 and ok.stdout.startswith(f"# MCP {SMALL} → 2025-03-26"), ok.stderr


@pytest.mark.parametrize(
    "manifest",
    [
        None,
        b"# A mirror\n\nNo commit named here.\n",
        b"\xff\xfe\x00commit `not hex at all`\x00" * 1000,
        b"commit `" + b"0" * 39 + b"`",  # too short to be a sha
    ],
    ids=["no-manifest", "no-commit", "binary", "short-sha"],
)
def test_a_mirror_that_names_no_commit_cannot_tell(tmp_path: Path, manifest: bytes | None) -> None:
    pins_path, env = pinning(tmp_path)
    mirror = mirror_with_manifest(tmp_path, manifest)
    assert DirSource(mirror).commits() == []
    added = mcpgen(
        "schema", "add", "2099-01-01", "--commit", "abcdef1", "--from", str(mirror), env=env
    )
    assert added.returncode == 0, added.stderr
    assert load_pins(pins_path).get("2099-01-01").commit == "abcdef1"


def test_an_http_mirror_manifest_is_checked_too(tmp_path: Path, http_mirror: str) -> None:
    pins_path, env = pinning(tmp_path)
    before = pins_path.read_bytes()
    held = manifest_commits((MIRROR / "MANIFEST.md").read_text())[0]
    assert UrlSource(PINS, base=http_mirror).commits() == [held]
    assert UrlSource(PINS).commits() == [], "the upstream URL is read at the commit itself"
    wrong = "abcdef1" if not held.startswith("abcdef1") else "1234567"
    add = ("schema", "add", SMALL, "--from", http_mirror, "--force", "--commit")
    line = one_error_line(mcpgen(*add, wrong, env=env), 3)
    assert f"{http_mirror}/MANIFEST.md" in line and f"the mirror holds commit {held}" in line
    assert pins_path.read_bytes() == before
    ok = mcpgen(*add, held[:10], env=env)
    assert ok.returncode == 0, ok.stderr
    assert load_pins(pins_path).get(SMALL).commit == held[:10]
    # a mirror served without a manifest cannot tell
    bare = tmp_path / "bare"
    shutil.copytree(MIRROR / SMALL, bare / SMALL)
    handler = functools.partial(_QuietHandler, directory=str(bare))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True).start()
    try:
        assert UrlSource(PINS, base=f"http://127.0.0.1:{server.server_address[1]}").commits() == []
    finally:
        server.shutdown()
        server.server_close()


def test_schema_dir_option_sets_where_schemas_go_for_one_run(tmp_path: Path) -> None:
    env_dir = tmp_path / "from-env"
    before = schema_dir()
    fetched = run_cli(
        "--schema-dir",
        "chosen",  # relative: to the working directory
        "schema",
        "fetch",
        "--version",
        SMALL,
        "--from",
        str(MIRROR),
        schema_dir=env_dir,
        cwd=tmp_path,
    )
    assert fetched.returncode == 0, fetched.stderr
    chosen = tmp_path / "chosen"
    assert is_fetched(SMALL, PINS, chosen) and not env_dir.exists()
    assert schema_dir() == before, "the option lasts one run"

    def fetched_column(*args: str) -> str:
        listed = run_cli(*args, "versions", schema_dir=env_dir, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        return next(r.split() for r in listed.stdout.splitlines() if r.startswith(SMALL))[4]

    assert fetched_column("--schema-dir", str(chosen)) == "yes"
    assert fetched_column() == "no"
    # generate reads the schemas from it too
    out = tmp_path / "out"
    args = ("generate", "--version", SMALL, "--package", "pkg", "--out", str(out), "--jobs", "1")
    missing = run_cli(*args, schema_dir=env_dir)
    one_error_line(missing, 3)
    made = run_cli("--schema-dir", str(chosen), *args, schema_dir=env_dir)
    assert made.returncode == 0, made.stderr
    assert (out / "pkg" / "v2024_11_05" / "types.py").is_file()
    # a file is no schema directory: one line, exit 2, and then it still works
    line = one_error_line(
        run_cli("--schema-dir", str(out / "pkg" / "__init__.py"), "versions", schema_dir=env_dir),
        2,
    )
    assert "--schema-dir" in line
    assert fetched_column("--schema-dir", str(chosen)) == "yes"


def test_paths_that_cannot_be_written_are_one_line_with_exit_6(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    dest = tmp_path / "schema"
    fetch_small = ("schema", "fetch", "--version", SMALL, "--from", str(MIRROR))
    under_a_file = str(blocker / "schema")
    line = one_error_line(run_cli("--schema-dir", under_a_file, *fetch_small, schema_dir=dest), 6)
    assert under_a_file in line or str(blocker) in line, line
    assert blocker.read_text() == "not a directory"
    ok = run_cli("--schema-dir", str(dest), *fetch_small, schema_dir=dest)
    assert ok.returncode == 0, ok.stderr
    generate = ("generate", "--version", SMALL, "--package", "pkg", "--jobs", "1")
    line = one_error_line(run_cli(*generate, "--out", str(blocker / "out"), schema_dir=dest), 6)
    assert str(blocker) in line, line
    made = run_cli(*generate, "--out", str(tmp_path / "out"), schema_dir=dest)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "out" / "pkg" / "v2024_11_05" / "types.py").is_file()
