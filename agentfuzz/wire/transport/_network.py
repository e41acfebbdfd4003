"""The network under every recorder: the transport that reaches the server, adding the user's
headers on the way out."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

__all__ = ["network"]


class _Headed(httpx.BaseTransport):
    """The network, adding the user's headers (``--header``) to every request it sends.

    They are added here, below every recorder (the tee, a campaign tape), so that no
    recording, cassette or bundle ever sees them: they are secrets like the API key."""

    def __init__(self, inner: httpx.BaseTransport, headers: Mapping[str, str]) -> None:
        self._inner, self._headers = inner, dict(headers)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # A copy: the recorders above read ``request.headers`` after this returns.
        headers = httpx.Headers(request.headers)
        headers.update(self._headers)
        sent = httpx.Request(
            request.method,
            request.url,
            headers=headers,
            stream=request.stream,
            extensions=request.extensions,
        )
        response = self._inner.handle_request(sent)
        response.request = request
        return response

    def close(self) -> None:
        self._inner.close()


def network(headers: Mapping[str, str] | None = None) -> httpx.BaseTransport:
    """The transport that reaches the server, with ``headers`` added on the way out; what a
    campaign tape records through (its inner transport)."""
    return _Headed(httpx.HTTPTransport(), headers) if headers else httpx.HTTPTransport()
