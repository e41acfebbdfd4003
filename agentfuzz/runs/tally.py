"""The run's tally: what the requests of a run used and how the target answered them.

The target only turns a case into an observation; the run counts. Per mode (``chat/stream``):
each answer's seconds and how many were slow answers (the summary's ``latency``). Per dimension
of the request surface a request used (``request.surface.used``), and per relation a paired
request was sent for: how the target answered it (the summary's ``coverage``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentfuzz.model.history import Case
from agentfuzz.model.modes import label
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.model.summary import Coverage
from agentfuzz.request.surface import used

__all__ = ["Tally"]


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    coverage: dict[str, Coverage] = field(default_factory=dict)

    def count(self, case: Case, obs: Observation) -> None:
        """Count one answer to ``case``."""
        exchange = obs.exchange
        mode = label((case.api, case.stream))
        self.latency.setdefault(mode, []).append(round(exchange.elapsed, 3))
        if exchange.slow:
            self.timeouts[mode] = self.timeouts.get(mode, 0) + 1
        answered = _answer_class(exchange)
        # A paired request counts under its relation too: how many pairs each relation judged.
        paired = () if case.relation is None else (f"relation:{case.relation}",)
        for dimension in (*used(case), *paired):
            row = self.coverage.setdefault(dimension, Coverage())
            row.requests += 1
            setattr(row, answered, getattr(row, answered) + 1)


def _answer_class(exchange: Exchange) -> str:
    """The coverage column an answer counts in."""
    if exchange.slow:
        return "slow"
    status = exchange.status
    if exchange.failure or status is None:
        return "failed"
    if status >= 500:
        return "error"
    return "refused" if status >= 400 else "ok"
