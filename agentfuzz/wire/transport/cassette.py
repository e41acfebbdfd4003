"""Cassettes as httpx transports: one that answers from a cassette or records into it, as vcrpy's
record modes say, and one that replays a cassette and never touches the network.

agentfuzz plugs these under ``LiveTransport`` instead of letting vcrpy patch httpx, because vcrpy
reads a whole response before the client sees it, and a server that streams forever would then
hang the recorder past every time and size budget.

- ``RecordingTransport`` passes each response through untouched and, once the client has read
  it, hands the raw bytes to a sink as one vcrpy interaction.
- ``ReplayTransport`` answers from a loaded cassette, re-splitting each body at seeded random
  byte boundaries: vcrpy stores a streamed body whole, so replaying it in one piece would never
  exercise the SSE decoder and the assembler against chunk boundaries.

The format lives in ``_cassette_format.py`` (headers ``authorization``, ``api-key``,
``x-api-key``, ``cookie`` and ``set-cookie`` are never written), the matching in
``_matchers.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from vcr.cassette import Cassette
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest

from agentfuzz.errors import CassetteError, NotInCassette
from agentfuzz.wire.transport._cassette_format import (
    Interaction,
    headers_of,
    interaction_of,
    load_cassette,
    metadata,
    new_cassette,
    one_line,
    save_cassette,
    vcr_request,
)
from agentfuzz.wire.transport._matchers import Asked, key
from agentfuzz.wire.transport._matchers import asked as asked_of
from agentfuzz.wire.transport._tee import SECRET_HEADERS, teed

__all__ = [
    "SECRET_HEADERS",
    "CassetteError",
    "CassetteTransport",
    "Interaction",
    "NotInCassette",
    "RecordedAnswer",
    "RecordingTransport",
    "ReplayTransport",
    "Tape",
    "interaction_of",
    "load_cassette",
    "metadata",
    "new_cassette",
    "save_cassette",
]


# A loaded cassette, as the layers above hold it: opaque outside ``transport/`` (they pass it
# back to the transports here), so nothing of vcrpy leaks out.
Tape = Cassette


class RecordingTransport(httpx.BaseTransport):
    """Sends through ``inner`` and gives ``sink`` each exchange, as read, as a vcrpy interaction.

    The body is what the client actually read, handed over when the client closes the
    response: if it stopped early (a time or size budget) or the connection failed mid-answer,
    the cassette holds the bytes read until then. The bytes alone cannot say that the answer
    was cut; the target adds the transport failure to the recording beside them.
    """

    def __init__(
        self, sink: Callable[[Interaction], None], inner: httpx.BaseTransport | None = None
    ) -> None:
        self._inner = inner or httpx.HTTPTransport()
        self._sink = sink

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        sent = vcr_request(request)

        def done(body: bytes) -> None:
            recorded = {
                "status": {"code": response.status_code, "message": response.reason_phrase},
                "headers": headers_of(response.headers),
                "body": {"string": body},
            }
            self._sink((sent, recorded))

        return teed(response, request, done)

    def close(self) -> None:
        self._inner.close()


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


# Piece sizes: a few bytes often enough to cut inside a UTF-8 character or between "\r" and
# "\n", and up to 144 bytes, so that events (most are 200-600 bytes) are still cut somewhere
# inside but a body comes in fewer pieces (each costs the client's decoders a pass): 34 bytes
# on average, against 23 when the largest piece was 89.
_PIECE_SIZES = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)
_MEAN_PIECE = sum(_PIECE_SIZES) // len(_PIECE_SIZES)


def split_at_random(body: bytes, rng: random.Random) -> list[bytes]:
    """``body`` cut at random byte boundaries (mid-line and mid-character included)."""
    chunks: list[bytes] = []
    at = 0
    while at < len(body):
        # Sizes are drawn in batches of about what the body needs: one call, not one a piece.
        for size in rng.choices(_PIECE_SIZES, k=(len(body) - at) // _MEAN_PIECE + 1):
            chunks.append(body[at : at + size])
            at += size
            if at >= len(body):
                break
    return chunks


class CassetteTransport(httpx.BaseTransport):
    """Answers from ``cassette`` or records into it, as vcrpy's record modes say.

    ``none``: play, or raise ``NotInCassette``; ``once``: like ``none`` for a cassette loaded from
    a file, else record; ``new_episodes``: play what the cassette holds, record the rest; ``all``:
    record everything anew. Repeated identical requests get their recorded answers in order.
    With ``rng``, played bodies come back in random pieces. ``cassette`` may be swapped between
    runs. What the client read, played or recorded, is in its exchange (``LiveTransport``'s tee).
    """

    def __init__(
        self,
        cassette: Cassette,
        inner: httpx.BaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.cassette = cassette
        self._rng = rng
        self._live = RecordingTransport(self._recorded, inner)
        self._indexed: Cassette | None = None
        self._known = 0
        self._index: dict[tuple[str, str, str], list[int]] | None = None
        self._next = 0
        self._next_of: object = None

    def _recorded(self, interaction: Interaction) -> None:
        self.cassette.append(*interaction)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # Only a cassette loaded from a file plays: what this run recorded is not played back to
        # it, so a repeated request is sent (and recorded) again, as its replay will ask for it.
        if self.cassette.record_mode != RecordMode.ALL and self.cassette.rewound:
            recorded = self._play(asked_of(request))
            if recorded is not None:
                return self._played(request, recorded)
            if self.cassette.write_protected:
                raise NotInCassette(self._divergence(vcr_request(request)))
        return self._live.handle_request(request)

    def _play(self, asked: Asked) -> dict[str, Any] | None:
        """The first unplayed answer to ``asked``, marked played; None if there is none.

        The same match as the cassette's matchers (method, path, JSON body as data). A replay
        asks in recorded order, so the first unplayed interaction is tried first, by its bytes
        (equal bytes are equal JSON); only a request that is not the next one goes through an
        index of canonical bodies: vcrpy's own lookup re-parses every recorded body each time.
        """
        cassette = self.cassette
        if self._indexed is not cassette:
            # What this run records into the cassette is not played back: only what it held.
            self._indexed, self._known, self._index = cassette, len(cassette.data), None
        counts = cassette.play_counts
        if self._next_of is not counts:  # a new cassette, or the same one rewound
            self._next, self._next_of = 0, counts
        while self._next < self._known and counts[self._next]:
            self._next += 1
        if self._next < self._known:
            stored = cassette.data[self._next][0]
            if (stored.body, stored.method, stored.path) == (asked.body, asked.method, asked.path):
                counts[self._next] += 1
                return cassette.data[self._next][1]  # type: ignore[no-any-return]
        if self._index is None:
            self._index = {}
            for i in range(self._known):
                self._index.setdefault(key(cassette.data[i][0]), []).append(i)
        for i in self._index.get(key(asked), ()):
            if counts[i] == 0:
                counts[i] += 1
                return cassette.data[i][1]  # type: ignore[no-any-return]
        return None

    def _played(self, request: httpx.Request, recorded: dict[str, Any]) -> httpx.Response:
        body = recorded["body"]["string"]
        if isinstance(body, str):
            body = body.encode("utf-8")
        chunks = split_at_random(body, self._rng) if self._rng else [body]
        headers = [(k, v) for k, values in recorded.get("headers", {}).items() for v in values]
        return httpx.Response(
            recorded["status"]["code"], headers=headers, stream=_Chunks(chunks), request=request
        )

    def _divergence(self, asked: VcrRequest) -> str:
        where = Path(str(self.cassette.path)).name
        number = sum(self.cassette.play_counts.values()) + 1
        head = f"request not in cassette {where}: request {number}, POST {asked.path}"
        best = self.cassette.find_requests_with_most_matches(asked)
        if not best:
            return f"{head}: matches no recorded one"
        _, _, fails = best[0]
        if not fails:
            return f"{head}: every matching answer was already played"
        return f"{head}: {one_line(str(fails[0][1]))}"

    def close(self) -> None:
        self._live.close()


class ReplayTransport(CassetteTransport):
    """Answers each request from ``cassette`` and never touches the network."""

    def __init__(self, cassette: Cassette, rng: random.Random | None = None) -> None:
        super().__init__(cassette, rng=rng, inner=_NoNetwork())


class RecordedAnswer(httpx.BaseTransport):
    """Answers every request with one recorded answer, in ``chunks``; with no ``status`` (no
    answer was ever read) the read fails, as it did when it was recorded."""

    def __init__(self, status: int | None, content_type: str, chunks: list[bytes]) -> None:
        self._status = status
        self._headers = {"content-type": content_type} if content_type else {}
        self._chunks = chunks

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._status is None:
            raise httpx.ReadError("no answer was recorded", request=request)
        return httpx.Response(self._status, headers=self._headers, stream=_Chunks(self._chunks))


class _NoNetwork(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raise NotInCassette(f"request not in cassette: {request.method} {request.url.path}")
