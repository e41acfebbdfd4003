"""A byte stream that hands over a copy of what the client read, once the client is done."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx

__all__ = ["TeeStream"]


class TeeStream(httpx.SyncByteStream):
    """Yields the inner stream's chunks and keeps a copy, handed to ``done`` when the client
    closes the response: after the whole body, or after whatever part of it was read before
    the client stopped or the connection failed."""

    def __init__(self, inner: httpx.SyncByteStream, done: Callable[[bytes], None]) -> None:
        self._inner = inner
        self._done = done
        self._chunks: list[bytes] = []

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._done(b"".join(self._chunks))
