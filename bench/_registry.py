"""The registry peers of ``stdio_calls`` and ``http_calls`` and issue 12's acceptance ratios.

Two more servers can join the interleaved rounds (``--peers`` or ``--app``):

* ``ours-app`` — the same ``echo`` tool written on mcpgen's registry (``App`` +
  ``@app.tool def echo(text: str) -> str``), the same observable answer as ``ours``;
* ``sdk-mcpserver`` — the official SDK's decorator server (``MCPServer`` +
  ``@server.tool()``), the peer a server author would compare the registry with.

Issue 12 accepts the registry when, in the same run, a registry tool call costs the server
at most 10% more CPU than the same tool on the raw stubs (``ours-app`` / ``ours``) and is at
least 5× faster than ``MCPServer`` (stdio: server CPU per call; HTTP: requests/s at
concurrency 1 and 32). Each ratio is given two ways: the ratio of the medians over rounds
and the median of the per-round ratios (the servers of one round ran back to back, so the
latter cancels more of the machine's drift); the verdict uses the former, as the other
ratios of these benchmarks do.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ._util import heading, note, table, verdict

DEFAULT_PEERS = ("ours", "sdk", "bare")
"""What the benchmarks measure unless asked for more (their figures of record)."""
ALL_PEERS = ("ours", "ours-app", "sdk", "sdk-mcpserver", "bare")
APP = "ours-app"
STUBS = "ours"
MCPSERVER = "sdk-mcpserver"
GOAL_CPU_OVERHEAD = 1.10
"""``ours-app``'s server CPU per call ≤ this × ``ours``'s."""
GOAL_SPEEDUP = 5.0
"""``ours-app`` ≥ this × ``sdk-mcpserver`` (stdio: server CPU per call; HTTP: req/s)."""

S = TypeVar("S")


def peer_list(text: str) -> list[str]:
    """``--peers``: comma-separated keys of ``ALL_PEERS``, each at most once."""
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in ALL_PEERS]
    if not keys or unknown or len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(
            f"a comma-separated list of distinct servers among {', '.join(ALL_PEERS)}"
        )
    return keys


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--peers",
        type=peer_list,
        default=None,
        help=f"servers to measure, in this order ({','.join(DEFAULT_PEERS)}; "
        f"all: {','.join(ALL_PEERS)})",
    )
    p.add_argument(
        "--app",
        action="store_true",
        help=f"add the registry peers {APP} and {MCPSERVER} (= --peers {','.join(ALL_PEERS)})",
    )


def selected(args: argparse.Namespace, specs: Mapping[str, S]) -> list[S]:
    """The specs ``--peers`` / ``--app`` ask for (the default set without either)."""
    keys: Sequence[str] = args.peers or (ALL_PEERS if args.app else DEFAULT_PEERS)
    if args.app and args.peers:
        keys = [*keys, *(k for k in (APP, MCPSERVER) if k not in keys)]
    return [specs[k] for k in keys]


def _median_of_ratios(a: Sequence[float], b: Sequence[float], invert: bool = False) -> float:
    pairs = [(x, y) for x, y in zip(a, b) if x > 0 and y > 0]
    if not pairs:
        return 0.0
    return statistics.median([(y / x) if invert else (x / y) for x, y in pairs])


def acceptance(
    label: str,
    cells: Mapping[str, Callable[[str], tuple[list[float], list[float]]]],
    speed_by: str,
) -> dict[str, Any]:
    """Print and return issue 12's ratios. ``cells``: cell name (``stdio``, ``c1``, …) →
    a function of a server key giving its per-round (rate, server CPU per call);
    ``speed_by`` is what the 5× verdict reads: ``"cpu"`` or ``"rate"``."""
    heading(f"{label}: issue 12's acceptance, the registry ({APP}) in the same run")
    note(f"{APP} / {STUBS}: server CPU per call, goal ≤ {GOAL_CPU_OVERHEAD:.2f}×")
    note(
        f"{APP} vs {MCPSERVER}: calls/s {APP}/{MCPSERVER} and server CPU {MCPSERVER}/{APP}, "
        f"goal ≥ {GOAL_SPEEDUP:.0f}× by {'server CPU per call' if speed_by == 'cpu' else 'req/s'}"
    )
    note("each as: ratio of the medians over rounds (per-round ratios' median)")
    out: dict[str, Any] = {}
    rows: list[list[object]] = []
    for cell, of in cells.items():
        app_rate, app_cpu = of(APP)
        stub_rate, stub_cpu = of(STUBS)
        sdk_rate, sdk_cpu = of(MCPSERVER)
        med = statistics.median
        overhead = med(app_cpu) / med(stub_cpu)
        overhead_rounds = _median_of_ratios(app_cpu, stub_cpu)
        rate_x = med(app_rate) / med(sdk_rate)
        rate_rounds = _median_of_ratios(app_rate, sdk_rate)
        cpu_x = med(sdk_cpu) / med(app_cpu)
        cpu_rounds = _median_of_ratios(app_cpu, sdk_cpu, invert=True)
        speed = cpu_x if speed_by == "cpu" else rate_x
        overhead_ok = overhead <= GOAL_CPU_OVERHEAD
        speed_ok = speed >= GOAL_SPEEDUP
        out[cell] = {
            "cpu_app_over_stubs": round(overhead, 3),
            "cpu_app_over_stubs_per_round": [round(a / b, 3) for a, b in zip(app_cpu, stub_cpu)],
            "cpu_app_over_stubs_median_of_rounds": round(overhead_rounds, 3),
            "rate_app_over_mcpserver": round(rate_x, 3),
            "rate_app_over_mcpserver_median_of_rounds": round(rate_rounds, 3),
            "cpu_mcpserver_over_app": round(cpu_x, 3),
            "cpu_mcpserver_over_app_median_of_rounds": round(cpu_rounds, 3),
            "server_cpu_us": {
                k: round(med(c), 1)
                for k, c in ((STUBS, stub_cpu), (APP, app_cpu), (MCPSERVER, sdk_cpu))
            },
            "overhead_met": overhead_ok,
            "speedup_by": speed_by,
            "speedup_met": speed_ok,
        }
        rows.append(
            [
                cell,
                f"{med(stub_cpu):.1f}",
                f"{med(app_cpu):.1f}",
                f"{med(sdk_cpu):.1f}",
                f"{overhead:.3f}× ({overhead_rounds:.3f}×) {verdict(overhead_ok)}",
                f"{rate_x:.2f}× ({rate_rounds:.2f}×)"
                + (f" {verdict(speed_ok)}" if speed_by == "rate" else ""),
                f"{cpu_x:.2f}× ({cpu_rounds:.2f}×)"
                + (f" {verdict(speed_ok)}" if speed_by == "cpu" else ""),
            ]
        )
    print(
        table(
            [
                "cell",
                f"CPU µs {STUBS}",
                APP,
                MCPSERVER,
                f"CPU {APP}/{STUBS}",
                f"rate {APP}/{MCPSERVER}",
                f"CPU {MCPSERVER}/{APP}",
            ],
            rows,
        )
    )
    met = all(v["overhead_met"] and v["speedup_met"] for v in out.values())
    note(f"issue 12 acceptance ({label}): {verdict(met)}")
    return {
        "goal_cpu_overhead": GOAL_CPU_OVERHEAD,
        "goal_speedup": GOAL_SPEEDUP,
        "met": met,
        **out,
    }


def wanted(keys: Sequence[str]) -> bool:
    """Whether the servers measured allow the acceptance ratios."""
    return all(k in keys for k in (STUBS, APP, MCPSERVER))
