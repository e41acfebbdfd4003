"""Overload: an answer that asks the client to come back later (RFC 9110 ``Retry-After``).

A 429 or a 503 with ``Retry-After`` says the server is busy, not broken. The live transport
sends the request again after the pause it asks for when that fits in the answer's time
budget; an overload that outlasts the budget (or names a pause agentfuzz cannot read) is a
request left unanswered (a slow answer), never a fault. Without ``Retry-After`` nothing changes:
a 429 is a request not served, as before, and a 503 stays a 5xx.
"""

from __future__ import annotations

import email.utils
import time

from agentfuzz.model.observation import SLOW, Exchange

__all__ = ["overloaded", "pause_asked", "unanswered"]

# The least pause between two tries, so that ``Retry-After: 0`` cannot spin.
_LEAST_PAUSE = 0.05


def _header(exchange: Exchange, name: str) -> str | None:
    return next((v for k, v in exchange.headers if k.lower() == name), None)


def overloaded(exchange: Exchange) -> bool:
    """Whether ``exchange`` is a whole answer saying the server is overloaded: a 429 or a 503
    with ``Retry-After``."""
    if exchange.failure is not None or exchange.status not in (429, 503):
        return False
    return _header(exchange, "retry-after") is not None


def pause_asked(exchange: Exchange, now: float | None = None) -> float | None:
    """The seconds an overloaded answer asks to wait (delay-seconds or an HTTP date), at least
    a small floor; None when it is not overloaded or names no pause agentfuzz can read."""
    value = _header(exchange, "retry-after") if overloaded(exchange) else None
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return max(float(value), _LEAST_PAUSE)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    wall = time.time() if now is None else now
    return max(when.timestamp() - wall, _LEAST_PAUSE)


def unanswered(exchange: Exchange, timeout: float) -> str:
    """The failure of an overload that outlasted the budget: a slow answer, judged by no
    oracle and counted by the run."""
    after = _header(exchange, "retry-after")
    asked = f", Retry-After: {after.strip()[:40]}" if after else ""
    return f"{SLOW}overloaded ({exchange.status}{asked}) for the whole {timeout:g}s budget"
