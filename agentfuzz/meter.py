"""The run's meter: examples counted per mode, the progress callback fed a ``Status``, and the
halt raised before the next request once the run is asked to stop or is out of time."""

from __future__ import annotations

from collections.abc import Callable

from agentfuzz.findings import FindingStore, Status
from agentfuzz.passes import Interrupted, OutOfTime

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
    ) -> None:
        self.store, self.progress, self.stop, self.deadline = store, progress, stop, deadline
        self.clock = clock
        self.examples = 0
        # Examples per mode, counted as they run: a run cut short still reports them.
        self.by_phase: dict[str, int] = {}
        self.phase, self.stage = "", ""

    def example(self, phase: str) -> None:
        self.halt()
        self.examples += 1
        self.by_phase[phase] = self.by_phase.get(phase, 0) + 1
        self.phase = phase
        self.progress(self.store.status(phase, self.examples, self.stage))

    def step(self, phase: str) -> None:
        """A request that is not an example: a shrink or confirmation try."""
        self.halt()
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
