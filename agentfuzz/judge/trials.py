"""Judging a stochastic target: how many tries make a real failure hard to miss.

A live model does not answer the same request the same way twice. A candidate that "passes" once
may fail on the next try, so a shrinker that believes one try ends wherever its last lucky
failure was. Here a failure rate ``p`` measured over a few tries gives ``K``, the fewest tries for
which a real failure shows up at least once with probability ``1 - (1 - p)^K >= 0.97``; every
candidate is then judged "fails in at least one of K".
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = [
    "DETECTION",
    "MAX_TRIES",
    "MEASURE_TRIES",
    "RATE_TRIES",
    "fails_within",
    "measure",
    "rate",
    "tries_for",
]

# Probability of seeing a real failure at least once among K tries.
DETECTION = 0.97
# Tries used to estimate a rate, and the fewest a final repro's stated rate rests on.
MEASURE_TRIES = 10
# A rate that is neither 0 nor 1 is measured over this many tries, so it can be quoted.
RATE_TRIES = 100
# No candidate is tried more often than this, whatever the estimate says.
MAX_TRIES = 30


def tries_for(rate: float) -> int:
    """The fewest tries K with ``1 - (1 - rate)^K >= DETECTION`` (at most ``MAX_TRIES``).

    A failure never seen again (rate 0) gets the most tries: it is the flakiest there is.
    """
    if rate >= 1.0:
        return 1
    if rate <= 0.0:
        return MAX_TRIES
    k = math.ceil(math.log(1.0 - DETECTION) / math.log(1.0 - rate))
    return max(1, min(MAX_TRIES, k))


def fails_within(tries: int, attempt: Callable[[], bool]) -> bool:
    """Whether ``attempt`` fails (returns True) in at least one of ``tries`` tries; stops at the
    first failure."""
    return any(attempt() for _ in range(tries))


def measure(tries: int, attempt: Callable[[], bool]) -> int:
    """How many of ``tries`` tries of ``attempt`` fail."""
    return sum(attempt() for _ in range(tries))


def rate(attempt: Callable[[], bool], tries: int = MEASURE_TRIES) -> tuple[int, int]:
    """A final repro's rate as ``(failures, tries)``: over ``tries`` tries, and extended to
    ``RATE_TRIES`` when it is neither 0 nor 1, so the rate a flaky repro states can be quoted."""
    hits = measure(tries, attempt)
    if 0 < hits < tries < RATE_TRIES:
        hits += measure(RATE_TRIES - tries, attempt)
        tries = RATE_TRIES
    return hits, tries
