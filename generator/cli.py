"""The ``mcpgen`` command line."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any, cast

import click

from .cli_errors import OneLineErrorGroup

EXAMPLES = {
    "fetch": "mcpgen schema fetch --version all --from ../shared/mcp-schema",
    "add": "mcpgen schema add 2027-01-01 --commit 0123abc… --from ../mirror",
    "generate": "mcpgen generate --version all --package acme.mcp --out src",
    "check": "mcpgen generate --check",
}


ENVIRONMENT = """\b
Environment variables:
  MCPGEN_SCHEMA_SOURCE  --from of `schema fetch` and `schema add` when not given: DIR or URL
                        (a relative DIR is read from the current directory)
  MCPGEN_SCHEMA_DIR     where schemas are fetched to and read from (--schema-dir wins)
  MCPGEN_PINS           the pins file every command reads and `schema add` writes
  XDG_CACHE_HOME        base of the per-user cache directory (default: ~/.cache)
  XDG_DATA_HOME         base of the per-user data directory (default: ~/.local/share)
  LOCALAPPDATA          Windows: base of both per-user directories
  MCP_AUTH_ISSUER       `proxy --auth-issuer`: require OAuth tokens from this issuer
  MCP_AUTH_AUDIENCE     `proxy --auth-audience`: the proxy's own URL, the tokens' audience
  MCP_AUTH_JWKS_URL     `proxy --auth-jwks-url`: where the issuer's signing keys are
  MCP_AUTH_SCOPES       `proxy --auth-scope`: scopes every request needs, space-separated

\b
Defaults:
  --from    the upstream repository at the pinned commit
  schemas   a source checkout's schema/; an installed mcpgen's per-user cache
            directory: ~/.cache/mcpgen/schema (macOS: ~/Library/Caches/mcpgen/schema)
  pins      a source checkout's schema/pins.json; an installed mcpgen's own pins with
            ~/.local/share/mcpgen/pins.json (what `schema add` wrote) laid over them
  generate  writes the package under the current directory (--out DIR: under DIR)
"""


#: The highest ``proxy --client-rate``: a million requests a second is no bound at all.
MAX_CLIENT_RATE = 1_000_000.0
#: The longest ``proxy --task-after``: a day, in milliseconds.
MAX_TASK_AFTER_MS = 86_400_000


def _progress(message: str) -> None:
    click.echo(f"  {message}", err=True)


def _number(value: float) -> str:
    """``1000000`` for 1e6, ``0.5``, ``1e+308``: as a person would write the bound."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"


class WholeNumber(click.IntRange):
    """A whole-number option from ``low`` to ``high`` (no upper bound when None): a value
    outside is a usage error saying the bounds, which ``--help`` shows too."""

    name = "integer"

    def __init__(self, low: int, high: int | None = None) -> None:
        super().__init__(min=low, max=high)

    def _describe_range(self) -> str:
        return f"{self.min} to {self.max}" if self.max is not None else f"at least {self.min}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        number: int = click.INT.convert(value, param, ctx)
        low, high = cast(int, self.min), self.max
        if high is not None and not low <= number <= high:
            self.fail(f"{number} is not between {low} and {high}", param, ctx)
        if number < low:
            self.fail(f"{number} is less than {low}", param, ctx)
        return number


class RealNumber(click.FloatRange):
    """A number option above ``low`` (or from it, ``low_open=False``) up to ``high``:
    never NaN, and infinite only where it means something (``infinite``: "never")."""

    name = "number"

    def __init__(
        self, low: float, high: float | None = None, low_open: bool = True, infinite: bool = False
    ) -> None:
        super().__init__(min=low, max=high, min_open=low_open)
        self.infinite = infinite

    def _describe_range(self) -> str:
        bound = _number(cast(float, self.min))
        low = f"more than {bound}" if self.min_open else f"at least {bound}"
        if self.max is not None:
            return f"{low}, at most {_number(self.max)}"
        return f"{low}, or inf" if self.infinite else low

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number: float = click.FLOAT.convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        if math.isinf(number) and not (self.infinite and number > 0):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        low, high = cast(float, self.min), self.max
        if self.min_open and number <= low:
            self.fail(f"{_number(number)} is not more than {_number(low)}", param, ctx)
        if number < low:
            self.fail(f"{_number(number)} is less than {_number(low)}", param, ctx)
        if high is not None and number > high:
            self.fail(f"{_number(number)} is more than {_number(high)}", param, ctx)
        return number


@click.group(
    "mcpgen",
    cls=OneLineErrorGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=ENVIRONMENT,
)
@click.version_option(package_name="mcpgen")
@click.option(
    "--schema-dir",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where schemas are fetched to and read from in this run "
    "(default: $MCPGEN_SCHEMA_DIR, else as under Defaults below).",
)
@click.pass_context
def main(ctx: click.Context, schema_dir: Path | None) -> None:
    """Generate typed msgspec bindings for every Model Context Protocol version.

    \b
    Typical session:
      mcpgen schema fetch --version all --from ../shared/mcp-schema
      mcpgen generate --version all
      mcpgen generate --version 2025-11-25 --package acme.mcp --out src
    """
    if schema_dir is not None:
        from .pins import use_schema_dir

        use_schema_dir(schema_dir.expanduser().absolute())
        ctx.call_on_close(lambda: use_schema_dir(None))


@main.group()
def schema() -> None:
    """Fetch and pin the upstream schema files."""


@schema.command("fetch")
@click.option(
    "--version",
    "version",
    default="all",
    show_default=True,
    help="A version, a comma list, or 'all'.",
)
@click.option(
    "--from",
    "source",
    metavar="DIR|URL",
    help="Local mirror or base URL (default: $MCPGEN_SCHEMA_SOURCE, else the pinned upstream URL).",
)
def schema_fetch(version: str, source: str | None) -> None:
    """Fetch pinned schema files, verified by sha256, into the schema directory.

    The schema directory is --schema-dir, else $MCPGEN_SCHEMA_DIR, else as `mcpgen --help`
    says under Defaults; each version goes to its own <version>/ folder.

    \b
    Example:
      mcpgen schema fetch --version all --from ../shared/mcp-schema
    """
    from .fetch import fetch, make_source
    from .pins import load_pins

    pins = load_pins()
    versions = pins.select(version)
    outcome = fetch(versions, make_source(source, pins), pins)
    for v, state in outcome.items():
        click.echo(f"{v}: {state} ({len(pins.versions[v].files)} files)")


@schema.command("add")
@click.argument("version")
@click.option("--commit", required=True, help="Upstream commit the files are taken from.")
@click.option(
    "--from",
    "source",
    metavar="DIR|URL",
    help="Where to read the files (default: $MCPGEN_SCHEMA_SOURCE, else upstream at --commit).",
)
@click.option(
    "--era",
    type=click.Choice(["legacy", "modern"]),
    help="Default: modern unless the schema defines InitializeRequest.",
)
@click.option("--force", is_flag=True, help="Re-pin a version that is already pinned.")
def schema_add(version: str, commit: str, source: str | None, era: str | None, force: bool) -> None:
    """Pin a new protocol version: record its commit, era, dialect and file hashes.

    A version already pinned is re-pinned only with --force. A mirror directory whose
    MANIFEST.md names its upstream commit must hold --commit.

    \b
    Example:
      mcpgen schema add 2027-01-01 --commit 0123abcd --from ../mirror
    """
    import json

    from .errors import SchemaError
    from .fetch import add_pin, read_schema
    from .override_usage import Profile, profile, report
    from .overrides import load_overrides
    from .patches import load_patches
    from .pins import load_pins, version_sort_key

    overrides, patches = load_overrides(), load_patches()
    # The pinned revisions to compare with, read before the new pin (a re-pin) replaces
    # one; closest to the new version first. Those not fetched cannot be compared.
    pins = load_pins()
    order = sorted({*pins.versions, version}, key=version_sort_key)
    at = order.index(version)
    pinned: list[Profile] = []
    for v in sorted(pins.versions, key=lambda v: (abs(order.index(v) - at), v > version)):
        try:
            document = json.loads(read_schema(v, pins))
        except SchemaError:
            continue
        label = f"{v} as pinned before" if v == version else v
        pinned.append(profile(label, pins.versions[v].era, document, overrides, patches))

    pin = add_pin(version, commit, source, era, force=force)
    click.echo(f"pinned {version}: {pin.era} era, {pin.dialect}, {len(pin.files)} files")
    new = profile(version, pin.era, json.loads(read_schema(version)), overrides, patches)
    for line in report(new, pinned):
        click.echo(line)


@main.command()
@click.option(
    "--version",
    "version",
    default="all",
    show_default=True,
    help="A version, a comma list, or 'all'.",
)
@click.option(
    "--package",
    default="mcpgen.generated",
    show_default=True,
    help="Dotted package name to generate.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory the package path is created under (default: the current directory).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list the files that would change.",
)
@click.option(
    "--jobs",
    type=WholeNumber(1, 64),
    metavar="N",
    default=2,
    show_default=True,
    help="Processes used to format with black.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="A $ref to a definition the schema lacks is an error (exit 4); by default it is "
    "a warning naming where it is, and what needs the missing definition is left out.",
)
def generate(
    version: str, package: str, out: Path | None, check: bool, jobs: int, strict: bool
) -> None:
    """Generate bindings for pinned versions (schemas must be fetched first).

    \b
    Examples:
      mcpgen generate --version all
      mcpgen generate --version 2025-11-25 --package acme.mcp --out src
      mcpgen generate --check
    """
    from .emit import package_path
    from .errors import EXIT_CHECK_FAILED
    from .fetch import require_fetched
    from .pipeline import Inputs, generate as run

    started = time.perf_counter()
    inputs = Inputs.load(strict=strict)
    versions = inputs.pins.select(version)
    package_path(package)  # a bad name is said before what is missing to generate it
    require_fetched(versions, inputs.pins, inputs.schema_root)
    changed = run(
        versions,
        package,
        out,
        check=check,
        inputs=inputs,
        progress=_progress,
        jobs=jobs,
    )
    elapsed = time.perf_counter() - started
    if check:
        if changed:
            for path in changed:
                click.echo(f"would change: {path}")
            click.echo(
                f"error: {len(changed)} generated file(s) out of date (hint: run `mcpgen generate`)",
                err=True,
            )
            sys.exit(EXIT_CHECK_FAILED)
        click.echo(f"up to date: {len(versions)} version(s)")
        return
    click.echo(
        f"generated {len(versions)} version(s), {len(changed)} file(s) changed, in {elapsed:.1f}s"
    )


@main.command()
def versions() -> None:
    """List the pinned protocol versions: era, commit, and whether fetched and generated.

    \b
    Example:
      mcpgen versions
    """
    from .fetch import is_fetched
    from .pins import load_pins, module_name
    from .pipeline import bundled_root

    pins = load_pins()
    root = bundled_root()
    rows = [("version", "era", "dialect", "commit", "fetched", "generated")]
    for v in pins.ordered():
        pin = pins.versions[v]
        generated = (root / module_name(v) / "types.py").exists()
        rows.append(
            (v, pin.era, pin.dialect, pin.commit[:12], _yes(is_fetched(v, pins)), _yes(generated))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@main.command()
@click.argument("old")
@click.argument("new")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
def diff(old: str, new: str, fmt: str) -> None:
    """Show what changed between two protocol versions: definitions, methods, capabilities.

    \b
    Examples:
      mcpgen diff 2025-11-25 2026-07-28
      mcpgen diff 2025-06-18 2025-11-25 --format json
    """
    from .diff import diff as compute, to_json, to_markdown
    from .fetch import require_fetched
    from .pipeline import Inputs, build_ir

    inputs = Inputs.load()
    for v in (old, new):
        inputs.pins.get(v)
    require_fetched(dict.fromkeys((old, new)), inputs.pins, inputs.schema_root)
    result = compute(build_ir(old, inputs), build_ir(new, inputs))
    if fmt == "json":
        click.echo(to_json(result).decode())
    else:
        click.echo(to_markdown(result), nl=False)


def _transports(value: str) -> str:
    """``--transport`` checked as click checks a choice (a usage error naming it)."""
    from .errors import UsageError
    from .scaffold import transports_of

    try:
        transports_of(value)
    except UsageError as exc:
        raise click.BadParameter(exc.message) from None
    return value


@main.command()
@click.argument("name")
@click.option(
    "--versions",
    "versions",
    help="Comma list of protocol versions (default: the newest of each era).",
)
@click.option(
    "--transport",
    default="stdio",
    show_default=True,
    callback=lambda ctx, param, value: _transports(value),
    help="stdio, http (Streamable HTTP, with HTTP+SSE beside it), websocket, a comma list"
    " of them, both (stdio,http) or all.",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Project directory (default: ./NAME).",
)
@click.option("--force", is_flag=True, help="Replace a non-empty directory.")
@click.option(
    "--auth",
    is_flag=True,
    help="Protect the HTTP transport with OAuth 2.1 (configured from the environment).",
)
@click.option(
    "--mcpgen",
    "requirement",
    help="How the project requires mcpgen (default: mcpgen by name, this version's compatible range).",
)
def new(
    name: str,
    versions: str | None,
    transport: str,
    directory: Path | None,
    force: bool,
    auth: bool,
    requirement: str | None,
) -> None:
    """Scaffold an MCP server project with typed handlers and vendored bindings.

    \b
    Examples:
      mcpgen new weather-server
      mcpgen new weather-server --transport both --versions 2025-11-25,2026-07-28
      mcpgen new weather-server --transport http --auth
      mcpgen new weather-server --transport all
      cd weather-server && python -m venv .venv && .venv/bin/pip install -e '.[test]'
      .venv/bin/weather-server            # serves over stdio
    """
    from .pipeline import Inputs
    from .scaffold import new_project

    inputs = Inputs.load()
    chosen = inputs.pins.select(versions) if versions else None
    target = new_project(
        name, chosen, transport, directory, force, requirement, inputs, _progress, auth
    )
    click.echo(f"created {target}")
    click.echo(f"next: cd {target} && python -m venv .venv && .venv/bin/pip install -e '.[test]'")


def _protection(
    issuer: str | None,
    audience: str | None,
    jwks_url: str | None,
    scopes: tuple[str, ...],
    transport: str,
) -> Any:
    """The OAuth resource server the ``--auth-*`` options (or their variables) describe;
    None when they describe none."""
    import os

    if not issuer and not audience:
        return None
    if not issuer or not audience:
        raise click.UsageError("--auth-issuer and --auth-audience go together")
    if transport == "stdio":
        raise click.UsageError("--auth-* protects an HTTP or WebSocket proxy, not stdio")
    from mcpgen.runtime.http.auth import JwtVerifier, ResourceServer

    wanted = list(scopes) or os.environ.get("MCP_AUTH_SCOPES", "").split()
    verifier = JwtVerifier(issuer=issuer, audience=audience, jwks_uri=jwks_url or None)
    return ResourceServer(
        verifier, resource=audience, authorization_servers=[issuer], required_scopes=wanted
    )


def _pairs(values: tuple[str, ...], sep: str, what: str) -> dict[str, str]:
    """``--header K: V`` / ``--env K=V`` options as a mapping (a usage error naming the bad one)."""
    found: dict[str, str] = {}
    for value in values:
        key, given, rest = value.partition(sep)
        if not given or not key.strip():
            raise click.BadParameter(f"{value!r} is not {what}")
        found[key.strip()] = rest.strip() if sep == ":" else rest
    return found


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("upstream", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Upstreams from a JSON or TOML file, as hosts list MCP servers (mcpServers: name"
    " → command/args/env or url/headers), each under its name.",
)
@click.option(
    "--timeout",
    type=RealNumber(0, infinite=True),
    metavar="SECONDS",
    default=60.0,
    show_default=True,
    help="Seconds a request waits for the upstream's answer (inf: no limit).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http", "websocket"]),
    default="stdio",
    show_default=True,
    help="How the proxy is served: stdio, http (Streamable HTTP with HTTP+SSE beside it),"
    " websocket.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to listen on.")
@click.option(
    "--port",
    type=WholeNumber(0, 65535),
    metavar="PORT",
    default=3001,
    show_default=True,
    help="HTTP: port to listen on (0: any free port).",
)
@click.option("--path", default="/mcp", show_default=True, help="HTTP: the endpoint's path.")
@click.option(
    "--allow-host",
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="HOST",
    help="HTTP: a Host (and Origin) accepted besides the local names (repeatable).",
)
@click.option(
    "--allow-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    help="HTTP: an Origin accepted besides the local ones and --allow-host (repeatable).",
)
@click.option(
    "--upstream-mode",
    type=click.Choice(["auto", "legacy", "modern"]),
    default="auto",
    show_default=True,
    help="The era spoken to the upstream: found (auto), the initialize handshake (legacy),"
    " or 2026-07-28 on (modern).",
)
@click.option(
    "--upstream-transport",
    type=click.Choice(["auto", "streamable-http", "sse", "websocket"]),
    default="auto",
    show_default=True,
    help="How a URL upstream is reached (auto: Streamable HTTP, falling back to HTTP+SSE;"
    " WebSocket for ws:// URLs).",
)
@click.option(
    "--per-session",
    is_flag=True,
    help="One upstream connection (for a command, one process) per client instead of one"
    " shared by all: for upstreams that keep state per session.",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="A header sent to a URL upstream (repeatable).",
)
@click.option(
    "--env",
    "envs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Added to an upstream command's environment (repeatable).",
)
@click.option("--name", help="The name the proxy gives itself (default: the upstream's).")
@click.option(
    "--client-rate",
    type=RealNumber(0, MAX_CLIENT_RATE),
    metavar="PER_SECOND",
    default=50.0,
    show_default=True,
    help="Requests per second each client may send on average (twice as many at once).",
)
@click.option(
    "--client-in-flight",
    type=WholeNumber(1),
    metavar="N",
    default=32,
    show_default=True,
    help="Requests each client may have unanswered at a time.",
)
@click.option(
    "--task-after",
    "task_after_ms",
    type=WholeNumber(0, MAX_TASK_AFTER_MS),
    metavar="MS",
    help="A call still running after MS milliseconds becomes the proxy's task for a client"
    " that takes tasks, its result kept until asked (any tool; default: only tools the"
    " upstream runs as tasks).",
)
@click.option(
    "--strict-tasks",
    is_flag=True,
    help="A tool the upstream runs only as a task is refused as a plain call, as the"
    " upstream refuses it (default: the proxy follows the upstream's task for clients that"
    " take none).",
)
@click.option(
    "--auth-issuer",
    envvar="MCP_AUTH_ISSUER",
    metavar="URL",
    help="HTTP: require OAuth 2.1 access tokens (JWTs) from this authorization server"
    " [env: MCP_AUTH_ISSUER].",
)
@click.option(
    "--auth-audience",
    envvar="MCP_AUTH_AUDIENCE",
    metavar="URL",
    help="The proxy's own URL, the audience its tokens must name [env: MCP_AUTH_AUDIENCE].",
)
@click.option(
    "--auth-jwks-url",
    envvar="MCP_AUTH_JWKS_URL",
    metavar="URL",
    help="Where the issuer's signing keys are (default: from its metadata)"
    " [env: MCP_AUTH_JWKS_URL].",
)
@click.option(
    "--auth-scope",
    "auth_scopes",
    multiple=True,
    metavar="SCOPE",
    help="A scope every request needs (repeatable) [env: MCP_AUTH_SCOPES, space-separated].",
)
def proxy(
    upstream: tuple[str, ...],
    config_file: Path | None,
    timeout: float,
    transport: str,
    host: str,
    port: int,
    path: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    upstream_mode: str,
    upstream_transport: str,
    per_session: bool,
    headers: tuple[str, ...],
    envs: tuple[str, ...],
    name: str | None,
    client_rate: float,
    client_in_flight: int,
    task_after_ms: int | None,
    strict_tasks: bool,
    auth_issuer: str | None,
    auth_audience: str | None,
    auth_jwks_url: str | None,
    auth_scopes: tuple[str, ...],
) -> None:
    """Serve an MCP server again: on another transport, to clients of any version.

    UPSTREAM is a URL (http://, https://, ws://, wss://) or, after --, the command that
    starts a stdio server; --config FILE names several, each served under its name. Each
    client negotiates its own protocol version with the proxy; the proxy negotiates one
    with each upstream and re-shapes every message between them, so a 2026-07-28 client
    reaches a legacy server and the reverse.

    \b
    Examples:
      mcpgen proxy --transport http --port 8000 -- python -m some_server
      mcpgen proxy --transport stdio https://example.com/mcp
      mcpgen proxy --transport websocket --port 8000 -- npx -y some-mcp-server
      mcpgen proxy --transport http --upstream-mode legacy http://127.0.0.1:3001/mcp
      mcpgen proxy --transport http --port 8000 --config servers.json \\
          --auth-issuer https://login.example --auth-audience https://mcp.example/mcp
    """
    from mcpgen.runtime.client import CLIENT_LIMITS, Mode
    from mcpgen.runtime.gateway import ClientQuota, Proxy, Upstream
    from mcpgen.runtime.gateway.config import ConfigError, load_config
    from mcpgen.runtime.gateway.proxy import Transport, UpstreamUnreachable

    from .errors import EXIT_UPSTREAM, GeneratorError
    from mcpgen.runtime.gateway.upstream import UrlTransport

    words = list(upstream)
    if config_file is not None and words:
        raise click.UsageError("give UPSTREAM or --config, not both")
    if config_file is None and not words:
        raise click.UsageError("missing UPSTREAM: a URL, or -- and a command (or --config FILE)")
    if config_file is not None:
        try:
            targets: Any = load_config(config_file)
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="--config") from None
    else:
        try:
            targets = Upstream.of(
                words[0] if len(words) == 1 and "://" in words[0] else words,
                mode=cast("Mode", upstream_mode),
                transport=cast("UrlTransport", upstream_transport),
                per_session=per_session,
                headers=_pairs(headers, ":", "'NAME: VALUE'") or None,
                env=_pairs(envs, "=", "NAME=VALUE") or None,
            )
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="UPSTREAM") from None
    limits = CLIENT_LIMITS.replace(request_timeout=timeout)
    auth = _protection(auth_issuer, auth_audience, auth_jwks_url, auth_scopes, transport)
    try:
        burst = max(1, int(2 * client_rate))
        quota = ClientQuota(per_second=client_rate, burst=burst, in_flight=client_in_flight)
        served = Proxy(
            targets,
            name=name,
            upstream_limits=limits,
            auth=auth,
            quota=quota,
            task_after_ms=task_after_ms,
            strict_tasks=strict_tasks,
        )
    except ValueError as exc:  # mounts that would confuse names
        raise click.BadParameter(str(exc), param_hint="--config") from None
    try:
        if transport == "stdio":
            served.run("stdio")
        else:
            served.run(
                cast("Transport", transport),
                host=host,
                port=port,
                path=path,
                allowed_hosts=allowed_hosts,
                allowed_origins=(*allowed_hosts, *allowed_origins),
            )
    except UpstreamUnreachable as exc:
        raise GeneratorError(
            exc.message,
            "run the upstream command alone, or open its URL, to see why; the proxy serves"
            " nothing until its upstreams answer",
            EXIT_UPSTREAM,
        ) from None
