"""``mcpgen new``: a ready-to-install MCP server project with its bindings vendored.

The project is what a new user copies, and could be pushed to a public repository as it
is: it depends on ``mcpgen`` by name (a compatible version range, never a path), no file
names a directory of the machine it was made on, and its README's commands work as pasted.

It is assembled in a hidden sibling directory and moved into place only when complete, so
a failure (or an interruption) never leaves a half-written project.

It needs no schema and no network: the bindings it vendors are copies of those this mcpgen
installs (``mcpgen.generated``, made by the same generator from the same pins; their
modules import one another relatively, so they are the same under any package name), and
what the templates need to know of a version is read from them. Only a version mcpgen
does not install (one pinned later with ``schema add``, or pinned again at another commit)
is generated from its fetched schema; when some are not fetched, one error names them all
and the one command that fetches them.
"""

from __future__ import annotations

import importlib
import json
import keyword
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import msgspec

from .emit import SUPPORT_DIR, environment, format_python, package_index, package_notice
from .emit import package_path
from .errors import EXIT_EXISTS, GeneratorError, SchemaError, UsageError
from .fetch import is_fetched, read_schema
from .fsops import replace_directory
from .pins import module_name
from .roles import find_roles
from .pipeline import DEFAULT_PACKAGE, Inputs, bundled_root, generate
from ..runtime.app.tools import INPUT_ERRORS_AS_RESULTS

TRANSPORTS = ("stdio", "http", "websocket")
#: ``--transport`` names of several transports at once.
TRANSPORT_SETS = {"both": ("stdio", "http"), "all": TRANSPORTS}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$")
_RELEASE = re.compile(r"^(\d+)(?:\.(\d+))?")
#: The upstream commit a version's ``types`` module says it was generated from (its first
#: lines, written by templates/types.py.j2: the commit's first 12 digits).
_GENERATED_FROM = re.compile(rb"upstream commit ([0-9a-f]{7,40})\)")
#: What the project is made of: its path (``{package}`` filled in) → its template.
_FILES = {
    "pyproject.toml": "pyproject.toml.j2",
    "README.md": "README.md.j2",
    "NOTICE": "NOTICE.j2",
    ".gitignore": "gitignore.j2",
    "{package}/__init__.py": "__init__.py.j2",
    "{package}/__main__.py": "__main__.py.j2",
    "{package}/server.py": "server.py.j2",
    "tests/test_server.py": "tests/test_server.py.j2",
}
#: What ``--auth`` adds: the protection read from the environment, and its tests.
_AUTH_FILES = {
    "{package}/protection.py": "protection.py.j2",
    "tests/test_protection.py": "tests/test_protection.py.j2",
}


def package_name(name: str) -> str:
    """The import name of a project: ``weather-server`` → ``weather_server``."""
    if not _NAME.match(name):
        raise UsageError(
            f"invalid project name {name!r}",
            "use letters and digits, optionally joined by '-' or '_', starting with a letter "
            "(e.g. weather-server)",
        )
    package = name.lower().replace("-", "_")
    if (
        keyword.iskeyword(package)
        or package in sys.stdlib_module_names
        or package in {"mcpgen", "tests"}
    ):
        raise UsageError(
            f"project name {name!r} would shadow the module {package!r}", "choose another name"
        )
    return package


def default_versions(inputs: Inputs) -> list[str]:
    """The newest dated version of each era: a new server meets today's clients of both."""
    chosen = []
    for era in ("legacy", "modern"):
        dated = [
            v for v in inputs.pins.ordered() if v != "draft" and inputs.pins.versions[v].era == era
        ]
        if dated:
            chosen.append(dated[-1])
    return chosen


def running_version() -> str:
    """The version of the mcpgen making the project (its installed metadata, else the
    version the package itself states)."""
    try:
        return metadata.version("mcpgen")
    except metadata.PackageNotFoundError:  # imported from a source tree, not installed
        from mcpgen import __version__

        return __version__


def compatible_range(version: str) -> str:
    """The versions a project made by mcpgen ``version`` works with: this one up to the
    next breaking release (the next minor while the major is 0, else the next major).
    ``0.1.0`` → ``>=0.1.0,<0.2``; ``1.4.2`` → ``>=1.4.2,<2``."""
    version = version.split("+", 1)[0]  # a local build (+abc) is no public version
    found = _RELEASE.match(version)
    if not found:
        return ">=0.1"
    major, minor = int(found.group(1)), int(found.group(2) or 0)
    upper = f"0.{minor + 1}" if major == 0 else str(major + 1)
    return f">={version},<{upper}"


def transports_of(named: str) -> list[str]:
    """``--transport``'s value as transports, stdio first (the default a project runs)."""
    wanted = TRANSPORT_SETS.get(named) or [t.strip() for t in named.split(",")]
    unknown = [t for t in wanted if t not in TRANSPORTS]
    if unknown or not wanted:
        raise UsageError(
            f"{(unknown or [named])[0]!r} is not one of {', '.join(TRANSPORTS)}",
            "name one, a comma list of them, both (stdio,http) or all",
        )
    return [t for t in TRANSPORTS if t in wanted]


def mcpgen_requirement(
    http: bool, version: str | None = None, auth: bool = False, websocket: bool = False
) -> str:
    """How the project depends on mcpgen: by name, with the extras it needs and the
    versions compatible with the running mcpgen (``mcpgen[http]>=0.1.0,<0.2``)."""
    wanted = (("http", http or websocket), ("auth", auth), ("websocket", websocket))
    extras = [name for name, needed in wanted if needed]
    extra = f"[{','.join(extras)}]" if extras else ""
    return f"mcpgen{extra}{compatible_range(version or running_version())}"


def scheme_of(name: str) -> str:
    """A URI scheme for the project's resources (RFC 3986 allows no ``_``)."""
    return name.lower().replace("_", "-")


def new_project(
    name: str,
    versions: Sequence[str] | None = None,
    transport: str = "stdio",
    directory: Path | None = None,
    force: bool = False,
    requirement: str | None = None,
    inputs: Inputs | None = None,
    progress: Callable[[str], None] | None = None,
    auth: bool = False,
) -> Path:
    """Write the project ``name`` into ``directory`` (default ``./name``).

    ``requirement`` replaces the project's dependency on mcpgen (tests install a checkout).
    ``auth`` protects its HTTP transport (an OAuth 2.1 resource server configured from the
    environment), which it then needs.
    """
    package = package_name(name)
    inputs = inputs or Inputs.load()
    chosen = list(versions) if versions else default_versions(inputs)
    for v in chosen:
        inputs.pins.get(v)
    target = (directory or Path.cwd() / name).resolve()
    files = render_project(name, chosen, transport, auth, requirement, inputs)
    if target.exists() and (not target.is_dir() or any(target.iterdir())) and not force:
        raise GeneratorError(
            f"{target} exists and is not empty",
            "choose another --dir, or pass --force to replace it",
            EXIT_EXISTS,
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if progress:
            progress(f"vendoring bindings for {', '.join(chosen)} into {package}/mcp")
        vendor_bindings(chosen, f"{package}.mcp", staging, inputs)
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def render_project(
    name: str,
    versions: Sequence[str],
    transport: str = "stdio",
    auth: bool = False,
    requirement: str | None = None,
    inputs: Inputs | None = None,
) -> dict[str, str]:
    """Every file of the project but its vendored bindings: its path → its text (Python
    formatted with black). Checks the choices first: a usage error names the bad one, and
    versions mcpgen does not install must be fetched (:func:`to_generate`)."""
    package = package_name(name)
    inputs = inputs or Inputs.load()
    chosen = list(versions)
    transports = transports_of(transport)
    if auth and "http" not in transports:
        raise UsageError(
            "--auth protects the HTTP transport, and this project has none",
            "add --transport http or --transport both",
        )
    to_generate(chosen, inputs)  # before reading anything of a version
    context = _context(name, package, chosen, transports, inputs)
    context["auth"] = auth
    required = requirement or mcpgen_requirement(
        "http" in transports, auth=auth, websocket="websocket" in transports
    )
    context["mcpgen_requirement_toml"] = json.dumps(required)  # a valid TOML string too
    env = environment()
    files = {}
    for relative, template in {**_FILES, **(_AUTH_FILES if auth else {})}.items():
        path = relative.format(package=package)
        text = env.get_template(f"new/{template}").render(**context)
        files[path] = format_python(text) if path.endswith(".py") else text
    return files


def installed_version(version: str, inputs: Inputs) -> bool:
    """Whether this mcpgen installs the bindings of ``version`` as pinned: generated from
    the pinned commit (a version pinned again at another one is not what it installs)."""
    types = bundled_root() / module_name(version) / "types.py"
    try:
        with types.open("rb") as module:
            head = module.read(1024)
    except OSError:
        return False
    found = _GENERATED_FROM.search(head)
    return found is not None and inputs.pins.get(version).commit.startswith(found.group(1).decode())


def to_generate(versions: Sequence[str], inputs: Inputs) -> list[str]:
    """The versions of ``versions`` mcpgen does not install, generated from their
    schemas; a :class:`SchemaError` naming every one of them not fetched, with the one
    command that fetches them all."""
    needed = [v for v in versions if not installed_version(v, inputs)]
    missing = [v for v in needed if not is_fetched(v, inputs.pins, inputs.schema_root)]
    if missing:
        listed = ",".join(missing)
        raise SchemaError(
            f"{', '.join(missing)}: no bindings installed with this mcpgen and no schema "
            "fetched to generate them from",
            f"run `mcpgen schema fetch --version {listed}` (offline: add --from DIR)",
        )
    return needed


def vendor_bindings(versions: Sequence[str], package: str, out: Path, inputs: Inputs) -> None:
    """The bindings of ``versions`` as the package ``package`` under ``out``, as
    ``mcpgen generate --package`` writes them: copies of the installed ones, and those of
    a version mcpgen does not install generated from its fetched schema."""
    root = out / package_path(package)
    needed = to_generate(versions, inputs)
    for version in versions:
        if version not in needed:
            folder = module_name(version)
            shutil.copytree(
                bundled_root() / folder,
                root / folder,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
    if needed:  # writes the package's index and support modules too
        generate(needed, package, out, inputs=inputs, jobs=1)
        return
    index = format_python(package_index(root, inputs.pins, {}))
    (root / "__init__.py").write_text(index)
    for support in sorted(SUPPORT_DIR.glob("_*.py")):
        shutil.copyfile(support, root / support.name)
    (root / "NOTICE").write_text(package_notice(root, inputs.pins, ()))


def _context(
    name: str, package: str, chosen: list[str], transports: list[str], inputs: Inputs
) -> dict[str, object]:
    """What the templates are rendered with."""
    typed = max(chosen, key=lambda v: (v != "draft", v))  # handlers use the newest types
    newest: dict[str, str] = {}  # era → the version its clients end up speaking
    for v in sorted(v for v in chosen if v != "draft"):  # a client asks for draft itself
        newest[inputs.pins.versions[v].era] = v
    # How the tests connect: "legacy" shakes hands, "auto" finds the stateless modern era.
    eras = [
        (mode, newest[era])
        for mode, era in (("legacy", "legacy"), ("auto", "modern"))
        if era in newest
    ] or [("legacy" if inputs.pins.versions[typed].era == "legacy" else "auto", typed)]
    spoken = [v for _, v in eras]
    return {
        "name": name,
        "package": package,
        "scheme": scheme_of(name),
        "versions": chosen,
        "version_list": ",".join(chosen),
        "transports": transports,
        "http": "http" in transports,
        "websocket": "websocket" in transports,
        "network": "http" in transports or "websocket" in transports,
        "typed": typed,
        "typed_module": module_name(typed),
        "eras": eras,
        "stdio_mode": "legacy" if "legacy" in newest else "auto",
        # The protection tests' plain request (--auth): a stateless call, or an initialize.
        "probe_mode": eras[-1][0],
        "probe_version": eras[-1][1],
        # What every tested version does (a --versions choice may include older ones):
        # the runtime's rule for invalid arguments, and the schema's own tool results.
        "errors_as_results": all(v >= INPUT_ERRORS_AS_RESULTS for v in spoken),
        "structured": all(_has_structured_output(v, inputs) for v in spoken),
    }


def _has_structured_output(version: str, inputs: Inputs) -> bool:
    """Whether ``version``'s tool results have ``structuredContent``: its ``CallToolResult``
    has the field, in the bindings mcpgen installs (else in its fetched schema)."""
    if installed_version(version, inputs):
        types = importlib.import_module(f"{DEFAULT_PACKAGE}.{module_name(version)}.types")
        result = types.ROLES["CallToolResult"]
        return any(f.encode_name == "structuredContent" for f in msgspec.structs.fields(result))
    schema = json.loads(read_schema(version, inputs.pins, inputs.schema_root))
    definitions = schema.get("$defs") or schema.get("definitions") or {}
    result = definitions.get(find_roles(definitions, inputs.overrides).get("CallToolResult"), {})
    return "structuredContent" in result.get("properties", {})
