"""The run's tally: what the requests of a run used and how the target answered them.

The target only turns a case into an observation; the run counts. Per mode (``chat/stream``):
each answer's seconds and how many were slow answers (the summary's ``latency``). Per dimension
of the request surface a request used (``request.surface.used``), and per relation a paired
request was sent for: how the target answered it (the summary's ``coverage``).

A request carries several dimensions, and a refusal names none of them for sure. So a refusal
is pinned on a dimension only when every other dimension the request used was answered 2xx
somewhere in the run (``Coverage.pinned``): the table says "always refused" of a dimension
only on such evidence, never because it rode along with another field the target refuses.
"""

from __future__ import annotations

from collections import Counter
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
    rows: dict[str, Coverage] = field(default_factory=dict)
    # The dimensions of each refused request (how many were refused so), and every dimension
    # some request answered 2xx used: what a refusal is pinned from.
    refused_sets: Counter[tuple[str, ...]] = field(default_factory=Counter)
    accepted: set[str] = field(default_factory=set)

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
        dimensions = (*used(case), *paired)
        for dimension in dimensions:
            row = self.rows.setdefault(dimension, Coverage())
            row.requests += 1
            setattr(row, answered, getattr(row, answered) + 1)
        if answered == "ok":
            self.accepted.update(dimensions)
        elif answered == "refused":
            self.refused_sets[dimensions] += 1

    @property
    def coverage(self) -> dict[str, Coverage]:
        """Every row, each with the refusals pinned on it as the run now stands."""
        pinned: Counter[str] = Counter()
        for dimensions, times in self.refused_sets.items():
            # A relation is a pairing, not a field the target could refuse: never pinned.
            unexplained = [
                d for d in dimensions if d not in self.accepted and not d.startswith("relation:")
            ]
            if len(unexplained) == 1:
                pinned[unexplained[0]] += times
        return {
            name: row.model_copy(update={"pinned": pinned[name]}) for name, row in self.rows.items()
        }


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
