"""Keeping a copy of an answer as the client reads it, for the two recorders (the live client's
own, and the campaign tape's), and the headers neither ever keeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx

__all__ = ["SECRET_HEADERS", "TeeStream", "teed"]

# Never written to a recording, a cassette, a bundle or a log.
SECRET_HEADERS = ("authorization", "api-key", "x-api-key", "cookie", "set-cookie")


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


def teed(
    response: httpx.Response, request: httpx.Request, done: Callable[[bytes], None]
) -> httpx.Response:
    """``response`` as it came, its body streamed through a ``TeeStream`` into ``done``."""
    assert isinstance(response.stream, httpx.SyncByteStream)
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        stream=TeeStream(response.stream, done),
        extensions=response.extensions,
        request=request,
    )
