"""Shared plumbing for the benchmarks: the reference server in its own process, the machine, rows.

The server runs as ``agentfuzz serve`` in a subprocess so that its CPU time never competes with
the measured client for the same interpreter lock: what a figure measures is the client side.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def agentfuzz_command() -> list[str]:
    """How to start the CLI of the agentfuzz installed beside this interpreter."""
    script = Path(sys.executable).with_name("agentfuzz")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from agentfuzz.cli import main; sys.exit(main())"]


@contextlib.contextmanager
def served(
    profile: str, latency_ms: int = 0, *more: str, pids: list[int] | None = None
) -> Iterator[tuple[str, str]]:
    """Run ``agentfuzz serve PROFILE`` on a free port (``more``: further options of it); yield
    its base URL and its model (and its process id into ``pids``, when given)."""
    argv = [*agentfuzz_command(), "serve", profile, "--port", "0", "--latency", str(latency_ms)]
    argv += more
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if pids is not None:
        pids.append(proc.pid)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"agentfuzz serve {profile} did not start: {line}{err}".strip())
        base = line.split()[-1] + "/v1"
        models = httpx.get(base + "/models", timeout=10).json()["data"]
        yield base, str(models[0]["id"])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def machine() -> str:
    """``N cores, MODEL`` from ``nproc`` and ``/proc/cpuinfo``, as the results table names it."""
    cores = os.cpu_count() or 0
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        cores = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{cores} cores, {model}"


def load() -> str:
    """The 1/5/15-minute load averages: the machine is shared, so each run says how busy it was."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


@dataclass
class Row:
    """One figure of the results table, judged against its goal."""

    name: str
    command: str
    figure: str
    goal: str
    passed: bool
    note: str = ""

    def cells(self, date: str, where: str) -> list[str]:
        verdict = "pass" if self.passed else "miss"
        return [date, where, self.name, f"`{self.command}`", self.figure, self.goal, verdict]


HEADER = ["date", "machine", "measurement", "command", "figure", "goal", "pass/miss"]


def table(rows: list[Row], date: str, where: str) -> str:
    """The rows as a markdown table."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in rows:
        lines.append(
            "| " + " | ".join(c.replace("|", "\\|") for c in row.cells(date, where)) + " |"
        )
    return "\n".join(lines)


class Stopwatch:
    """Wall time of a block, in seconds, on the monotonic clock."""

    def __enter__(self) -> Stopwatch:
        self.started = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.started


def publish(results: Path, heading: str, text: str) -> None:
    """Print a bench's table and append it to the results file under ``## heading``."""
    print(text)
    with results.open("a", encoding="utf-8") as out:
        out.write(f"\n## {heading}\n\n{text}\n")
