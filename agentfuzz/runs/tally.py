"""The run's tally: what the requests of a run used and how the target answered them.

The target only turns a case into an observation; the run counts. Per mode (``chat/stream``):
each answer's seconds and how many were slow answers (the summary's ``latency``). Per dimension
of the request surface a request used (``request.surface.used``), and per relation a paired
request was sent for: how the target answered it (the summary's ``coverage``).

A request carries several dimensions, and a refusal names none of them for sure. So a refusal
is pinned on a dimension only when the same request without it was answered 2xx: the run
re-sends it so (``suspect`` names the one dimension worth the request: every other one the
refused request used was answered 2xx somewhere in the run) and ``pin``s what that shows. The
table says "always refused" of a dimension only on such evidence, never because it rode along
with another field, or a history, the target refuses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agentfuzz.model.history import Case
from agentfuzz.model.modes import label
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.model.summary import PINNED_MIN, Coverage
from agentfuzz.request.surface import PLAIN, used

__all__ = ["Tally"]


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    rows: dict[str, Coverage] = field(default_factory=dict)
    # The dimensions of each refused request (how many were refused so), and every dimension
    # some request answered 2xx used: what a refusal is pinned from.
    accepted: set[str] = field(default_factory=set)
    pins: Counter[str] = field(default_factory=Counter)
    probes: Counter[str] = field(default_factory=Counter)

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

    def suspect(self, case: Case, obs: Observation) -> str | None:
        """The dimension a refusal of ``case`` may be pinned on, by re-sending it without that
        one: the only one it used that no 2xx answer of the run used (a relation is a pairing,
        not a field: never), while it has fewer than ``PINNED_MIN`` pins and probes left."""
        if _answer_class(obs.exchange) != "refused" or case.relation is not None:
            return None
        unexplained = [d for d in used(case) if d not in self.accepted and d != PLAIN]
        if len(unexplained) != 1:
            return None
        dimension = unexplained[0]
        if self.pins[dimension] >= PINNED_MIN or self.probes[dimension] >= _PROBES:
            return None
        self.probes[dimension] += 1
        return dimension

    def pin(self, dimension: str, without: Observation) -> None:
        """The answer to a refused request re-sent without ``dimension``: a 2xx pins it."""
        if _answer_class(without.exchange) == "ok":
            self.pins[dimension] += 1

    @property
    def coverage(self) -> dict[str, Coverage]:
        """Every row, each with the refusals pinned on it as the run now stands."""
        return {
            name: row.model_copy(update={"pinned": self.pins[name]})
            for name, row in self.rows.items()
        }


# Re-sends a run spends on one dimension's refusals, pinned or not.
_PROBES = 2 * PINNED_MIN


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
