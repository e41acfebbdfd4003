"""The live transport: POST a request body to a real server and keep whatever comes back.

Only a connection that cannot be opened at all raises (``TargetUnreachable``). Anything that
goes wrong once the server has accepted the connection (a reset, a stream that went silent, a
body cut short) is returned inside the ``Exchange`` with ``failure`` set. Running out of time
while the server had sent nothing yet, or was still sending, is a slow answer, not a fault:
its failure starts with ``observation.SLOW``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx
from httpx_sse import EventSource

from agentfuzz.errors import ModelListError, TargetUnreachable
from agentfuzz.model.observation import SLOW, Exchange, SSEEvent
from agentfuzz.transport._tee import SECRET_HEADERS, teed

__all__ = ["LiveTransport", "ModelListError", "TargetUnreachable", "network"]

_FAILURE_LIMIT = 300
# A response is read for at most ``timeout`` seconds in all and this many bytes (or SSE event
# bytes), so a server that streams forever (``data: {}`` without end) cannot hang the run or
# exhaust memory; what was read so far is kept. Past the bytes it is a finding; past the time
# a slow answer (a slow model and an endless stream look alike from here).
BODY_LIMIT = 32 * 1024 * 1024
_EVENT_OVERHEAD = 64


class _Overrun(Exception):
    """The response went on past the request's deadline or size budget."""


def _reason(exc: BaseException) -> str:
    """A one-line, lower-case reason for a connection that could not be opened."""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timeout"
    if "refused" in lowered:
        return "connection refused"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "name not resolved"
    return " ".join(text.split())


def _failure(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")
    return text[:_FAILURE_LIMIT]


# How many more times ``send`` tries a request that found its kept-alive connection closed.
_STALE_RETRIES = 2


def _slow(exchange: Exchange) -> bool:
    return bool(exchange.failure and exchange.failure.startswith(SLOW))


# The request extension under which ``send`` asks the tee to keep what was sent and read.
_READ = "agentfuzz.read"


class _Read:
    """What the tee kept of one exchange: the request headers as sent and the raw body read."""

    def __init__(self) -> None:
        self.headers: tuple[tuple[str, str], ...] = ()
        self.raw = b""

    def keep(self, raw: bytes) -> None:
        self.raw = raw


class _Tee(httpx.BaseTransport):
    """Passes every request to ``inner``; for one that asks (``_READ``), keeps the headers it
    went with and the answer's bytes as the client reads them, before any content decoding."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        read = request.extensions.get(_READ)
        if not isinstance(read, _Read):
            return response
        read.headers = _pairs(request.headers)
        return teed(response, request, read.keep)

    def close(self) -> None:
        self._inner.close()


def _pairs(headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
    """``headers`` as they came, without a key or a cookie."""
    return tuple((k, v) for k, v in headers.multi_items() if k.lower() not in SECRET_HEADERS)


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


class _Budget:
    """What one answer may still take: ``timeout`` seconds from ``started`` and ``BODY_LIMIT``
    bytes; ``spend`` raises ``_Overrun`` past either."""

    def __init__(self, timeout: float, started: float) -> None:
        self.timeout, self.deadline, self.size = timeout, started + timeout, 0

    def spend(self, more: int) -> None:
        self.size += more
        if self.size > BODY_LIMIT:
            raise _Overrun(f"ResponseTooLarge: more than {BODY_LIMIT} bytes")
        if time.perf_counter() > self.deadline:
            # Still sending when time ran out: a slow answer, not a fault.
            raise _Overrun(f"{SLOW}not complete after {self.timeout:g}s")


def _read_answer(
    response: httpx.Response,
    sse: bool,
    budget: _Budget,
    events: list[SSEEvent],
    chunks: list[bytes],
) -> None:
    """Read ``response`` into ``events`` (an SSE stream) or ``chunks``, within ``budget``; what
    was read stays there when reading stops early."""
    if sse:
        for event in EventSource(response).iter_sse():
            # httpx-sse names unnamed events "message"; the wire had no name.
            name = None if event.event == "message" else event.event
            events.append(SSEEvent(name, event.data))
            budget.spend(len(event.data) + _EVENT_OVERHEAD)
    else:
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            budget.spend(len(chunk))


def _outgoing(body: dict[str, Any] | str, stream: bool) -> tuple[bytes, dict[str, str]]:
    """The bytes and headers a request posts. The body is serialized here, not by httpx, so the
    bytes sent are exactly ``json.dumps(body)`` (a malformed body's text, as it is)."""
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if stream:
        headers.update({"Accept": "text/event-stream", "Cache-Control": "no-store"})
    return content, headers


class LiveTransport:
    """Sends requests to an OpenAI-compatible server over one pooled ``httpx.Client``."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        recording: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``headers`` go with every request the default network sends (``network``); a given
        ``transport`` that reaches the network must carry them itself."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        # Without: exchanges carry no recording (an offline replay has its cassette already).
        self.recording = recording
        key = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # ``transport`` puts a cassette (or a mock) under the client; the tee above it keeps
        # each exchange's recording, whatever answers.
        self._client = httpx.Client(
            transport=_Tee(transport or network(headers)),
            headers=key,
            timeout=httpx.Timeout(
                connect=min(timeout, 10.0), read=timeout, write=timeout, pool=timeout
            ),
        )

    def __repr__(self) -> str:
        return f"LiveTransport({self.base_url!r})"

    def send(self, path: str, body: dict[str, Any] | str, stream: bool) -> Exchange:
        """POST ``body`` as JSON to ``base_url + path``; read SSE events when ``stream``. A
        ``str`` body (a malformed one) is sent as that text.

        A request that fails before any answer on a kept-alive connection the server had
        already closed is sent again on a fresh one, as HTTP clients do: the fault, if any, is
        the earlier request's, and pinning it on this one would be a false finding. A request
        that fails so on a connection opened for it is this request's failure."""
        exchange, reused = self._send(path, body, stream)
        for _ in range(_STALE_RETRIES):
            stale = reused and exchange.status is None and not exchange.events
            if not (stale and exchange.failure and not exchange.body and not _slow(exchange)):
                return exchange
            try:
                exchange, reused = self._send(path, body, stream)
            except TargetUnreachable:
                return exchange  # the server is gone: this request's failure is what it left
        return exchange

    def _send(self, path: str, body: dict[str, Any] | str, stream: bool) -> tuple[Exchange, bool]:
        """One try of ``send``, and whether it went over a connection opened before it."""
        url = self.base_url + path
        # What the network layer did for this request (a cassette or a mock says nothing).
        traced: list[str] = []

        def trace(event: str, _info: dict[str, Any]) -> None:
            traced.append(event)

        content, headers = _outgoing(body, stream)
        status: int | None = None
        content_type, reason = "", ""
        answer_headers = httpx.Headers()
        read = _Read()
        chunks: list[bytes] = []
        events: list[SSEEvent] = []
        failure: str | None = None
        started = time.perf_counter()
        budget = _Budget(self.timeout, started)
        try:
            asked: dict[str, Any] = {"trace": trace}
            if self.recording:
                asked[_READ] = read
            with self._client.stream(
                "POST", url, content=content, headers=headers, extensions=asked
            ) as response:
                status, reason = response.status_code, response.reason_phrase
                answer_headers = response.headers
                content_type = response.headers.get("content-type", "")
                sse = stream and content_type.partition(";")[0].strip() == "text/event-stream"
                _read_answer(response, sse, budget, events, chunks)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise TargetUnreachable(f"cannot connect to {self.base_url}: {_reason(exc)}") from None
        except httpx.TimeoutException as exc:
            # Nothing read yet: the model is slow (or the server hung, which the next request
            # shows). Something read, then silence: the server stopped making progress.
            silent = events or chunks
            failure = _failure(exc) if silent else f"{SLOW}nothing after {self.timeout:g}s"
        except httpx.HTTPError as exc:
            failure = _failure(exc)
        except _Overrun as exc:
            failure = str(exc)[:_FAILURE_LIMIT]
        exchange = Exchange(
            url=url,
            request=body,
            stream=stream,
            status=status,
            content_type=content_type,
            body=b"".join(chunks).decode("utf-8", errors="replace"),
            events=tuple(events),
            failure=failure,
            elapsed=time.perf_counter() - started,
            request_headers=read.headers,
            reason=reason,
            headers=_pairs(answer_headers),
            raw=read.raw,
        )
        opened = any(event.startswith("connection.connect_tcp") for event in traced)
        return exchange, bool(traced) and not opened

    def ready(self, within: float) -> bool:
        """Whether ``GET /models`` answers 200 within ``within`` seconds: a server still
        loading its model refuses the connection or answers 503 until it can serve."""
        try:
            response = self._client.get(self.base_url + "/models", timeout=within)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def accepts(self, within: float = 5.0) -> bool:
        """Whether the server still takes a connection: only a refused one says no. An answer
        of any status says yes, and so does one too slow to wait for: a busy server is not a
        dead one."""
        try:
            self._client.get(self.base_url + "/models", timeout=within)
        except httpx.ConnectError:
            return False
        except httpx.HTTPError:
            return True
        return True

    def models(self) -> list[str]:
        """The model ids ``GET /models`` lists, in the server's order."""
        url = self.base_url + "/models"
        deadline = time.perf_counter() + self.timeout
        raw = b""
        try:
            with self._client.stream("GET", url) as response:
                status = response.status_code
                for chunk in response.iter_bytes():
                    raw += chunk
                    if len(raw) > BODY_LIMIT or time.perf_counter() > deadline:
                        raise ModelListError(f"GET {url} did not finish within budget")
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise TargetUnreachable(f"cannot connect to {self.base_url}: {_reason(exc)}") from None
        except httpx.HTTPError as exc:
            raise ModelListError(f"GET {url} failed: {_failure(exc)}") from None
        try:
            data = json.loads(raw).get("data")
            ids = [entry["id"] for entry in data]
        except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
            ids = None
        if status != 200 or ids is None or not all(isinstance(i, str) for i in ids):
            snippet = " ".join(raw.decode("utf-8", errors="replace").split())[:120]
            raise ModelListError(f"GET {url} answered {status}: {snippet}")
        return ids

    def about(self) -> dict[str, Any]:
        """What the server says about itself, best effort: the model ids ``GET /models``
        lists, its ``server`` header, and a ``/version`` beside the API root (vLLM has one,
        so has the reference server, which names its profile). Nothing here fails a run."""
        root = self.base_url.removesuffix("/v1")
        said: dict[str, Any] = {}
        for url in (self.base_url + "/models", root + "/version"):
            try:
                response = self._client.get(url, timeout=min(self.timeout, 5.0))
                data = response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError, RecursionError):
                continue
            if response.headers.get("server"):
                said.setdefault("server", response.headers["server"][:200])
            if not isinstance(data, dict):
                continue
            if url.endswith("/models") and isinstance(data.get("data"), list):
                ids = [e.get("id") for e in data["data"] if isinstance(e, dict)]
                said["models"] = [i for i in ids if isinstance(i, str)][:20]
            elif url.endswith("/version"):
                for key in ("version", "profile"):
                    if isinstance(data.get(key), str):
                        said[key if key == "version" else "reference_profile"] = data[key][:200]
        return said

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LiveTransport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
