"""The progress line of ``agentfuzz fuzz`` on stderr, for a person watching a long live run.

It shows what the run is doing (the mode being fuzzed and its stage, ``reduce`` or
``confirm``), examples run (the bar measures generated examples against those planned for every
mode and kind: shrink steps are not examples, so it is full only once every mode has run),
examples per second, the symptoms so far per oracle (distinct failures, before the end of the
run folds those of one cause into one finding: ``symptoms: tool_choice 2, empty_turn 1`` can
end as one finding), the smallest repro of an oracle so far whenever it gets smaller (a larger
one of another failure of that oracle is not news), and the time elapsed: a clock of its own,
which moves on while the run shrinks and confirms (rich's elapsed column stops when its task's
bar is full).
It is fed ``Status`` snapshots: by the engine after every example, or by ``--workers`` from the
shards' progress files. When stderr is not a terminal (a CI log, a pipe), a bar cannot redraw
itself, so it writes a heartbeat line instead: when the phase, stage or failures change (once
the first example is through), and, from a timer of its own, whenever ``HEARTBEAT_EVERY``
seconds passed without one, status or not (before the first example, in a long shrink, with
shards not yet started). The shards of ``--workers`` move between stages each on its own, so
their merged progress gets a line at most every ``HEARTBEAT_GAP`` seconds.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from agentfuzz.cli._printable import printable
from agentfuzz.output.findings.status import Status

__all__ = [
    "HEARTBEAT_EVERY",
    "HEARTBEAT_GAP",
    "ProgressLine",
    "doing",
    "failures_text",
    "heartbeat",
    "shrink_text",
    "symptoms_text",
]

# Seconds between two heartbeat lines at most (nothing changed), and at least (something did).
HEARTBEAT_EVERY = 30.0
HEARTBEAT_GAP = 2.0


def failures_text(status: Status) -> str:
    """``empty_turn 2, error 1``, or ``no failures``."""
    counts = status.by_oracle()
    if not counts:
        return "no failures"
    return ", ".join(f"{oracle} {n}" for oracle, n in counts.items())


def symptoms_text(status: Status) -> str:
    """``symptoms: empty_turn 2, error 1``, or ``no failures``: distinct failures so far, not
    yet the findings (the end of the run folds those of one cause into one)."""
    found = failures_text(status)
    return found if not status.failures else f"symptoms: {found}"


def doing(status: Status) -> str:
    """What the run does: ``chat/stream generate``, ``reduce``, ``confirm``; a stage that only
    repeats its phase (``confirm confirm``), or the ``shrink`` every reduction is, is said once."""
    phase, stage = status.phase, status.stage
    if not stage or stage == phase:
        return phase
    return stage if phase == "shrink" else f"{phase} {stage}"


def heartbeat(status: Status, elapsed: float, shrunk: str | None = None) -> str:
    """One line for a log: ``[agentfuzz 00:01:05] chat/stream shrink · 120 examples · …``
    (not ``agentfuzz: …``, which starts the one line of an error). ``shrunk``: what to say of
    the shrinking (default: ``shrink_text`` of ``status``)."""
    clock = time.strftime("%H:%M:%S", time.gmtime(elapsed))
    shrunk = shrink_text(status) if shrunk is None else shrunk
    tail = f" · {shrunk}" if shrunk else ""
    line = f"[agentfuzz {clock}] {doing(status)} · {status.examples} examples · "
    return printable(line + symptoms_text(status) + tail)


def shrink_text(status: Status) -> str:
    """``shrunk empty_turn to 4``: the failure whose repro last got smaller, and its size."""
    if status.shrinking is None:
        return ""
    oracle, size = status.shrinking
    return f"shrunk {oracle} to {size}"


class _Clock(ProgressColumn):
    """Time since the watch began, whatever the bar says (``TimeElapsedColumn`` stops at a
    full bar, and a run goes on shrinking and confirming after its last example)."""

    def __init__(self, started: list[float]) -> None:
        super().__init__()
        self._started = started

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self._started[0]
        return Text(time.strftime("%H:%M:%S", time.gmtime(elapsed)), style="progress.elapsed")


class ProgressLine:
    """A rich progress bar fed with ``Status``; silent when ``quiet``. ``every``: seconds
    between heartbeat lines at most (default ``HEARTBEAT_EVERY``)."""

    def __init__(
        self,
        console: Console,
        total: int,
        quiet: bool = False,
        gap: float = 0.0,
        every: float | None = None,
    ) -> None:
        self._since = [time.monotonic()]
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=16),  # the figures beside it matter more
            # Shrinking and later passes run past the planned total: count, do not cap.
            TextColumn("{task.fields[examples]} examples"),
            TextColumn("{task.fields[rate]}/s"),
            TextColumn("{task.fields[found]}"),
            TextColumn("{task.fields[shrink]}"),
            _Clock(self._since),
            console=console,
            transient=True,
            disable=quiet,
        )
        self._total = total
        self._task: TaskID | None = None
        self._started = time.monotonic()
        # Failures only change now and then: format them again only when they do.
        self._failures: tuple[tuple[str, str], ...] = ()
        self._found = "no failures"
        # The smallest repro shown per oracle, and what is said of it: only improvements show.
        self._smallest: dict[str, int] = {}
        self._shrunk = ""
        self._console = console
        self._log = not quiet and not console.is_terminal
        self._logged: tuple[str, str, int] | None = None
        self._logged_at = 0.0
        self._gap = gap
        self._every = HEARTBEAT_EVERY if every is None else every
        # The timer's: the latest status (none before the first), and what stops it.
        self._latest = Status("starting", 0)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._timer: threading.Thread | None = None

    def __enter__(self) -> ProgressLine:
        self._bar.__enter__()
        self._task = self._bar.add_task(
            "fuzz", total=self._total, examples=0, rate="-", found="", shrink=""
        )
        self._started = self._since[0] = self._logged_at = time.monotonic()
        if self._log:
            self._timer = threading.Thread(target=self._tick, name="agentfuzz-heartbeat")
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._done.set()
        if self._timer is not None:
            self._timer.join()
        self._bar.__exit__(kind, exc, tb)

    def __call__(self, status: Status) -> None:
        if self._task is None:
            return
        self._latest = status
        self._note_shrink(status)
        if self._log:
            self._heartbeat(status)
        if status.failures != self._failures:
            self._failures, self._found = status.failures, symptoms_text(status)
        elapsed = max(time.monotonic() - self._started, 1e-9)
        self._bar.update(
            self._task,
            description=doing(status),
            completed=min(status.examples, self._total),
            examples=status.examples,
            rate=f"{status.examples / elapsed:.0f}",
            found=self._found,
            shrink=self._shrunk,
        )

    def _note_shrink(self, status: Status) -> None:
        """Keep what to say of the shrinking: an oracle's repro size, when it is its smallest
        yet (another failure of the oracle, larger, shrinking after it is not progress)."""
        if status.shrinking is None:
            return
        oracle, size = status.shrinking
        if size < self._smallest.get(oracle, size + 1):
            self._smallest[oracle] = size
            self._shrunk = shrink_text(status)

    def _heartbeat(self, status: Status) -> None:
        if status.examples < 2:
            # Not before the first example is through: a run that cannot even reach its
            # target ends with its one error line alone (the timer speaks after a silence).
            return
        with self._lock:
            now = time.monotonic()
            shown = (status.phase, status.stage, len(status.failures))
            since = now - self._logged_at
            changed = shown != self._logged
            if (changed and since >= self._gap) or since >= self._every or self._logged is None:
                self._print(status, shown, now)

    def _tick(self) -> None:
        """The timer: a line for the latest status whenever ``every`` seconds passed without
        one, so a log shows the run alive even when no status comes."""
        while not self._done.wait(max(0.0, self._logged_at + self._every - time.monotonic())):
            with self._lock:
                now = time.monotonic()
                if now - self._logged_at >= self._every:
                    status = self._latest
                    self._print(status, (status.phase, status.stage, len(status.failures)), now)

    def _print(self, status: Status, shown: tuple[str, str, int], now: float) -> None:
        self._logged, self._logged_at = shown, now
        line = heartbeat(status, now - self._started, self._shrunk)
        self._console.print(line, markup=False, highlight=False, soft_wrap=True)
