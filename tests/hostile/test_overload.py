"""Overload is no fault (issue 41, item 16).

A 503 with ``Retry-After`` (or a 429 with one) says the server is busy. It used to be judged as a
5xx: ``error:http_status:503``, "flaky 50/100". The transport now waits the pause asked for
and sends the request again when that fits in the answer's time budget; an overload that
outlasts the budget is a slow answer, which no oracle judges.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import BinaryIO

from agentfuzz import oracles
from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import SLOW, Exchange
from agentfuzz.wire.dialects import assemble
from agentfuzz.wire.transport._overload import pause_asked
from agentfuzz.wire.transport.live import LiveTransport
from tests.hostile.servers import Request, raw_server, respond

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
CASE = Case(history=History(items=(UserMessage(text="hi"),)))
BUSY = json.dumps({"error": {"message": "overloaded, try again"}})
COMPLETION = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hi"},
                "finish_reason": "stop",
            }
        ],
    }
)


class Busy:
    """A handler answering ``status`` (with ``Retry-After: after``) ``busy_for`` times, then a
    completion; ``seen`` says when each request came."""

    def __init__(self, status: int, busy_for: int, after: str | None) -> None:
        self.status, self.busy_for, self.after = status, busy_for, after
        self.seen: list[float] = []

    def __call__(self, _request: Request, out: BinaryIO) -> None:
        self.seen.append(time.monotonic())
        if len(self.seen) > self.busy_for:
            respond(out, 200, COMPLETION)
            return
        headers = {"retry-after": self.after} if self.after is not None else {}
        respond(out, self.status, BUSY, headers=headers)


def _send(handler: Busy, timeout: float, patient: bool = True) -> Exchange:
    with (
        raw_server(handler) as server,
        LiveTransport(server.base_url, timeout=timeout, patient=patient) as transport,
    ):
        return transport.send("/chat/completions", BODY, stream=False)


def test_a_503_with_retry_after_is_sent_again_after_the_pause() -> None:
    handler = Busy(503, busy_for=1, after="1")
    exchange = _send(handler, timeout=5)
    assert exchange.status == 200 and exchange.failure is None
    first, second = handler.seen
    assert second - first >= 0.9  # the pause asked for was honoured
    assert oracles.check(CASE, assemble(exchange)) == []


def test_a_429_with_retry_after_is_sent_again_too() -> None:
    handler = Busy(429, busy_for=1, after="1")
    exchange = _send(handler, timeout=5)
    assert exchange.status == 200 and exchange.failure is None
    assert len(handler.seen) == 2


def test_a_pause_past_the_budget_is_a_slow_answer_never_a_finding() -> None:
    handler = Busy(503, busy_for=99, after="30")
    exchange = _send(handler, timeout=2)
    assert len(handler.seen) == 1
    assert exchange.slow and exchange.elapsed < 1.5
    assert exchange.failure == f"{SLOW}overloaded (503, Retry-After: 30) for the whole 2s budget"
    assert oracles.check(CASE, assemble(exchange)) == []


def test_overload_that_persists_is_tried_within_the_budget_then_left() -> None:
    handler = Busy(503, busy_for=99, after="1")
    exchange = _send(handler, timeout=2.5)
    assert len(handler.seen) >= 2
    assert exchange.slow and exchange.elapsed < 3.0
    assert oracles.check(CASE, assemble(exchange)) == []


def test_a_503_without_retry_after_is_still_a_5xx() -> None:
    handler = Busy(503, busy_for=99, after=None)
    exchange = _send(handler, timeout=2)
    assert exchange.status == 503 and exchange.failure is None
    assert len(handler.seen) == 1
    signatures = [v.signature for v in oracles.check(CASE, assemble(exchange))]
    assert any(s.startswith("error:http_status:503") for s in signatures)


def test_a_replayed_overload_is_not_waited_for() -> None:
    # A cassette answers at once: waiting would only slow the replay down.
    handler = Busy(503, busy_for=99, after="1")
    exchange = _send(handler, timeout=5, patient=False)
    assert len(handler.seen) == 1 and exchange.slow


def _overloaded(after: str) -> Exchange:
    return Exchange(
        url="u", request={}, stream=False, status=503, headers=(("Retry-After", after),)
    )


def test_retry_after_reads_seconds_or_a_date() -> None:
    now = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert pause_asked(_overloaded("3")) == 3.0
    assert pause_asked(_overloaded(later), now=now.timestamp()) == 7.0
    assert pause_asked(_overloaded("0")) == 0.05  # never a tight loop
    assert pause_asked(_overloaded("soon")) is None
    assert pause_asked(_overloaded("-1")) is None
    plain = Exchange(url="u", request={}, stream=False, status=503)
    assert pause_asked(plain) is None
