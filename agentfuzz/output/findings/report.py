"""What a run found, for the summary table and the exit code, and as ``summary.json`` holds it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from agentfuzz.model.history import AssistantMessage, Case, ToolResult
from agentfuzz.model.summary import Coverage, FindingRow, Latency, Summary, TurnRow
from agentfuzz.output.findings.finding import Finding

__all__ = ["Report", "TurnTable", "history_digest"]


def history_digest(case: Case) -> str:
    """A short digest of a case's history (tools and items, not its knobs or mode), its call
    ids numbered in order: the same history whatever ids a repro ended up with."""
    numbered: dict[str, str] = {}
    for call in case.history.calls:
        numbered.setdefault(call.id, f"call_{len(numbered)}")
    items = []
    for it in case.history.items:
        if isinstance(it, AssistantMessage) and it.tool_calls:
            calls = tuple(
                c.model_copy(update={"id": numbered[c.id], "item_id": None}) for c in it.tool_calls
            )
            it = it.model_copy(update={"tool_calls": calls})
        elif isinstance(it, ToolResult):
            it = it.model_copy(update={"call_id": numbered.get(it.call_id, "orphan")})
        items.append(it.model_dump_json())
    text = case.history.model_copy(update={"items": ()}).model_dump_json() + "".join(items)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


# Session turn number -> (sessions that reached it, sessions whose turn failed there).
TurnTable = dict[int, tuple[int, int]]


@dataclass
class Report:
    """What a run found, for the summary table and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    # Generated examples per mode (what --max-examples bounds); Hypothesis's shrink steps per
    # mode, and the steps of agentfuzz's own reduction and confirmation: each apart.
    examples: dict[str, int] = field(default_factory=dict)
    shrink_steps: dict[str, int] = field(default_factory=dict)
    reduce_steps: int = 0
    calls: int = 0
    elapsed: float = 0.0
    stopped_answering: bool = False
    interrupted: bool = False
    # Stopped by --max-time: what was found is written, maybe not fully shrunk or confirmed.
    out_of_time: bool = False
    # Stopped fuzzing at --max-failures distinct failures (then shrank and confirmed them).
    max_failures_reached: bool = False
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
    # What ran, for summary.json: found_by and the target (``Summary.run``).
    run: dict[str, Any] = field(default_factory=dict)
    # What the run changed on its own as it went, one line each (``Summary.notes``).
    notes: list[str] = field(default_factory=list)

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
                seen_on=sorted(f.seen_on),
                reproduces_on=list(f.reproduces_on),
                needs=list(f.needs),
                cofired=sorted(f.cofired),
                history=history_digest(f.case),
                cleared_by=f.cleared_by,
            )
            for f in self.findings
        ]
        examples = sum(self.examples.values())
        return Summary(
            findings=rows,
            run=self.run,
            examples=self.examples,
            shrink_steps=self.shrink_steps,
            reduce_steps=self.reduce_steps,
            requests=self.calls,
            elapsed_s=round(self.elapsed, 3),
            examples_per_s=round(examples / self.elapsed, 1) if self.elapsed else None,
            session_turns={
                str(n): TurnRow(reached=r, failed=f) for n, (r, f) in sorted(self.turns.items())
            },
            stopped_answering=self.stopped_answering,
            interrupted=self.interrupted,
            out_of_time=self.out_of_time,
            max_failures_reached=self.max_failures_reached,
            not_served=self.not_served,
            error=self.error,
            latency={m: Latency.of(s, self.timeouts.get(m, 0)) for m, s in self.latency.items()},
            samples=self.latency,
            coverage=self.coverage,
            notes=self.notes,
        )
