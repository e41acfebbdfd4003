"""The run summary as typed data: what ``summary.json`` holds, what a shard hands the merge.

One model for one run and for the merge of ``--workers`` shards; the merge-only fields
(``unreachable``, ``shards``, ``failed_shards``) are written only by a merge, and a shard's own
``failed`` (why it ended without its summary) is never written at all.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    "PINNED_MIN",
    "Coverage",
    "FailedShard",
    "FindingRow",
    "Latency",
    "Summary",
    "Symptom",
    "TurnRow",
]


class Symptom(BaseModel):
    """One failure a root cause shows: what fired, where it was seen, how often."""

    oracle: str
    signature: str
    message: str
    seen_on: list[str] = Field(default_factory=list)
    reproduced: str = "pending"
    # A symptom the main request does not show keeps its own bundle, inside the main one:
    # this folder, relative to it (``symptoms/index_gap-…``); None when the main request shows it.
    repro: str | None = None


class FindingRow(BaseModel):
    """One distinct failure: what fired, how small its repro is, how often it reproduced."""

    oracle: str
    signature: str
    message: str
    size: int
    reproduced: str
    flaky: bool = False
    bundle: str
    # Modes the failure was seen on during the run, and the final repro reproduced on.
    seen_on: list[str] = Field(default_factory=list)
    reproduces_on: list[str] = Field(default_factory=list)
    # The API rules the repro breaks because the failure needs them (``validity.NEEDS``).
    needs: list[str] = Field(default_factory=list)
    # Other failures (oracle, signature) the final request showed at the same time, and a
    # digest of its history: what ``findings.fold`` groups root causes by.
    cofired: list[tuple[str, str]] = Field(default_factory=list)
    history: str = ""
    # The server's own id shape that stops the failure, when one does: a cause ``fold`` groups
    # failures by (``{"shape", "minted_on", "ids"}``).
    cleared_by: dict[str, Any] | None = None
    # One cause, several symptoms: every failure folded into this one (itself first).
    symptoms: list[Symptom] = Field(default_factory=list)


class TurnRow(BaseModel):
    """Sessions that reached a turn number, and sessions whose turn failed there."""

    reached: int = 0
    failed: int = 0


class Latency(BaseModel):
    """One mode's answers: how many, how many were slow answers (the time budget ran out with
    the server still at work: counted, never a finding), and the median and 95th percentile of
    their seconds (nearest rank)."""

    requests: int = 0
    timeouts: int = 0
    p50_s: float | None = None
    p95_s: float | None = None

    @classmethod
    def of(cls, seconds: list[float], timeouts: int) -> Latency:
        ranked = sorted(seconds)

        def rank(q: float) -> float | None:
            return ranked[max(0, math.ceil(q * len(ranked)) - 1)] if ranked else None

        return cls(requests=len(ranked), timeouts=timeouts, p50_s=rank(0.5), p95_s=rank(0.95))


# Refusals pinned on a dimension before the table says the target does not support it.
PINNED_MIN = 2


class Coverage(BaseModel):
    """One dimension of the request surface: requests that used it and how the target answered
    (2xx, a 4xx refusal, a 5xx, a transport failure, a slow answer).

    ``pinned``: the refusals only this dimension can explain, every other dimension the request
    used having been answered 2xx elsewhere in the run (``runs.tally``). A request refused for
    another field it carried says nothing of this one.
    """

    requests: int = 0
    ok: int = 0
    refused: int = 0
    error: int = 0
    failed: int = 0
    slow: int = 0
    pinned: int = 0

    def add(self, other: Coverage) -> None:
        for name in Coverage.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def always_refused(self) -> bool:
        """Every request that used it was refused, and at least ``PINNED_MIN`` of those
        refusals were its alone (``pinned``): the target does not support it."""
        return self.requests > 0 and self.refused == self.requests and self.pinned >= PINNED_MIN


class FailedShard(BaseModel):
    shard: int
    why: str
    unreachable: bool = False


_MERGE_ONLY = {"unreachable", "shards", "failed_shards"}


class Summary(BaseModel):
    """A run's summary; every field has the value an empty run has."""

    findings: list[FindingRow] = []
    # What ran: the command, seed, fuzz profile, agentfuzz version, run id and the target
    # (base URL, model, what it said about itself), as each bundle's ``found_by``/``target``.
    run: dict[str, Any] = {}
    # Generated examples per mode: what --max-examples bounds (shrinking is counted apart).
    examples: dict[str, int] = {}
    requests: int = 0
    elapsed_s: float = 0.0
    examples_per_s: float | None = None
    session_turns: dict[str, TurnRow] = {}
    stopped_answering: bool = False
    interrupted: bool = False
    out_of_time: bool = False
    not_served: str | None = None
    error: str | None = None
    latency: dict[str, Latency] = {}
    # Per dimension of the request surface (request/surface.py): how the target answered it.
    coverage: dict[str, Coverage] = {}
    # After the keys other tools read (they stay as they were): Hypothesis's shrink steps per
    # mode, the steps of agentfuzz's own reduction and confirmation, and whether fuzzing
    # stopped at --max-failures distinct failures.
    shrink_steps: dict[str, int] = {}
    reduce_steps: int = 0
    max_failures_reached: bool = False
    # Where the bundles an earlier run left in the same --out were moved (``.previous/<when>``).
    set_aside: str | None = None
    # What the run changed on its own as it went, one line each: a slow target's later
    # requests bounded (``runs.pace``).
    notes: list[str] = []
    # --workers: the reason the target could not be reached, the shards, those that failed.
    unreachable: str | None = None
    shards: int | None = None
    failed_shards: list[FailedShard] = []
    # One shard's, in memory only: why it ended without its own summary (or broke).
    failed: str | None = Field(default=None, exclude=True)
    # Every answer's seconds per mode, for a merge to rank again: in a shard's own file only.
    samples: dict[str, list[float]] = {}

    def dump(self) -> dict[str, Any]:
        """As ``summary.json`` holds it."""
        exclude = {"samples"} | (set() if self.shards is not None else _MERGE_ONLY)
        return self.model_dump(mode="json", exclude=exclude)
