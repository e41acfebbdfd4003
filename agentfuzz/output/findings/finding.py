"""One distinct failure as a run keeps it: its smallest known example and where it was seen."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz.judge.session import Turn
from agentfuzz.model.history import Case
from agentfuzz.model.modes import label
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.reduce.reduction import case_size

__all__ = ["Finding", "mode_of"]


def mode_of(case: Case) -> str:
    """The mode a case went out in: ``chat/stream``, ``session responses/no-stream``."""
    mode = label((case.api, case.stream))
    return f"session {mode}" if case.session is not None else mode


@dataclass
class Finding:
    """The smallest known example of one distinct failure, and where its bundle lives."""

    violation: Violation
    case: Case
    observation: Observation
    bundle: Path
    reproduced: str = "pending"
    flaky: bool = False
    # The session that showed this failure, up to the failing turn (session mode only).
    transcript: tuple[Turn, ...] = ()
    # With --trials auto: tries per judgement, from the rate measured when first found.
    tries: int = 1
    measured: bool = False
    # The other failures the same request showed at once (its symptoms, when one cause).
    cofired: set[tuple[str, str]] = field(default_factory=set)
    # Modes (``chat/stream``, ``session responses/no-stream``) this failure was seen on.
    seen_on: set[str] = field(default_factory=set)
    # Modes the final repro was re-sent on and failed the same way (its own first).
    reproduces_on: tuple[str, ...] = ()
    # The API's rules the final repro still breaks because the failure needs them.
    needs: tuple[str, ...] = ()
    # How its call ids came about, when they are ids this server minted (``Mechanism``).
    mechanism: dict[str, Any] | None = None
    # The server's own id shape that stops the failure, when one does (``explain``).
    cleared_by: dict[str, Any] | None = None
    # Reduced, repaired and confirmed: a later, smaller example no longer replaces it.
    settled: bool = False
    # The symptom a finding signed by what it needs was found under (``oracles.by_needs``):
    # what the oracles still say of a request that shows it.
    symptom: tuple[str, str] | None = None

    @property
    def matches(self) -> tuple[str, str]:
        """The (oracle, signature) a request that shows this failure fires."""
        return self.symptom or self.violation.key

    @property
    def size(self) -> tuple[int, int, int, int, int]:
        return case_size(self.case)
