"""Every numeric option of every ``mcpgen`` command is checked when the command line is
read: a value out of its bounds (a port above 65535, a count of zero, a negative or NaN
duration, an infinite rate) is a usage error, one line with a hint and exit 2, and a good
value right after it reaches what the command runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import pytest

from mcpgen.generator.cli import RealNumber, WholeNumber, main
from mcpgen.generator.errors import EXIT_USAGE
from mcpgen.runtime.gateway.proxy import Proxy
from support.cli_runner import Ran, mcpgen

#: An upstream command (never started: ``Proxy.run`` is replaced in these tests).
UPSTREAM = ("--", sys.executable, "-c", "pass")


def all_options() -> dict[tuple[str, str], click.Option]:
    """(command path, option name) → option, over every command and group of ``mcpgen``."""
    found: dict[tuple[str, str], click.Option] = {}

    def walk(command: click.Command, path: str) -> None:
        for param in command.params:
            if isinstance(param, click.Option) and param.name:
                found[(path, param.opts[0])] = param
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")

    walk(main, "mcpgen")
    return found


NUMERIC = (click.types.IntParamType, click.types.FloatParamType)

#: Per kind of numeric option: the command, the option, values it refuses (with what the
#: one line says), and a good value.
CLASSES = [
    pytest.param(
        "proxy",
        "--port",
        [
            ("99999", "99999 is not between 0 and 65535"),
            ("65536", "65536 is not between 0 and 65535"),
            ("-1", "-1 is not between 0 and 65535"),
            ("80.5", "'80.5' is not a valid integer"),
            ("", "'' is not a valid integer"),
        ],
        "65535",
        id="port",
    ),
    pytest.param(
        "proxy",
        "--client-in-flight",
        [("0", "0 is less than 1"), ("-3", "-3 is less than 1"), ("many", "not a valid integer")],
        "1",
        id="count",
    ),
    pytest.param(
        "proxy",
        "--task-after",
        [
            ("-1", "-1 is not between 0 and 86400000"),
            ("86400001", "86400001 is not between 0 and 86400000"),
            ("1e3", "'1e3' is not a valid integer"),
            ("9" * 5000, "is not a valid integer"),  # longer than int() reads
        ],
        "0",
        id="milliseconds",
    ),
    pytest.param(
        "proxy",
        "--timeout",
        [
            ("0", "0 is not more than 0"),
            ("-1", "-1 is not more than 0"),
            ("nan", "'nan' is not a number"),
            ("-inf", "'-inf' is not a finite number"),
            ("soon", "'soon' is not a valid float"),
        ],
        "inf",
        id="seconds",
    ),
    pytest.param(
        "proxy",
        "--client-rate",
        [
            ("0", "0 is not more than 0"),
            ("inf", "'inf' is not a finite number"),
            ("NaN", "'NaN' is not a number"),
            ("1e308", "1e+308 is more than 1000000"),
        ],
        "0.5",
        id="rate",
    ),
    pytest.param(
        "generate",
        "--jobs",
        [("0", "0 is not between 1 and 64"), ("65", "65 is not between 1 and 64")],
        "1",
        id="processes",
    ),
]


def test_every_numeric_option_is_bounded_and_tested() -> None:
    """No numeric option escapes: each is a bounded type of the CLI's (saying its bounds in
    the error and in ``--help``), and the table of this module tries each one."""
    numeric = {
        key: option
        for key, option in all_options().items()
        if isinstance(option.type, NUMERIC) or option.type in (click.INT, click.FLOAT)
    }
    assert numeric, "the walk found the options"
    for key, option in numeric.items():
        assert isinstance(option.type, (WholeNumber, RealNumber)), key
    tried = {(f"mcpgen {p.values[0]}", p.values[1]) for p in CLASSES}
    assert set(numeric) == tried


def run_proxy(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Ran, dict[str, Any]]:
    """``mcpgen proxy ARGS`` with ``Proxy.run`` recording what it was given instead of
    serving."""
    seen: dict[str, Any] = {}

    def record(self: Proxy, transport: str = "stdio", **options: Any) -> None:
        seen.update(proxy=self, transport=transport, **options)

    monkeypatch.setattr(Proxy, "run", record)
    return mcpgen("proxy", *args, *UPSTREAM), seen


def assert_usage_error(ran: Ran, option: str, says: str) -> None:
    assert ran.returncode == EXIT_USAGE, (ran.stdout, ran.stderr)
    (line,) = ran.stderr.splitlines()
    assert line.startswith("error: mcpgen ") and f"'{option}'" in line, line
    assert says in line and "(hint: " in line and line.endswith(")"), line
    assert ran.stdout == ""


@pytest.mark.parametrize("command, option, bad, good", CLASSES)
def test_a_numeric_option_out_of_bounds_is_a_usage_error_then_a_good_one_runs(
    command: str,
    option: str,
    bad: list[tuple[str, str]],
    good: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fetched: Path,
) -> None:
    for value, says in bad:
        if command == "proxy":
            ran, seen = run_proxy(monkeypatch, "--transport", "http", f"{option}={value}")
            assert seen == {}, "nothing is served"
        else:
            ran = mcpgen(command, f"{option}={value}", "--out", str(tmp_path), cwd=tmp_path)
        assert_usage_error(ran, option, says)
    assert list(tmp_path.iterdir()) == [], "a usage error writes nothing"

    if command == "generate":
        out = tmp_path / "out"
        ran = mcpgen(
            "generate", "--version", "2024-11-05", "--package", "p.mcp", "--out", str(out),
            option, good,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert (out / "p" / "mcp" / "v2024_11_05" / "types.py").is_file()
        return
    ran, seen = run_proxy(monkeypatch, "--transport", "http", option, good)
    assert ran.returncode == 0, ran.stderr
    proxy: Proxy = seen["proxy"]
    quota = proxy._options["middleware"][0].quota  # the meter of the --client-* bounds
    given = {
        "--port": seen["port"],
        "--client-in-flight": quota.in_flight,
        "--task-after": proxy.task_after_ms,
        "--timeout": proxy.upstream_limits.request_timeout,
        "--client-rate": quota.per_second,
    }[option]
    kind = float if option in ("--timeout", "--client-rate") else int
    assert given == kind(good) and type(given) is kind, given


def test_the_proxy_takes_the_scaffolds_host_and_origin_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--allow-host`` and ``--allow-origin`` as a scaffolded server spells them (and the
    older ``--allowed-host``): hosts are accepted as origins too, origins only as origins."""
    ran, seen = run_proxy(
        monkeypatch,
        *("--transport", "http", "--allow-host", "a.example", "--allowed-host", "b.example"),
        *("--allow-origin", "https://app.example"),
    )
    assert ran.returncode == 0, ran
    assert list(seen["allowed_hosts"]) == ["a.example", "b.example"]
    assert list(seen["allowed_origins"]) == ["a.example", "b.example", "https://app.example"]
