"""A slow target's token budget: once answers run out of time, later requests are bounded.

A request that leaves ``max_tokens`` out lets the model write up to its context; on a slow
server (a CPU, a big model) that is minutes, cut at ``--timeout`` and counted as a slow answer,
not judged. Seen live: 30 requests in 352 s, 18 of them slow. So once ``SLOW_LIMIT`` answers to
requests without a token budget have run out of time, every later request that leaves the
budget out is sent with ``max_tokens = BOUND`` (the target's knob defaults, as a profile's
``knob_defaults`` would), and the run says so in one line. Counted in answers, not seconds: a
profile that sets ``knob_defaults.max_tokens`` already bounds every request and is left alone.
"""

from __future__ import annotations

from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation

__all__ = ["BOUND", "SLOW_LIMIT", "Pace"]

# Slow answers to unbounded requests before later requests are bounded, and the bound.
SLOW_LIMIT = 2
BOUND = 256


class Pace:
    """Counts slow answers to requests sent without a token budget, and bounds the knob
    defaults it is given (the target's, applied to every later request) once there are
    ``SLOW_LIMIT`` of them, and says so in ``notes`` (the run's report)."""

    def __init__(self, defaults: dict[str, Any], timeout: float, notes: list[str]) -> None:
        self.defaults, self.timeout, self.notes = defaults, timeout, notes
        self.slow = 0

    def hear(self, sent: Case, obs: Observation) -> None:
        """Take one answer to ``sent`` (as it went out, defaults and all); when it makes the
        run bound later requests, add the line that says so to ``notes``."""
        if "max_tokens" in self.defaults or not obs.exchange.slow:
            return
        if sent.options.max_tokens is not None or _budget_field(sent):
            return
        self.slow += 1
        if self.slow < SLOW_LIMIT:
            return
        self.defaults["max_tokens"] = BOUND
        self.notes.append(
            f"slow target: {self.slow} answers without max_tokens ran past --timeout "
            f"{self.timeout:g}s, so later requests that leave it out are sent with "
            f"max_tokens={BOUND} (a profile's knob_defaults sets another)"
        )


def _budget_field(case: Case) -> bool:
    """Whether the request carries a token budget as a surface field."""
    fields = case.options.fields
    return any(f in fields for f in ("max_tokens", "max_completion_tokens", "max_output_tokens"))
