"""Reading an answer within its budget, whatever its framing.

One answer may take ``timeout`` seconds in all and ``BODY_LIMIT`` bytes. Both are checked as
each chunk of bytes arrives, before any framing is parsed: a stream that never completes an
event (``: ping`` comments without end, ``data:`` lines with no blank line, one endless line)
is cut as surely as one that floods whole events. A read timeout alone never fires while bytes
keep coming, and an SSE parser that only reports whole events never sees the clock.

While it is read, what is kept is bounded too: each SSE event is charged what it costs to
hold beside its bytes, so a flood of tiny events cannot fill memory with objects the bytes
alone do not count. Once cut, an answer keeps only its first ``CUT_KEEP`` bytes: its own end
never came, so no oracle but ``error`` reads it, and what follows those bytes would only make
every judgement, bundle and cassette after it heavier (``Answer.cut``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator

import httpx
from httpx_sse import EventSource

from agentfuzz.model.observation import SLOW, SSEEvent

__all__ = [
    "BODY_LIMIT",
    "CUT_KEEP",
    "SMALL_LIMIT",
    "Answer",
    "Budget",
    "Overrun",
    "read_answer",
    "read_small",
]

# Past this many bytes an answer is cut. Past the bytes it is a finding (ResponseTooLarge):
# no chat turn is 32 MiB. Past the time it is a slow answer (a slow model and an endless stream
# look alike from here).
BODY_LIMIT = 32 * 1024 * 1024
# What holding one SSE event costs beside its data: the event object and its strings.
EVENT_OVERHEAD = 64
# What an answer cut by its budget keeps of itself (its recording, its body or events).
CUT_KEEP = 1024 * 1024
# ``GET /models`` and ``/version``: a model list is a few kB; a bigger one is no model list.
SMALL_LIMIT = 1024 * 1024


class Overrun(Exception):
    """The answer went on past its deadline or its size budget; ``str()`` is the failure."""


class Budget:
    """What one answer may still take: until ``deadline`` (a ``time.perf_counter`` time) and
    ``limit`` bytes (``BODY_LIMIT`` unless told); ``spend`` raises ``Overrun`` past either."""

    def __init__(self, timeout: float, deadline: float, limit: int | None = None) -> None:
        self.timeout, self.deadline, self.size = timeout, deadline, 0
        self.limit = BODY_LIMIT if limit is None else limit

    def left(self) -> float:
        """Seconds until the deadline (never below a small floor: httpx needs a timeout)."""
        return max(self.deadline - time.perf_counter(), 0.001)

    def spend(self, more: int) -> None:
        self.size += more
        if self.size > self.limit:
            raise Overrun(f"ResponseTooLarge: more than {self.limit} bytes")
        if time.perf_counter() > self.deadline:
            # Still sending when time ran out: a slow answer, not a fault.
            raise Overrun(f"{SLOW}not complete after {self.timeout:g}s")


def _bytes(response: httpx.Response, budget: Budget) -> Iterator[bytes]:
    """The answer's (decoded) bytes as they arrive, each chunk paid for before it is used."""
    for chunk in response.iter_bytes():
        budget.spend(len(chunk))
        yield chunk


def _sse(response: httpx.Response, budget: Budget) -> Iterator[SSEEvent]:
    """The answer's SSE events, parsed by httpx-sse from the budgeted bytes: the parser holds
    at most the budget's bytes, however the stream is framed."""
    fed = httpx.Response(
        response.status_code,
        # The content type alone: its charset applies, and the bytes are decoded already.
        headers={"content-type": response.headers.get("content-type", "")},
        content=_bytes(response, budget),
    )
    for event in EventSource(fed).iter_sse():
        budget.spend(EVENT_OVERHEAD)
        # httpx-sse names unnamed events "message"; the wire had no name.
        yield SSEEvent(None if event.event == "message" else event.event, event.data)


def read_answer(
    response: httpx.Response,
    sse: bool,
    budget: Budget,
    events: list[SSEEvent],
    chunks: list[bytes],
) -> None:
    """Read ``response`` into ``events`` (an SSE stream) or ``chunks``, within ``budget``; what
    was read stays there when reading stops early (``Overrun``, or an httpx error)."""
    if sse:
        for event in _sse(response, budget):
            events.append(event)
    else:
        for chunk in _bytes(response, budget):
            chunks.append(chunk)


def read_small(response: httpx.Response, budget: Budget) -> bytes:
    """The whole (small) body of ``response``, within ``budget``; raises ``Overrun`` past it."""
    return b"".join(_bytes(response, budget))


class Answer:
    """What one try read of an answer: its status line and headers, then its events (an SSE
    stream) or its body's chunks, and ``failure`` when reading stopped early."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.reason = ""
        self.headers = httpx.Headers()
        self.sse = False
        self.events: list[SSEEvent] = []
        self.chunks: list[bytes] = []
        self.failure: str | None = None

    @property
    def content_type(self) -> str:
        return str(self.headers.get("content-type", ""))

    @property
    def body(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")

    def read(self, response: httpx.Response, stream: bool, budget: Budget) -> None:
        """Read ``response`` within ``budget``: SSE events when a stream was asked for and
        came, else the body; raises ``Overrun`` (or an httpx error) with what was read kept."""
        self.status, self.reason = response.status_code, response.reason_phrase
        self.headers = response.headers
        self.sse = stream and self.content_type.partition(";")[0].strip() == "text/event-stream"
        read_answer(response, self.sse, budget, self.events, self.chunks)

    def cut(self, failure: str, raw: bytes) -> bytes:
        """The answer stopped at its budget (``failure``): keep what its first ``CUT_KEEP``
        bytes hold, and return its recording (``raw``) cut there too.

        What is kept is read again from the cut recording, as a replay of it reads it, so that
        a bundle's cassette shows exactly what was judged. Without a recording, the events or
        bytes read first are kept."""
        self.failure = failure
        if not raw:
            self.events, self.chunks = _first(self.events), [b"".join(self.chunks)[:CUT_KEEP]]
            return raw
        raw = raw[:CUT_KEEP]
        framing = {k: v for k, v in self.headers.items() if k in _FRAMING}
        again = httpx.Response(self.status or 200, headers=framing, content=raw)
        self.events, self.chunks = [], []
        # A compressed recording cut mid-way may fail to decode: what decoded before stays.
        with contextlib.suppress(Overrun, httpx.HTTPError):
            read_answer(again, self.sse, Budget(0.0, math.inf), self.events, self.chunks)
        return raw


# The headers that say how a recording's bytes read (its media type and charset, its encoding).
_FRAMING = ("content-type", "content-encoding")


def _first(events: list[SSEEvent]) -> list[SSEEvent]:
    """The first events, up to ``CUT_KEEP`` bytes as the budget counts them."""
    kept: list[SSEEvent] = []
    size = 0
    for event in events:
        size += len(event.data) + EVENT_OVERHEAD
        if size > CUT_KEEP:
            break
        kept.append(event)
    return kept
