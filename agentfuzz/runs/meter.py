"""The run's meter: examples counted per mode, the progress callback fed a ``Status``, and the
halt raised before the next request once the run is asked to stop or is out of time.

What it counts apart: *examples* (generated: what ``--max-examples`` bounds), *shrink steps*
(Hypothesis's shrinker calling the property again, per mode) and *reduce steps* (agentfuzz's
own reduction and re-sends of a finding after fuzzing); the summary reports each."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from agentfuzz.output.findings.status import Status
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.runs.passes import EnoughFailures, Interrupted, OutOfTime

__all__ = ["Meter", "Progress"]

Progress = Callable[[Status], None]


class Meter:
    """Counts examples over the whole run, hands the progress callback a ``Status``, and halts
    the run, before its next request, once asked to stop or out of time."""

    def __init__(
        self,
        store: FindingStore,
        progress: Progress,
        stop: Callable[[], bool] = lambda: False,
        deadline: float | None = None,
        clock: Callable[[], float] = lambda: 0.0,
        max_failures: int | None = None,
    ) -> None:
        self.store, self.progress, self.stop, self.deadline = store, progress, stop, deadline
        self.clock, self.max_failures = clock, max_failures
        self.examples = 0
        # Examples per mode, counted as they run: a run cut short still reports them.
        self.by_phase: dict[str, int] = {}
        # Hypothesis's shrink steps per mode, and agentfuzz's reduce and confirm steps.
        self.shrinks: dict[str, int] = {}
        self.steps = 0
        self.phase, self.stage = "", ""

    def example(self, phase: str) -> None:
        """A new generated example of ``phase``; none once ``--max-failures`` are found."""
        self.halt()
        if self.max_failures is not None and len(self.store.by_key) >= self.max_failures:
            raise EnoughFailures
        self.examples += 1
        self.by_phase[phase] = self.by_phase.get(phase, 0) + 1
        self.phase = phase
        self.progress(self.store.status(phase, self.examples, self.stage))

    def shrink(self, phase: str) -> None:
        """Hypothesis's shrinker calls the property of ``phase`` again: not an example."""
        self.halt()
        self.shrinks[phase] = self.shrinks.get(phase, 0) + 1
        self.phase = phase
        self.progress(self.store.status(phase, self.examples, self.stage))

    def step(self, phase: str) -> None:
        """A request that is not an example: a reduction or confirmation try."""
        self.halt()
        self.steps += 1
        self.phase = phase
        self.progress(self.store.status(phase, self.examples, self.stage))

    def enter(self, stage: str, phase: str | None = None) -> None:
        """The run moves on to ``stage`` (of ``phase``); a display hears of it at once."""
        if (stage, phase or self.phase) != (self.stage, self.phase):
            self.stage, self.phase = stage, phase or self.phase
            self.progress(self.store.status(self.phase, self.examples, stage))

    def halt(self) -> None:
        if self.stop():
            raise Interrupted
        if self.deadline is not None and self.clock() > self.deadline:
            raise OutOfTime

    @contextlib.contextmanager
    def share(self, parts_left: int, hold_back: bool, cut: Callable[[], None]) -> Iterator[None]:
        """Under a deadline, one part's fair share of the time left: an equal slice for each
        part still to run, and one more where ``hold_back`` (for shrinking what was found). Out
        of its share, the part ends and the next begins; ``cut`` hears that the run was cut."""
        deadline = self.deadline
        if deadline is None:
            yield
            return
        now = self.clock()
        slices = parts_left + (1 if hold_back else 0)
        self.deadline = min(deadline, now + max(0.0, deadline - now) / slices)
        try:
            yield
        except OutOfTime:
            if self.clock() > deadline:
                raise
            cut()
        finally:
            self.deadline = deadline
