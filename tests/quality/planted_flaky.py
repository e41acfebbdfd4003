"""A planted bug that fires only some of the time, to test fuzzing a stochastic target.

``flaky_empty`` copies the shape of the Kimi-K2 report (seed 000): a live model that, given a
history it reads badly, answers an empty turn on some tries and a normal one on others. Here
the badly read history is any that holds a tool result answering one of its calls (most
generated histories do, not all); on such a request the server answers an empty turn (no text,
no call, 200) with probability ``FLAKY_RATE``. The coin is a ``random.Random`` seeded once per
app and flipped only on triggering requests, so a fresh app with the same seed, sent the same
requests, gives the same answers.

The smallest trigger is ``user, assistant(one call), result``: ``FLAKY_MIN_ITEMS`` wire items,
``FLAKY_MIN_SIZE`` in ``History.size`` (items plus calls). An orphan result does not fire it,
so no two-item history can.

Server-side test code: it must not import ``agentfuzz``.
"""

from __future__ import annotations

import random
import threading

from .planted_request import ParsedRequest

__all__ = [
    "FLAKY_MIN_ITEMS",
    "FLAKY_MIN_SIZE",
    "FLAKY_RATE",
    "STOCHASTIC_BUGS",
    "Coin",
    "answered_call",
]

# Bugs that fire with a probability: not in ``BUGS``, whose tests expect one request to show
# the effect every time.
STOCHASTIC_BUGS = ("flaky_empty",)
FLAKY_RATE = 0.3
FLAKY_MIN_ITEMS = 3
FLAKY_MIN_SIZE = 4


class Coin:
    """A biased coin with its own seeded generator: ``flip()`` is True with probability ``rate``."""

    def __init__(self, rate: float, seed: int) -> None:
        self.rate = rate
        self._random = random.Random(seed)
        # uvicorn answers on one event loop, but a test may share an app between threads.
        self._lock = threading.Lock()

    def flip(self) -> bool:
        with self._lock:
            return self._random.random() < self.rate


def answered_call(req: ParsedRequest) -> bool:
    """Whether the history holds a tool result that answers one of its calls."""
    called = {c.id for e in req.entries for c in e.calls}
    return any(e.kind == "tool" and e.call_id in called for e in req.entries)
