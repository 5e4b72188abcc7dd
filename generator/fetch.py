"""Schema acquisition: copy pinned upstream files from a mirror or URL, verified by sha256.

Fetched files land in ``schema/<version>/`` (git-ignored). A fetch stages every requested
version in a hidden directory and swaps them into place only after all files of all
versions verified, so a failure leaves nothing half-written.

Errors come from their cause: a fetch reads every requested version before it fails, so
one error names every version the source lacks (and says so before any file that differs
from its pin); a source that names another commit than the one asked for says so with
the files it lacks or that differ, which is why they do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .fsops import replace_directory
from .errors import ExistsError, SchemaError, UsageError
from .pins import Era, Pin, Pins, load_pins, schema_dir, version_sort_key
from .roles import methods_of

SOURCE_ENV = "MCPGEN_SCHEMA_SOURCE"
URL_TIMEOUT_S = 30.0
#: A mirror's ``MANIFEST.md`` names the upstream commit it copies: "... commit `<sha>` ...".
MANIFEST = "MANIFEST.md"
_MANIFEST_COMMIT = re.compile(r"\bcommit\s+`([0-9a-fA-F]{40})`")
#: The largest manifest read (a mirror's is a few KiB).
MANIFEST_MAX_BYTES = 1 << 20


class MissingFile(SchemaError):
    """A file the source does not have (a mirror without it, HTTP 404)."""


class Unreachable(SchemaError):
    """A source that does not answer: nothing more can be read from it."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Source:
    """Where upstream files come from."""

    def read(self, version: str, path: str) -> bytes:
        raise NotImplementedError

    def list(self, version: str) -> list[str]:
        """Every file of a version (used when adding a pin)."""
        raise NotImplementedError

    def describe(self, version: str, path: str) -> str:
        raise NotImplementedError

    def commits(self) -> list[str]:
        """The upstream commits this source says it holds (a mirror's manifest); empty
        when it cannot tell."""
        return []

    def versions(self) -> list[str]:
        """The versions this source holds; empty when it cannot tell."""
        return []

    def where(self) -> str:
        """Where the commits it names are written, for messages."""
        return "the source"


def manifest_commits(text: str) -> list[str]:
    """The distinct commits a mirror manifest names, in order of appearance."""
    found = [m.group(1).lower() for m in _MANIFEST_COMMIT.finditer(text)]
    return list(dict.fromkeys(found))


@dataclass
class DirSource(Source):
    """A local mirror laid out as ``<version>/schema.json`` and ``<version>/examples/**``."""

    root: Path

    def describe(self, version: str, path: str) -> str:
        return str(self.root / version / path)

    def read(self, version: str, path: str) -> bytes:
        file = self.root / version / path
        try:
            return file.read_bytes()
        except FileNotFoundError:
            raise MissingFile(
                f"{file}: file missing from mirror",
                f"point --from at a mirror holding <version>/{path}, or fetch from upstream",
            ) from None
        except OSError as exc:
            raise SchemaError(
                f"{file}: cannot read ({exc.strerror})", "check the mirror path"
            ) from None

    def list(self, version: str) -> list[str]:
        base = self.root / version
        if not (base / "schema.json").is_file():
            raise MissingFile(
                f"{base / 'schema.json'}: file missing from mirror", "check VERSION and --from"
            )
        files = ["schema.json"]
        files += sorted(p.relative_to(base).as_posix() for p in (base / "examples").rglob("*.json"))
        return files

    def commits(self) -> list[str]:
        try:
            with open(self.root / MANIFEST, "rb") as file:
                data = file.read(MANIFEST_MAX_BYTES)
        except OSError:  # no manifest (or none readable): the mirror cannot tell
            return []
        return manifest_commits(data.decode("utf-8", "replace"))

    def versions(self) -> list[str]:
        try:
            found = [p.parent.name for p in self.root.glob("*/schema.json")]
        except OSError:
            return []
        return sorted(found, key=version_sort_key)

    def where(self) -> str:
        return str(self.root / MANIFEST)


def _download(url: str, limit: int = -1) -> bytes:
    """The body at ``url`` (at most ``limit`` bytes). An HTTP error status is raised as
    ``HTTPError`` for the caller to word; an unreachable host as a :class:`SchemaError`."""
    try:
        with urllib.request.urlopen(url, timeout=URL_TIMEOUT_S) as response:
            return response.read(limit)
    except urllib.error.HTTPError:
        raise
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise Unreachable(
            f"{url}: unreachable ({reason})",
            f"without internet, read a local mirror: --from DIR or {SOURCE_ENV}=DIR",
        ) from None


@dataclass
class UrlSource(Source):
    """An HTTP(S) location: the pinned upstream raw URL, or a base URL of a mirror."""

    pins: Pins
    base: str | None = None
    #: Commit to read at, for a version that is not pinned yet (``schema add``).
    commit: str | None = None

    def _commit(self, version: str) -> str:
        return self.commit or self.pins.get(version).commit

    def url(self, version: str, path: str) -> str:
        if self.base is not None:
            return f"{self.base.rstrip('/')}/{version}/{path}"
        up = self.pins.upstream
        commit = self._commit(version)
        return up.raw_url.format(
            repository=up.repository, commit=commit, version=version, path=path
        )

    def describe(self, version: str, path: str) -> str:
        return self.url(version, path)

    def _get(self, url: str) -> bytes:
        try:
            return _download(url)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise MissingFile(
                    f"{url}: not found (HTTP 404)", "check the version and commit pin"
                ) from None
            raise SchemaError(f"{url}: HTTP {exc.code}", "retry later or use --from DIR") from None

    def read(self, version: str, path: str) -> bytes:
        return self._get(self.url(version, path))

    def manifest_url(self) -> str | None:
        """A mirror's manifest; the upstream URL has none (it is read at the commit)."""
        return None if self.base is None else f"{self.base.rstrip('/')}/{MANIFEST}"

    def where(self) -> str:
        return self.manifest_url() or "the source"

    def commits(self) -> list[str]:
        url = self.manifest_url()
        if url is None:
            return []
        try:
            data = _download(url, MANIFEST_MAX_BYTES)
        except urllib.error.HTTPError:  # no manifest served: the mirror cannot tell
            return []
        return manifest_commits(data.decode("utf-8", "replace"))

    def list(self, version: str) -> list[str]:
        if self.base is not None:
            return ["schema.json"]  # a plain HTTP mirror cannot be listed
        up = self.pins.upstream
        commit = self._commit(version)
        tree = json.loads(self._get(up.tree_url.format(repository=up.repository, commit=commit)))
        prefix = f"schema/{version}/"
        return sorted(
            item["path"][len(prefix) :]
            for item in tree.get("tree", [])
            if item.get("path", "").startswith(prefix) and item["path"].endswith(".json")
        )


def is_url(spec: str) -> bool:
    """Whether a ``--from`` value (or ``$MCPGEN_SCHEMA_SOURCE``) names a URL, not a directory."""
    return spec.startswith(("http://", "https://"))


def mirror_path(spec: str) -> Path:
    """The directory a ``--from`` value (or ``$MCPGEN_SCHEMA_SOURCE``) names, absolute:
    ``~`` expanded, and a relative path taken against the current directory now, when it
    is read. Passed on to another process, or kept across a change of directory, it still
    names the directory the user meant."""
    path = Path(spec).expanduser()
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: absolute, unresolved, for the message
        return path.absolute()


def make_source(spec: str | None, pins: Pins, commit: str | None = None) -> Source:
    """``--from`` value (or ``$MCPGEN_SCHEMA_SOURCE``): a directory or URL; default upstream.

    A relative directory is relative to the current directory at the time of this call."""
    origin = "--from" if spec else f"${SOURCE_ENV}"
    spec = spec or os.environ.get(SOURCE_ENV) or None
    if spec is None:
        return UrlSource(pins, commit=commit)
    if is_url(spec):
        return UrlSource(pins, base=spec, commit=commit)
    root = mirror_path(spec)
    if not root.is_dir():
        fix = "pass --from" if origin == "--from" else f"set {SOURCE_ENV} to"
        if Path(spec).expanduser().is_absolute():
            raise UsageError(
                f"{root}: not a directory or http(s) URL",
                f"{fix} a schema mirror's directory or base URL",
            )
        raise UsageError(
            f"{root}: not a directory or http(s) URL ({origin}={spec}, relative to the "
            f"current directory {Path.cwd()})",
            f"{fix} a schema mirror's directory (an absolute path reads the same from every "
            "directory) or base URL",
        )
    return DirSource(root)


def _checked(source: Source, version: str, path: str, expected: str, commit: str) -> bytes:
    data = source.read(version, path)
    actual = sha256(data)
    if actual != expected:
        other = other_commit(source, commit)
        if other is not None:
            raise SchemaError(
                f"{source.describe(version, path)}: sha256 mismatch (pinned {expected[:12]}…, "
                f"got {actual[:12]}…): {other}, and {version} is pinned at commit {commit}",
                f"fetch from a mirror of commit {commit}, or re-pin {version} from this one "
                f"with `mcpgen schema add {version} --commit {_held(source)}{_from(source)} "
                "--force`",
            )
        raise SchemaError(
            f"{source.describe(version, path)}: sha256 mismatch (pinned {expected[:12]}…, got {actual[:12]}…)",
            "the source is not the pinned upstream commit; use the pinned mirror or re-pin with "
            "`mcpgen schema add`",
        )
    try:
        json.loads(data)
    except ValueError as exc:
        raise SchemaError(
            f"{source.describe(version, path)}: malformed JSON ({exc})", "re-fetch it"
        ) from None
    return data


def _from(source: Source) -> str:
    """The ``--from`` option that reads ``source`` again (none for upstream)."""
    if isinstance(source, DirSource):
        return f" --from {source.root}"
    if isinstance(source, UrlSource) and source.base is not None:
        return f" --from {source.base}"
    return ""


def _held(source: Source) -> str:
    held = source.commits()
    return held[0] if held else "SHA"


def other_commit(source: Source, commit: str) -> str | None:
    """How ``source`` says it holds another upstream commit than ``commit`` (a prefix of
    the full sha); None when it holds that one or cannot tell."""
    held = source.commits()
    if held and not any(full.startswith(commit.lower()) for full in held):
        return f"{source.where()} names commit {', '.join(held)}"
    return None


def missing_versions(
    missing: list[MissingFile], versions: list[str], source: Source, commits: list[str]
) -> MissingFile:
    """One error for every version ``source`` lacks a file of (``missing``, one each, for
    ``versions`` pinned or asked for at ``commits``): what it lacks, then what it holds,
    then whether it is at another commit too."""
    first = missing[0]
    message = first.message
    if len(missing) > 1:
        message = f"versions {', '.join(versions)} missing from the source (first: {message})"
    hints: list[str] = []
    held = source.versions()
    absent = [v for v in versions if v not in held]
    if held and absent:
        hints.append(f"the mirror holds {', '.join(held)}, not {', '.join(absent)}")
    for commit in dict.fromkeys(commits):
        other = other_commit(source, commit)
        if other is not None:
            hints.append(f"besides, {other}, not {commit}")
    hints.append(first.hint)
    return MissingFile(message, "; ".join(hints))


def is_fetched(version: str, pins: Pins, root: Path | None = None) -> bool:
    """True when every pinned file of ``version`` is present locally with its pinned hash."""
    base = (root or schema_dir()) / version
    try:
        return all(sha256((base / p).read_bytes()) == h for p, h in pins.get(version).files.items())
    except OSError:
        return False


def fetch(
    versions: Iterable[str],
    source: Source,
    pins: Pins | None = None,
    root: Path | None = None,
) -> dict[str, str]:
    """Fetch and verify ``versions``; returns ``{version: "fetched" | "up to date"}``.

    Every version is read before any error is raised: the versions the source lacks are
    named together (the cause of what else fails), ahead of a file that differs from its
    pin."""
    pins = pins or load_pins()
    root = root or schema_dir()
    root.mkdir(parents=True, exist_ok=True)
    outcome: dict[str, str] = {}
    staged: dict[str, Path] = {}
    missing: dict[str, MissingFile] = {}
    failed: SchemaError | None = None
    try:
        for version in versions:
            pin = pins.get(version)
            if is_fetched(version, pins, root):
                outcome[version] = "up to date"
                continue
            stage = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=root))
            staged[version] = stage
            try:
                for path, expected in sorted(pin.files.items()):
                    target = stage / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(_checked(source, version, path, expected, pin.commit))
            except MissingFile as exc:
                missing[version] = exc
                continue
            except Unreachable:
                raise  # nothing else can be read either
            except SchemaError as exc:  # a file differing from its pin, malformed JSON
                failed = failed or exc
                continue
            outcome[version] = "fetched"
        if missing:
            commits = [pins.get(v).commit for v in missing]
            raise missing_versions(list(missing.values()), list(missing), source, commits)
        if failed is not None:
            raise failed
        for version, stage in staged.items():
            replace_directory(stage, root / version)
        staged.clear()
    finally:
        for stage in staged.values():
            shutil.rmtree(stage, ignore_errors=True)
    return outcome


def require_fetched(versions: Iterable[str], pins: Pins, root: Path | None = None) -> None:
    """One error naming every version of ``versions`` whose schema is not fetched, and the
    one command that fetches them all."""
    base = root or schema_dir()
    absent = [v for v in versions if not (base / v / "schema.json").is_file()]
    if absent:
        some = "schema" if len(absent) == 1 else "schemas"
        raise SchemaError(
            f"{some} not fetched into {base}: {', '.join(absent)}",
            f"run `mcpgen schema fetch --version {','.join(absent)}`; offline, add --from DIR",
        )


def read_schema(version: str, pins: Pins | None = None, root: Path | None = None) -> bytes:
    """The fetched, verified ``schema.json`` of ``version``."""
    pins = pins or load_pins()
    expected = pins.get(version).schema_sha256
    file = (root or schema_dir()) / version / "schema.json"
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise SchemaError(
            f"{file}: schema not fetched",
            f"run `mcpgen schema fetch --version {version}`; offline, add --from DIR",
        ) from None
    if sha256(data) != expected:
        raise SchemaError(
            f"{file}: sha256 does not match the pin",
            f"re-fetch: `mcpgen schema fetch --version {version}`",
        )
    return data


_DIALECTS = {
    "http://json-schema.org/draft-07/schema#": "draft-07",
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
}


def check_commit(source: Source, commit: str) -> None:
    """Refuse a source that says it holds another upstream commit than ``commit`` (a
    prefix of the full sha). An upstream URL is read at ``commit`` itself, and a source
    that names no commit cannot tell: both pass."""
    held = source.commits()
    if held and not any(full.startswith(commit) for full in held):
        raise SchemaError(
            f"--commit {commit} does not match the mirror: {source.where()} names commit "
            f"{', '.join(held)}",
            f"the mirror holds commit {held[0]}; pass --commit {held[0]}, or a mirror of "
            f"{commit}",
        )


def add_pin(
    version: str,
    commit: str,
    source_spec: str | None,
    era: str | None = None,
    pins_path: Path | None = None,
    root: Path | None = None,
    force: bool = False,
) -> Pin:
    """Pin ``version`` at ``commit`` from the files a source holds, then fetch them.

    Records the sha256 of every file, the dialect (from ``$schema``) and the era (modern
    unless the schema still defines ``InitializeRequest``, or as given). A version that
    is already pinned is replaced only with ``force``; a mirror naming another commit
    than ``commit`` in its manifest is refused. Nothing is saved unless every file was
    read, parsed and fetched.
    """
    from .pins import module_name, save_pins

    module_name(version)  # validates the version's form
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise UsageError(f"invalid commit {commit!r}", "pass the upstream git commit sha (hex)")
    if era is not None and era not in ("legacy", "modern"):
        raise UsageError(f"invalid era {era!r}", "use legacy or modern")
    pins = load_pins(pins_path)
    current = pins.versions.get(version)
    if current is not None and not force:
        raise ExistsError(
            f"{version} is already pinned at commit {current.commit}",
            f"pass --force to re-pin {version} at {commit}",
        )
    source = make_source(source_spec, pins, commit=commit)
    # What the source lacks is said first: it is the cause of what else is wrong (a
    # mirror of another commit, which the hint adds).
    try:
        listed = source.list(version)
        if "schema.json" not in listed:  # upstream's tree at that commit has no such folder
            raise MissingFile(
                f"{source.describe(version, 'schema.json')}: not found at commit {commit}",
                "check VERSION and --commit",
            )
        read = {path: source.read(version, path) for path in listed}
    except MissingFile as exc:
        raise missing_versions([exc], [version], source, [commit]) from None
    check_commit(source, commit)
    files = {}
    schema_doc: Any = None
    for path, data in read.items():
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise SchemaError(
                f"{source.describe(version, path)}: malformed JSON ({exc})",
                "check the source",
            ) from None
        if path == "schema.json":
            schema_doc = doc
        files[path] = sha256(data)
    if not isinstance(schema_doc, dict):
        raise SchemaError(
            f"{source.describe(version, 'schema.json')}: not a JSON Schema object",
            "check the source",
        )
    dialect = _DIALECTS.get(schema_doc.get("$schema", ""))
    if dialect is None:
        raise SchemaError(
            f"{source.describe(version, 'schema.json')}: unknown $schema {schema_doc.get('$schema')!r}",
            "mcpgen reads draft-07 and 2020-12 schemas",
        )
    if era is None:
        defs = schema_doc.get("$defs") or schema_doc.get("definitions") or {}
        era = "legacy" if "initialize" in methods_of(defs) else "modern"
    pin = Pin(commit=commit, era=cast(Era, era), dialect=dialect, files=files)
    pins.versions[version] = pin
    fetch([version], source, pins, root)
    save_pins(pins, pins_path)
    return pin
