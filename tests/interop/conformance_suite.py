"""Run the official MCP conformance suite against examples.everything and our client.

``python tests/interop/conformance_suite.py`` (``make conformance``): installs Node 22 and the
suite from the npm registry into ``.cache/conformance`` (once), starts the everything
server over HTTP on 127.0.0.1, runs the server suites (0.2.0-alpha.12 at both requirement
levels, 0.1.16 ``--suite all``; under uvicorn, then again under granian and hypercorn
serving ``examples.everything.asgi:app``) and the client suites at both levels (authorization
included; the client credentials extension's two scenarios scored too, and 2025-03-26's
two authorization scenarios run at that revision), then the server suites at both levels
again through ``mcpgen proxy`` in front of the everything server, the proxy's upstream
speaking the other era (``--proxy``: those runs alone; ``--servers``: the runs under the
other ASGI servers alone); prints the counts, and exits
non-zero on any failure that counts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "tests") not in sys.path:  # run as a script, not under pytest
    sys.path.insert(0, str(ROOT / "tests"))

from support.node_tools import node_bin, npm_package, wait_listening  # noqa: E402
from support.processes import free_port, stop  # noqa: E402

CACHE = ROOT / ".cache" / "conformance"
ALPHA = "0.2.0-alpha.12"
STABLE = "0.1.16"
LEVELS = ("2025-11-25", "2026-07-28")
#: The suite runs these (the 2026-07-28 tasks extension, SEP-2663) but does not score
#: them; we do: any failure of theirs fails the run, and so does one not running.
TASK_SCENARIOS = frozenset(
    f"tasks-{name}"
    for name in (
        "lifecycle",
        "capability-negotiation",
        "wire-fields",
        "request-state-removal",
        "mrtr-input",
        "request-headers",
        "dispatch-and-envelope",
        "status-notifications",
        "required-task-error",
        "mrtr-composition",
    )
)
#: Client scenarios the suite runs at each level without scoring them (the
#: ``io.modelcontextprotocol/oauth-client-credentials`` extension); we score them. Its other
#: unscored authorization extensions (DPoP, workload identity federation,
#: enterprise-managed authorization) are reported, not scored: the client does not
#: implement them.
CLIENT_EXTENSIONS = frozenset({"auth/client-credentials-jwt", "auth/client-credentials-basic"})
#: 2025-03-26's authorization (no protected resource metadata): in no requirement set,
#: run one by one at that revision and scored.
LEGACY_AUTH = (
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
)
#: Result folders are named ``<scenario>-<ISO timestamp with : and . as ->``.
_TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> int:
    return subprocess.run(
        cmd, cwd=cwd, timeout=timeout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ).returncode


def suite(version: str, env: dict[str, str]) -> Path:
    folder = npm_package(
        f"@modelcontextprotocol/conformance@{version}", CACHE / f"suite-{version}", env
    )
    return folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)


def tally(out: Path) -> dict[str, Tally]:
    """Checks per scenario from the suite's ``checks.json`` files."""
    scenarios: dict[str, Tally] = {}
    for checks in sorted(out.rglob("checks.json")):
        name = _TIMESTAMP.sub("", str(checks.parent.relative_to(out)))
        t = scenarios.setdefault(name, Tally())
        for check in json.loads(checks.read_text()):
            if check["status"] == "SUCCESS":
                t.passed += 1
            elif check["status"] == "FAILURE":
                t.failed += 1
                t.failures.append(f"{check['id']}: {check.get('errorMessage', '')[:160]}")
    return scenarios


def report(title: str, scenarios: dict[str, Tally], scored: set[str] | None) -> int:
    """Print the counts; returns the failed checks that count (scored scenarios only,
    when a requirement level gives the scored set)."""

    def counts(name: str) -> bool:
        return scored is None or name.removeprefix("server-") in scored

    passed = sum(t.passed for t in scenarios.values())
    failed = sum(t.failed for n, t in scenarios.items() if counts(n))
    unscored = sum(t.failed for n, t in scenarios.items() if not counts(n))
    extra = f" ({unscored} more in unscored scenarios)" if unscored else ""
    print(f"{title}: {passed} checks passed, {failed} failed{extra}, {len(scenarios)} scenarios")
    for name, t in scenarios.items():
        if t.failed and counts(name):
            print(f"  FAILED {name}: " + "; ".join(t.failures[:3]))
    failing_unscored = [
        f"{n} ({t.failed})" for n, t in scenarios.items() if t.failed and not counts(n)
    ]
    if failing_unscored:
        print("  unscored, with failures: " + ", ".join(failing_unscored))
    if scored is not None:
        missing = sorted(
            n for n in scored if not any(s.removeprefix("server-") == n for s in scenarios)
        )
        if missing:
            print(f"  NOT RUN: {', '.join(missing)}")
            failed += len(missing)
    return failed


def scored_scenarios(
    node: list[str], entry: Path, level: str, env: dict[str, str], kind: str
) -> set[str]:
    """The scenarios of ``kind`` ("Server"/"Client") a requirement level scores."""
    listing = subprocess.run(
        [*node, str(entry), "list", "--requirements", level],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    ).stdout
    names: set[str] = set()
    section = ""
    for line in listing.splitlines():
        if line.startswith("Run and reported"):
            break
        if line.endswith("):") or line.endswith(":"):
            section = line.split()[0]
        elif line.startswith("  - ") and section == kind:
            names.add(line[4:].strip())
    return names


#: The scenarios a freshly scaffolded server must pass: they need no fixtures.
SCAFFOLD_SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")


def check_scaffold(node: list[str], alpha: Path, env: dict[str, str], tmp: Path) -> int:
    """Scaffold an HTTP project with ``mcpgen new``, serve it, and run the fixture-free
    scenarios against it; returns the failed checks."""
    made = subprocess.run(
        [sys.executable, "-m", "mcpgen", "new", "conformance-demo", "--transport", "http"],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if made.returncode != 0:
        print(f"scaffold: mcpgen new failed: {made.stderr.strip()}")
        return 1
    port = free_port()
    project = tmp / "conformance-demo"
    server = subprocess.Popen(
        [sys.executable, "-m", "conformance_demo", "--transport", "http", "--port", str(port)],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        stderr=subprocess.DEVNULL,
    )
    failed = 0
    try:
        wait_listening(port, 30)
        url = f"http://127.0.0.1:{port}/mcp"
        for scenario in SCAFFOLD_SCENARIOS:
            out = tmp / f"scaffold-{scenario}"
            args = [
                "server",
                "--url",
                url,
                "--scenario",
                scenario,
                "--spec-version",
                "2025-11-25",
                "-o",
                str(out),
            ]
            code = run([*node, str(alpha), *args], ROOT, 300, env)
            failed += code != 0
            failed += report(f"scaffolded server, {scenario}", tally(out), None)
    finally:
        stop(server)
    return failed


#: The upstream era a proxy speaks for each requirement level's run: the other one, so that
#: every scenario crosses the bridge between the eras.
PROXY_UPSTREAM = {"2025-11-25": "modern", "2026-07-28": "legacy"}
#: Checks no proxy can pass in front of a legacy upstream, by the spec's own rules, and why.
BEYOND_A_LEGACY_UPSTREAM = {
    "sep-2322-elicitation-incomplete": "the fixture must name its elicitation's input key"
    ' "user_name"; a 2025-11-25 server asks with an elicitation/create request, which has'
    " no key, so a proxy names it itself",
    "sep-2663-mrtr-synchronous-before-task-creation": "the fixture must ask its first"
    " question before it becomes a task; a 2025-11-25 server runs a tool it runs only as a"
    " task wholly inside its task, so a proxy cannot tell a question asked before the task"
    " from one asked in it (the proxy makes such a call a task at once)",
}


def excuse(scenarios: dict[str, Tally], excused: dict[str, str]) -> None:
    """Take the ``excused`` checks' failures out of the count, printing why each is."""
    for name, t in scenarios.items():
        kept = [f for f in t.failures if f.split(":", 1)[0] not in excused]
        for failure in t.failures:
            check = failure.split(":", 1)[0]
            if check in excused:
                print(f"  not counted, {name}: {check}: {excused[check]}")
        t.failed -= len(t.failures) - len(kept)
        t.failures = kept


def check_proxy(node: list[str], alpha: Path, env: dict[str, str], tmp: Path) -> int:
    """The server suites at both requirement levels through ``mcpgen proxy`` in front of
    the everything server (over stdio), the proxy's upstream pinned to the other era;
    returns the failed checks of scored scenarios."""
    failed = 0
    for level, upstream_mode in PROXY_UPSTREAM.items():
        port = free_port()
        proxy = subprocess.Popen(
            [sys.executable, "-m", "mcpgen", "proxy", "--transport", "http", "--port", str(port)]
            + ["--upstream-mode", upstream_mode, "--client-rate", "1000", "--client-in-flight"]
            + ["256", "--strict-tasks", "--", sys.executable, "-m", "examples.everything"],
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_listening(port, 60)
            out = tmp / f"proxy-{level}"
            url = f"http://127.0.0.1:{port}/mcp"
            args = ["server", "--url", url, "--requirements", level, "-o", str(out)]
            run([*node, str(alpha), *args], ROOT, 900, env)
            scored = scored_scenarios(node, alpha, level, env, "Server")
            if level == "2026-07-28":
                scored |= TASK_SCENARIOS
            scenarios = tally(out)
            excuse(scenarios, BEYOND_A_LEGACY_UPSTREAM if upstream_mode == "legacy" else {})
            title = f"server through mcpgen proxy ({upstream_mode} upstream), {ALPHA}"
            failed += report(f"{title} --requirements {level}", scenarios, scored)
        finally:
            stop(proxy)
    return failed


def check_server(
    node: list[str], alpha: Path, stable: Path, env: dict[str, str], tmp: Path, url: str, by: str
) -> int:
    """The server suites against ``url``: the alpha at both requirement levels (its
    scored scenarios and the tasks extension's), the stable one whole; ``by`` says what
    serves it, in the titles."""
    failures = 0
    for level in LEVELS:
        out = tmp / f"server-{level}"
        args = ["server", "--url", url, "--requirements", level, "-o", str(out)]
        code = run([*node, str(alpha), *args], ROOT, 600, env)
        scored = scored_scenarios(node, alpha, level, env, "Server")
        if level == "2026-07-28":
            scored |= TASK_SCENARIOS
        failures += code != 0
        failures += report(f"server{by}, {ALPHA} --requirements {level}", tally(out), scored)
    out = tmp / "server-stable"
    args = ["server", "--url", url, "--suite", "all", "-o", str(out)]
    failures += run([*node, str(stable), *args], ROOT, 600, env) != 0
    failures += report(f"server{by}, {STABLE} --suite all", tally(out), None)
    return failures


#: ASGI servers other than uvicorn (what ``examples.everything`` serves with) that the
#: server suites run under too: the command serving ``examples.everything.asgi:app`` on
#: the port given.
OTHER_SERVERS = {
    "granian": lambda port: [
        *("-m", "granian", "--interface", "asgi", "--host", "127.0.0.1"),
        *("--port", str(port), "--workers", "1", "examples.everything.asgi:app"),
    ],
    "hypercorn": lambda port: [
        *("-m", "hypercorn", "--bind", f"127.0.0.1:{port}", "examples.everything.asgi:app"),
    ],
}


def check_under(
    name: str, node: list[str], alpha: Path, stable: Path, env: dict[str, str], tmp: Path
) -> int:
    """The server suites against the everything app served by the ASGI server ``name``."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, *OTHER_SERVERS[name](port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 30)
        url = f"http://127.0.0.1:{port}/mcp"
        return check_server(node, alpha, stable, env, tmp, url, f" under {name}")
    finally:
        stop(server)


def main() -> int:
    env = dict(os.environ)
    binary = node_bin()
    env["PATH"] = f"{binary}{os.pathsep}{env.get('PATH', '')}"
    alpha, stable = suite(ALPHA, env), suite(STABLE, env)
    node = [str(binary / "node")]
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = f"env PYTHONPATH={ROOT} {sys.executable} -m examples.conformance_client"
    server = subprocess.Popen(
        [sys.executable, "-m", "examples.everything", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    failures = 0
    try:
        wait_listening(port, 30)
        with tempfile.TemporaryDirectory() as tmp:
            failures += check_server(node, alpha, stable, env, Path(tmp) / "uvicorn", url, "")
            for level in LEVELS:
                out = Path(tmp) / f"client-{level}"
                args = [
                    "client",
                    "--command",
                    command,
                    "--requirements",
                    level,
                    "--timeout",
                    "60000",
                    "-o",
                    str(out),
                ]
                run([*node, str(alpha), *args], ROOT, 900, env)
                scored = scored_scenarios(node, alpha, level, env, "Client") | CLIENT_EXTENSIONS
                scenarios = tally(out)
                failures += report(f"client, {ALPHA} --requirements {level}", scenarios, scored)
                failures += any(t.passed == 0 for n, t in scenarios.items() if n in scored)
            out = Path(tmp) / "client-2025-03-26"
            for scenario in LEGACY_AUTH:
                args = ["client", "--command", command, "--scenario", scenario]
                args += ["--spec-version", "2025-03-26", "--timeout", "60000", "-o", str(out)]
                run([*node, str(alpha), *args], ROOT, 300, env)
            scenarios = tally(out)
            failures += report(
                f"client, {ALPHA} 2025-03-26 authorization", scenarios, set(LEGACY_AUTH)
            )
            failures += any(t.passed == 0 for t in scenarios.values())
            failures += check_scaffold(node, alpha, env, Path(tmp))
            failures += check_proxy(node, alpha, env, Path(tmp))
            for name in OTHER_SERVERS:
                failures += check_under(name, node, alpha, stable, env, Path(tmp) / name)
    finally:
        stop(server)
    print("conformance: " + ("FAILED" if failures else "every scored scenario passed"))
    return 1 if failures else 0


def main_proxy() -> int:
    """``conformance_suite.py --proxy``: the proxy's runs alone."""
    env = dict(os.environ)
    binary = node_bin()
    env["PATH"] = f"{binary}{os.pathsep}{env.get('PATH', '')}"
    alpha = suite(ALPHA, env)
    with tempfile.TemporaryDirectory() as tmp:
        failures = check_proxy([str(binary / "node")], alpha, env, Path(tmp))
    print(
        "conformance through the proxy: "
        + ("FAILED" if failures else "every scored scenario passed")
    )
    return 1 if failures else 0


def main_servers() -> int:
    """``conformance_suite.py --servers``: the server suites under the other ASGI servers
    alone."""
    env = dict(os.environ)
    binary = node_bin()
    env["PATH"] = f"{binary}{os.pathsep}{env.get('PATH', '')}"
    alpha, stable = suite(ALPHA, env), suite(STABLE, env)
    node = [str(binary / "node")]
    with tempfile.TemporaryDirectory() as tmp:
        failures = sum(
            check_under(name, node, alpha, stable, env, Path(tmp) / name) for name in OTHER_SERVERS
        )
    print(
        "conformance under other ASGI servers: "
        + ("FAILED" if failures else "every scored scenario passed")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    modes = {"--proxy": main_proxy, "--servers": main_servers}
    sys.exit(modes[sys.argv[1]]() if sys.argv[1:2] and sys.argv[1] in modes else main())
