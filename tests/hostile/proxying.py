"""``agentfuzz proxy`` as a child process in front of a hostile upstream, for the hostile tests.

``proxy_process(upstream, out, *args)`` starts ``python -m agentfuzz proxy --port 0 ...`` and
yields a ``Proxied`` at once: ``line_with(text)`` waits for a line of its output (``url()``
for the "listening on" line's address). Once the block ends the proxy is stopped with SIGINT,
as Ctrl-C stops it, and the ``Proxied`` holds its exit code, its whole output and its peak
resident memory, read from the child's own rusage as ``servers.run_bounded`` does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Proxied:
    code: int | None = None
    lines: list[str] = field(default_factory=list)
    peak_mb: float = 0.0
    ended: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def line_with(self, text: str, within: float = 60.0) -> str:
        """The first line of output holding ``text``; waits for it up to ``within`` seconds."""
        deadline = time.monotonic() + within
        with self.changed:
            while True:
                found = [line for line in self.lines if text in line]
                left = deadline - time.monotonic()
                if found or self.ended or left <= 0:
                    break
                self.changed.wait(left)
        assert found, f"the proxy never said {text!r}:\n{self.output}"
        return found[0]

    def url(self) -> str:
        """The proxy's base URL, once it listens."""
        return self.line_with("listening on ").split()[2]

    def read(self, stream: Iterable[str]) -> None:
        for line in stream:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()


@contextmanager
def proxy_process(upstream: str, out: Path, *args: str, limit_s: float = 90) -> Iterator[Proxied]:
    """The proxy in front of ``upstream``; stopped with SIGINT when the block ends, killed past
    ``limit_s`` seconds in all."""
    argv = ["proxy", "--upstream", upstream, "--port", "0", "--out", str(out), *args]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentfuzz", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120", "NO_COLOR": "1"},
    )
    seen = Proxied()
    reader = threading.Thread(target=seen.read, args=(proc.stdout,), daemon=True)
    reader.start()
    timer = threading.Timer(limit_s, proc.kill)
    timer.start()
    try:
        yield seen
    finally:
        os.kill(proc.pid, signal.SIGINT)  # not ``proc.send_signal``: it would reap the child
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        reader.join(10)
        if proc.stdout is not None:
            proc.stdout.close()
        proc.returncode = seen.code = os.waitstatus_to_exitcode(status)
        seen.peak_mb = usage.ru_maxrss / 1024
