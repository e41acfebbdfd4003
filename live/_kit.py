"""What every live target's scripts share: building into a cache, serving on 127.0.0.1, stopping.

Stdlib only, so any python3.11 runs it. A script in `live/<target>/` puts `live/` on its path and
imports from here; the target-specific parts (what to install, which command serves, what "ready"
means) stay in the target's own build.py and serve.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Text pip prints when it cannot talk to an index at all (as opposed to a resolution error).
NETWORK_MARKERS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ConnectTimeoutError",
    "No route to host",
    "ProxyError",
)


class BuildError(Exception):
    """A build step failed; the message is the one line shown to the user."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class ServerError(Exception):
    """A server could not be started or did not become ready; the message is one line."""


def run(cmd: list[str], log: Path, what: str, env: dict[str, str] | None = None) -> str:
    """Run a command with its output appended to the build log; raise BuildError on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    output = proc.stdout + proc.stderr
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{output}\n")
    if proc.returncode != 0:
        if any(marker in output for marker in NETWORK_MARKERS):
            raise BuildError(f"{what}: cannot reach the package index (see {log})", code=3)
        raise BuildError(f"{what} failed with exit {proc.returncode} (see {log})")
    return proc.stdout


def is_done(marker: Path, spec: object) -> bool:
    """Whether a step's marker exists and records the same spec as now."""
    try:
        return bool(json.loads(marker.read_text()) == spec)
    except (OSError, ValueError):
        return False


def mark_done(marker: Path, spec: object) -> None:
    marker.write_text(json.dumps(spec))


def probe_index(cache: Path, log: Path, requirement: str) -> None:
    """Fail fast, with exit 3, when the package index cannot be reached at all: download one
    small wheel (`requirement`, without its dependencies) into a scratch folder."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "1"]
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        run([*cmd, "--timeout", "20", "-d", tmp, requirement], log, "probing the package index")


def size_of(path: Path) -> str:
    files = [path] if path.is_file() else list(path.rglob("*"))
    total = sum(f.stat().st_size for f in files if f.is_file() and not f.is_symlink())
    return f"{total / 2**20:,.0f} MB"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers(url: str) -> bool:
    """Whether a GET of `url` answers 200 (a health or readiness endpoint)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def stop(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """End a server's whole process group: SIGTERM, then SIGKILL for whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Workers may run in child processes that outlive the server itself: sweep the group.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def serving(
    name: str,
    command: list[str],
    *,
    log: Path,
    cwd: Path,
    ready: str,
    timeout: float,
    env: dict[str, str] | None = None,
    poll: float = 0.5,
    grace: float = 30.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `command` in its own process group, logging to `log`, until GET `ready` answers 200;
    yield the process and stop the group on exit. ServerError when it exits or times out first."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while not answers(ready):
            if proc.poll() is not None:
                raise ServerError(
                    f"{name} exited with {proc.returncode} while starting (see {log})"
                )
            if time.monotonic() > deadline:
                raise ServerError(f"{name} not ready after {timeout:.0f} s (see {log})")
            time.sleep(poll)
        yield proc
    finally:
        stop(proc, grace)


def post(url: str, body: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer: dict[str, Any] = json.load(response)
        return answer
