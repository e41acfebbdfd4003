"""Where a run is, for a progress display: examples run, distinct failures per oracle, and the
failure whose repro last got smaller (what the shrinker is working on)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Status"]


@dataclass(frozen=True)
class Status:
    """Where a run is, for people watching it: sent after every example and shrink step."""

    # The mode being fuzzed ("chat/stream", "session responses/no-stream") or "shrink".
    phase: str
    # Examples run so far, over every mode.
    examples: int
    # Distinct failures so far, as (oracle, signature).
    failures: tuple[tuple[str, str], ...] = ()
    # The failure whose repro last got smaller, and its size now (history items).
    shrinking: tuple[str, int] | None = None
    # What the run does in that phase: generate, target (a later pass), shrink (after a
    # failure: Hypothesis shrinks it, and may still generate), reduce, confirm; "" before any.
    stage: str = ""

    def by_oracle(self) -> dict[str, int]:
        """Distinct failures per oracle, most first."""
        return dict(Counter(oracle for oracle, _ in self.failures).most_common())
