"""Schema acquisition: verified copies from a mirror or URL, one-line errors, no half-writes."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from cli_runner import Ran, mcpgen
from conftest import MIRROR, PINS
from mcpgen.generator.errors import SchemaError, UsageError
from mcpgen.generator.fetch import (
    DirSource,
    UrlSource,
    add_pin,
    fetch,
    is_fetched,
    make_source,
)
from mcpgen.generator.pins import PINS_FILE, Pin, Pins, load_pins

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_mirror() -> Iterator[str]:
    """The mirror served over HTTP on loopback for the duration of one test."""
    handler = functools.partial(_QuietHandler, directory=str(MIRROR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
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
