"""The ``mcpgen`` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from .errors import McpgenError

EXAMPLES = {
    "fetch": "mcpgen schema fetch --version all --from ../shared/mcp-schema",
    "add": "mcpgen schema add 2027-01-01 --commit 0123abc… --from ../mirror",
    "generate": "mcpgen generate --version all --package acme.mcp --out src",
    "check": "mcpgen generate --check",
}


def _progress(message: str) -> None:
    click.echo(f"  {message}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except McpgenError as exc:
            click.echo(f"error: {exc.one_line()}", err=True)
            ctx.exit(exc.code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpgen")
def main() -> None:
    """Generate typed msgspec bindings for every Model Context Protocol version.

    \b
    Typical session:
      mcpgen schema fetch --version all --from ../shared/mcp-schema
      mcpgen generate --version all
      mcpgen generate --version 2025-11-25 --package acme.mcp --out src
    """


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
    """Fetch pinned schema files into schema/<version>/, verified by sha256.

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
    help="Where to read the files (default: upstream at --commit).",
)
@click.option(
    "--era",
    type=click.Choice(["legacy", "modern"]),
    help="Default: modern unless the schema defines InitializeRequest.",
)
def schema_add(version: str, commit: str, source: str | None, era: str | None) -> None:
    """Pin a new protocol version: record its commit, era, dialect and file hashes.

    \b
    Example:
      mcpgen schema add 2027-01-01 --commit 0123abcd --from ../mirror
    """
    from .fetch import add_pin

    pin = add_pin(version, commit, source, era)
    click.echo(f"pinned {version}: {pin.era} era, {pin.dialect}, {len(pin.files)} files")


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
    help="Directory the package path is created under (default: generated/ for the default package, else the current directory).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list the files that would change.",
)
@click.option("--jobs", default=2, show_default=True, help="Processes used to format with black.")
def generate(version: str, package: str, out: Path | None, check: bool, jobs: int) -> None:
    """Generate bindings for pinned versions (schemas must be fetched first).

    \b
    Examples:
      mcpgen generate --version all
      mcpgen generate --version 2025-11-25 --package acme.mcp --out src
      mcpgen generate --check
    """
    from .errors import EXIT_CHECK_FAILED
    from .pipeline import Inputs, generate as run

    started = time.perf_counter()
    inputs = Inputs.load()
    versions = inputs.pins.select(version)
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
