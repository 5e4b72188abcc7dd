"""haproxy for the tests, from Debian's packages: ``apt-get download`` of haproxy and the
libraries it links that a bare machine lacks, unpacked with ``dpkg -x`` into
``.cache/haproxy`` (once; no root needed), run on 127.0.0.1 with a configuration given as
text, stopped at the end."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from support.checkout import ROOT
from support.node_tools import wait_listening

CACHE = ROOT / ".cache" / "haproxy"
#: Debian (bookworm) packages: haproxy, and what it links that a bare machine lacks.
PACKAGES = ("haproxy", "liblua5.3-0", "libopentracing-c-wrapper0", "libopentracing1")
INSTALL_TIMEOUT = 300


def haproxy_binary() -> tuple[Path, dict[str, str]]:
    """haproxy and the environment it runs in (its libraries' path): on PATH if there,
    else unpacked from Debian's packages into the cache (RuntimeError, saying what failed,
    when neither can be had)."""
    found = shutil.which("haproxy")
    if found:
        return Path(found), dict(os.environ)
    root = CACHE / "root"
    binary = root / "usr" / "sbin" / "haproxy"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (CACHE / ".installed").exists():
            debs = CACHE / "debs"
            debs.mkdir(exist_ok=True)
            fetched = subprocess.run(
                ["apt-get", "download", *PACKAGES],
                cwd=debs,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
            if fetched.returncode != 0:
                raise RuntimeError(f"apt-get download {' '.join(PACKAGES)}: {fetched.stderr}")
            for deb in sorted(debs.glob("*.deb")):
                subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True, timeout=60)
            (CACHE / ".installed").write_text(" ".join(PACKAGES))
    libraries = [str(path) for path in (root / "usr" / "lib").glob("*-linux-gnu")]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join([*libraries, env.get("LD_LIBRARY_PATH", "")])
    return binary, env


class Haproxy:
    """haproxy running ``config`` (text) until stopped; ``port`` is where it listens."""

    def __init__(self, config: str, port: int) -> None:
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgen-haproxy-"))
        (self.dir / "haproxy.cfg").write_text(config)
        binary, env = haproxy_binary()
        checked = subprocess.run(
            [str(binary), "-c", "-f", str(self.dir / "haproxy.cfg")],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        )
        if checked.returncode != 0:
            raise RuntimeError(
                f"haproxy refuses its configuration: {checked.stdout}{checked.stderr}"
            )
        self.process = subprocess.Popen(
            [str(binary), "-db", "-f", str(self.dir / "haproxy.cfg")],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=open(self.dir / "haproxy.log", "wb"),
            stderr=subprocess.STDOUT,
        )
        wait_listening(port, 30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


__all__ = ["Haproxy", "haproxy_binary"]
