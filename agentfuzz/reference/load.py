"""A GPU server's timing, played by the reference server, and a meter of the load it carries.

``Timing``: every answer waits ``fixed_ms`` (the queue and the prefill), then ``per_token_ms``
for each token the scripted model wrote, four characters of its raw text to a token. A streamed
answer spreads that wait over its events, as a server sends tokens while it makes them. All of it
is ``anyio.sleep``: no CPU is burnt while waiting, and any number of requests wait at once.
``capacity`` (None: no limit) is how many requests the server works on together; the others
queue, so throughput stops growing at that many in flight, as a GPU server's does once its batch
is full.

``Load``: an ASGI middleware counting the chat and Responses requests in flight (queued ones
included), and for how long the server held each number of them. ``GET /load`` reads it, so a
benchmark measures from the server's side how full the client kept it.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio

__all__ = ["Load", "Timing"]

# The paths whose requests are metered (and queued under ``capacity``).
_METERED = ("/v1/chat/completions", "/v1/responses")
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Timing:
    """How long each answer takes; all zero answers at once."""

    fixed_ms: float = 0.0
    per_token_ms: float = 0.0
    capacity: int | None = None

    def tokens(self, raw: str) -> int:
        return max(1, math.ceil(len(raw) / _CHARS_PER_TOKEN))

    async def before(self) -> None:
        """The wait before any answer (refusals included)."""
        if self.fixed_ms > 0:
            await anyio.sleep(self.fixed_ms / 1000)

    def generating(self, raw: str) -> float:
        """Seconds the model takes to write ``raw``."""
        return self.per_token_ms * self.tokens(raw) / 1000 if self.per_token_ms > 0 else 0.0


class Load:
    """ASGI middleware: counts chat and Responses requests in flight and, under ``capacity``,
    lets only that many be worked on at once; answers ``GET /load`` with what it counted."""

    def __init__(self, app: Any, capacity: int | None = None) -> None:
        self.app = app
        self.capacity = capacity
        self._limiter: anyio.CapacityLimiter | None = None
        self._lock = threading.Lock()
        self.level = 0
        self.served = 0
        self.busy_s = 0.0  # request-seconds: the sum of every request's time in the server
        self.time_at: list[float] = [0.0]  # seconds spent with k requests in flight, by k
        self._since = time.monotonic()

    def _change(self, by: int) -> None:
        with self._lock:
            now = time.monotonic()
            self.time_at[self.level] += now - self._since
            self.busy_s += self.level * (now - self._since)
            self._since = now
            self.level += by
            if self.level >= len(self.time_at):
                self.time_at.append(0.0)
            if by < 0:
                self.served += 1

    def snapshot(self) -> dict[str, Any]:
        self._change(0)
        with self._lock:
            return {
                "in_flight": self.level,
                "served": self.served,
                "busy_s": round(self.busy_s, 6),
                "time_at": [round(t, 6) for t in self.time_at],
                "capacity": self.capacity,
            }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/load":
            await _send_json(send, self.snapshot())
            return
        if path not in _METERED:
            await self.app(scope, receive, send)
            return
        self._change(+1)
        try:
            if self.capacity is None:
                await self.app(scope, receive, send)
            else:
                if self._limiter is None:  # made inside the server's event loop
                    self._limiter = anyio.CapacityLimiter(self.capacity)
                async with self._limiter:
                    await self.app(scope, receive, send)
        finally:
            self._change(-1)


async def _send_json(send: Any, doc: dict[str, Any]) -> None:
    body = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
