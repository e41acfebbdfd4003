"""What a run has found so far: the best example per distinct failure, and where the run is.

``FindingStore`` keeps, per distinct failure (oracle + signature), the smallest example known and
rewrites its repro bundle whenever a smaller one fails the same way. ``Status`` is the snapshot a
progress display reads: examples run, distinct failures per oracle, and the failure whose repro
last got smaller (what the shrinker is working on).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz.history import Case
from agentfuzz.observation import Observation, Violation
from agentfuzz.reduction import case_size
from agentfuzz.repro import Repro, observed_summary, write_bundle
from agentfuzz.session import Turn
from agentfuzz.summary import Coverage, FindingRow, Latency, Summary, TurnRow

__all__ = ["Finding", "FindingStore", "Report", "Status", "TurnTable"]

# Session turn number -> (sessions that reached it, sessions whose turn failed there).
TurnTable = dict[int, tuple[int, int]]


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

    @property
    def size(self) -> tuple[int, int, int]:
        return case_size(self.case)


@dataclass
class Report:
    """What a run found, for the summary table and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    examples: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    elapsed: float = 0.0
    stopped_answering: bool = False
    interrupted: bool = False
    # Stopped by --max-time: what was found is written, maybe not fully shrunk or confirmed.
    out_of_time: bool = False
    # Set when every answer was a 401/403/404/405/429: the target was not tested at all.
    not_served: str | None = None
    # A bug of ours ended the run: one line here, the traceback beside it (not in the summary).
    error: str | None = None
    traceback: str = ""
    # Session mode: per turn number, sessions that reached it and sessions that failed there.
    turns: TurnTable = field(default_factory=dict)
    # Per mode: each answer's seconds, and how many were slow answers (out of time, no fault).
    latency: dict[str, list[float]] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    # Per dimension of the request surface: how the target answered the requests that used it.
    coverage: dict[str, Coverage] = field(default_factory=dict)

    def summary(self) -> Summary:
        """The run as data: what ``summary.json`` holds for machines reading a run."""
        rows = [
            FindingRow(
                oracle=f.violation.oracle,
                signature=f.violation.signature,
                message=f.violation.message,
                size=f.case.history.size,
                reproduced=f.reproduced,
                flaky=f.flaky,
                bundle=str(f.bundle),
            )
            for f in self.findings
        ]
        examples = sum(self.examples.values())
        return Summary(
            findings=rows,
            examples=self.examples,
            requests=self.calls,
            elapsed_s=round(self.elapsed, 3),
            examples_per_s=round(examples / self.elapsed, 1) if self.elapsed else None,
            session_turns={
                str(n): TurnRow(reached=r, failed=f) for n, (r, f) in sorted(self.turns.items())
            },
            stopped_answering=self.stopped_answering,
            interrupted=self.interrupted,
            out_of_time=self.out_of_time,
            not_served=self.not_served,
            error=self.error,
            latency={m: Latency.of(s, self.timeouts.get(m, 0)) for m, s in self.latency.items()},
            samples=self.latency,
            coverage=self.coverage,
        )


class FindingStore:
    """Keeps the best example per distinct failure and writes its bundle as it improves."""

    def __init__(self, out: Path, found_by: dict[str, Any] | None = None) -> None:
        self.out, self.found_by = out, found_by
        self.by_key: dict[tuple[str, str], Finding] = {}
        # The failure whose repro last got smaller, and its size then: what shrinking is doing.
        self.shrinking: tuple[str, int] | None = None

    def offer(
        self,
        violation: Violation,
        case: Case,
        obs: Observation,
        transcript: tuple[Turn, ...] = (),
    ) -> None:
        current = self.by_key.get(violation.key)
        candidate = Finding(violation, case, obs, Path(), transcript=transcript)
        if current is not None and candidate.size >= current.size:
            if transcript and not current.transcript:
                # A synthetic example was smaller, but the session that met it too is evidence.
                current.transcript = transcript
                self.write(current)
            return
        if current is not None:
            candidate.tries, candidate.measured = current.tries, current.measured
            self.shrinking = (violation.oracle, case.history.size)
        if current is not None and not transcript:
            # A reduced (or synthetic) request keeps the session it came from.
            candidate.transcript = current.transcript
        candidate.bundle = self.write(candidate)
        self.by_key[violation.key] = candidate

    def status(self, phase: str, examples: int, stage: str = "") -> Status:
        """What a progress display shows of the run at this point."""
        return Status(phase, examples, tuple(self.by_key), self.shrinking, stage)

    def write(self, finding: Finding) -> Path:
        # The exchange holds the exact URL and body that were sent: the repro is that request.
        exchange = finding.observation.exchange
        repro = Repro(
            url=exchange.url,
            request=exchange.request,
            case=finding.case,
            violation=finding.violation,
            observed=observed_summary(finding.observation)
            | {"evidence": finding.violation.evidence},
            reproduced=finding.reproduced,
            transcript=finding.transcript,
            observation=finding.observation,
            found_by=self.found_by,
        )
        return write_bundle(self.out, repro)
