"""One-line CLI errors: every failure, mcpgen's own and click's usage errors alike, is
``error: <what> (hint: <fix>)`` on stderr with its documented exit code (see ``errors``)."""

from __future__ import annotations

import difflib
import errno
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from .errors import EXIT_FILESYSTEM, EXIT_USAGE, GeneratorError


def fail(line: str, code: int) -> NoReturn:
    """Print ``error: <line>`` as the command's only line on stderr and exit with ``code``."""
    text = " ".join(line.split())  # a path or value with a newline stays on one line
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    click.echo(f"error: {text}", err=True)
    raise click.exceptions.Exit(code)


#: click shows the group's help for ``mcpgen`` or ``mcpgen schema`` alone (click ≥ 8.2
#: raises this for it): that is help, not an error.
_HELP_INSTEAD: tuple[type[BaseException], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)


def _sentence(text: str) -> str:
    """click's ``Missing argument 'X'.`` as ``missing argument 'X'``."""
    text = " ".join(text.split()).rstrip(".")
    if text[:1].isupper() and text[1:2].islower():
        text = text[0].lower() + text[1:]
    return text


def usage_line(exc: click.ClickException) -> str:
    """One line for any error click raises while reading the command line."""
    ctx = exc.ctx if isinstance(exc, click.UsageError) else None
    path = ctx.command_path if ctx is not None else "mcpgen"
    command_name = getattr(exc, "command_name", None)  # click ≥ 8.4: NoSuchCommand
    if isinstance(exc, click.exceptions.NoSuchOption) or command_name is not None:
        what = _sentence(exc.message)  # without click's "Did you mean" sentence
    else:
        what = _sentence(exc.format_message())
    hints: list[str] = []
    group = ctx.command if ctx is not None else None
    if (
        isinstance(group, click.Group)
        and ctx is not None
        and (command_name is not None or what.startswith("no such command"))
    ):
        commands = group.list_commands(ctx)
        typed = command_name or (what.split("'")[1] if "'" in what else "")
        close = difflib.get_close_matches(typed, commands) if typed else []
        hints.append(f"the commands are {', '.join(commands)}")
    else:
        close = list(getattr(exc, "possibilities", None) or [])
        if ctx is not None and isinstance(
            exc, (click.exceptions.MissingParameter, click.exceptions.BadArgumentUsage)
        ):
            usage = ctx.get_usage().removeprefix("Usage:").strip()
            hints.append(f"usage: {usage}")
    hints.append(f"see `{path} --help`")
    hint = "; ".join(hints)
    if close:
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? {hint}"
    return f"{path}: {what} (hint: {hint})"


class OneLineErrorCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return _parse_in(ctx, lambda: super(OneLineErrorCommand, self).parse_args(ctx, args))


def _parse_in(ctx: click.Context, parse: Callable[[], list[str]]) -> list[str]:
    """Parse, naming the command in errors click's option parser raises without it."""
    try:
        return parse()
    except click.UsageError as exc:
        if exc.ctx is None:
            exc.ctx = ctx
        raise


class OneLineErrorGroup(click.Group):
    """Turns every error into ``error: <what> (hint: <fix>)`` on one line with its exit
    code: mcpgen's own (:class:`GeneratorError`) and click's usage errors (exit 2), whichever
    group or command raises them while parsing or running."""

    command_class = OneLineErrorCommand
    group_class = type  # subgroups are OneLineErrorGroup too

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return _parse_in(ctx, lambda: super(OneLineErrorGroup, self).parse_args(ctx, args))

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _one_line_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_errors():
            return super().invoke(ctx)


@contextmanager
def _one_line_errors() -> Iterator[None]:
    try:
        yield
    except GeneratorError as exc:
        fail(exc.one_line(), exc.code)
    except _HELP_INSTEAD:
        raise
    except click.ClickException as exc:
        fail(usage_line(exc), EXIT_USAGE)
    except BrokenPipeError:
        raise  # the reader went away (`mcpgen diff ... | head`): click ends quietly
    except OSError as exc:
        fail(_os_error_line(exc), EXIT_FILESYSTEM)


def _os_error_line(exc: OSError) -> str:
    """A file system failure no command turned into a message of its own."""
    what = exc.strerror or type(exc).__name__
    where = exc.filename if exc.filename is not None else ""
    message = f"{where}: {what}" if where else f"{what} ({exc})"
    if exc.errno == errno.ENOSPC:
        return f"{message} (hint: free some space on that disk, then run the command again)"
    return (
        f"{message} (hint: check the path: each parent must be a directory you can write "
        "to; choose another one with --out, --schema-dir or --dir)"
    )


__all__ = ["OneLineErrorCommand", "OneLineErrorGroup", "fail", "usage_line"]
