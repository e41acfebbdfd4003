"""The live transport: POST a request body to a real server and keep whatever comes back.

Only a connection that cannot be opened at all raises (``TargetUnreachable``). Anything that
goes wrong once the server has accepted the connection (a reset, a stream that went silent, a
body cut short) is returned inside the ``Exchange`` with ``failure`` set. Running out of time
while the server had sent nothing yet, or was still sending, is a slow answer, not a fault:
its failure starts with ``observation.SLOW``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx

from agentfuzz.errors import ModelListError, NotAnApi, TargetUnreachable
from agentfuzz.model.observation import SLOW, Exchange
from agentfuzz.model.secrets import remember
from agentfuzz.wire.transport._bounded import (
    BODY_LIMIT,
    SMALL_LIMIT,
    Answer,
    Budget,
    Overrun,
    read_small,
)
from agentfuzz.wire.transport._network import network
from agentfuzz.wire.transport._overload import overloaded, pause_asked, unanswered
from agentfuzz.wire.transport._tee import SECRET_HEADERS, teed

__all__ = ["BODY_LIMIT", "LiveTransport", "ModelListError", "TargetUnreachable", "network"]

_FAILURE_LIMIT = 300
# An answer is read for at most ``timeout`` seconds in all and ``BODY_LIMIT`` bytes, checked as
# bytes arrive (``_bounded``); ``GET /models`` and ``/version`` for at most ``SMALL_LIMIT``.


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


def _outgoing(body: dict[str, Any] | str, stream: bool) -> tuple[bytes, dict[str, str]]:
    """The bytes and headers a request posts. The body is serialized here, not by httpx, so the
    bytes sent are exactly ``json.dumps(body)`` (a malformed body's text, as it is)."""
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if stream:
        headers.update({"Accept": "text/event-stream", "Cache-Control": "no-store"})
    return content, headers


def _said(url: str, data: dict[str, Any]) -> dict[str, Any]:
    """What a ``/models`` or ``/version`` JSON object says of the server (``about``)."""
    said: dict[str, Any] = {}
    if url.endswith("/models") and isinstance(data.get("data"), list):
        ids = [e.get("id") for e in data["data"] if isinstance(e, dict)]
        said["models"] = [i for i in ids if isinstance(i, str)][:20]
    elif url.endswith("/version"):
        for key in ("version", "profile"):
            if isinstance(data.get(key), str):
                said[key if key == "version" else "reference_profile"] = data[key][:200]
    return said


def _within(seconds: float) -> httpx.Timeout:
    """httpx's timeouts for a request that may take ``seconds``: each read, write and wait for
    a pooled connection at most that; a connection is opened within 10 seconds or not at all."""
    return httpx.Timeout(connect=min(seconds, 10.0), read=seconds, write=seconds, pool=seconds)


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
        patient: bool = True,
    ) -> None:
        """``headers`` go with every request the default network sends (``network``); a given
        ``transport`` that reaches the network must carry them itself. Without ``patient`` an
        overloaded answer is not waited for (a cassette replays it at once)."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.patient = patient
        # Without: exchanges carry no recording (an offline replay has its cassette already).
        self.recording = recording
        # Whatever a server echoes of them is masked in every file written.
        remember(api_key, headers)
        key = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # ``transport`` puts a cassette (or a mock) under the client; the tee above it keeps
        # each exchange's recording, whatever answers.
        self._client = httpx.Client(
            transport=_Tee(transport or network(headers)),
            headers=key,
            timeout=_within(timeout),
        )

    def __repr__(self) -> str:
        return f"LiveTransport({self.base_url!r})"

    def send(self, path: str, body: dict[str, Any] | str, stream: bool) -> Exchange:
        """POST ``body`` as JSON to ``base_url + path``; read SSE events when ``stream``. A
        ``str`` body (a malformed one) is sent as that text.

        ``timeout`` bounds the whole answer, tries included. An overloaded answer (a 429 or a
        503 with ``Retry-After``) is sent again after the pause it asks for when that fits in
        the time left; one that outlasts the budget is a slow answer, left unjudged: a busy
        server is not a broken one (``_overload``)."""
        started = time.perf_counter()
        deadline = started + self.timeout
        exchange = self._fresh(path, body, stream, deadline)
        while overloaded(exchange):
            pause = pause_asked(exchange)
            if pause is None or not self.patient or time.perf_counter() + pause >= deadline:
                exchange = dataclasses.replace(exchange, failure=unanswered(exchange, self.timeout))
                break
            time.sleep(pause)
            try:
                exchange = self._fresh(path, body, stream, deadline)
            except TargetUnreachable:
                # Gone after saying it was busy: what this request got is the overload.
                exchange = dataclasses.replace(exchange, failure=unanswered(exchange, self.timeout))
                break
        return dataclasses.replace(exchange, elapsed=time.perf_counter() - started)

    def _fresh(
        self, path: str, body: dict[str, Any] | str, stream: bool, deadline: float
    ) -> Exchange:
        """One answer to the request, by ``deadline``.

        A request that fails before any answer on a kept-alive connection the server had
        already closed is sent again on a fresh one, as HTTP clients do: the fault, if any, is
        the earlier request's, and pinning it on this one would be a false finding. A request
        that fails so on a connection opened for it is this request's failure."""
        exchange, reused = self._send(path, body, stream, deadline)
        for _ in range(_STALE_RETRIES):
            stale = reused and exchange.status is None and not exchange.events
            if not (stale and exchange.failure and not exchange.body and not _slow(exchange)):
                return exchange
            try:
                exchange, reused = self._send(path, body, stream, deadline)
            except TargetUnreachable:
                return exchange  # the server is gone: this request's failure is what it left
        return exchange

    def _send(
        self, path: str, body: dict[str, Any] | str, stream: bool, deadline: float
    ) -> tuple[Exchange, bool]:
        """One try of ``send``, read by ``deadline`` and within ``BODY_LIMIT`` bytes
        (``_bounded``), and whether it went over a connection opened before it."""
        url = self.base_url + path
        # What the network layer did for this request (a cassette or a mock says nothing).
        traced: list[str] = []

        def trace(event: str, _info: dict[str, Any]) -> None:
            traced.append(event)

        content, headers = _outgoing(body, stream)
        read = _Read()
        got = Answer()
        started = time.perf_counter()
        budget = Budget(self.timeout, deadline)
        asked: dict[str, Any] = {"trace": trace}
        if self.recording:
            asked[_READ] = read
        try:
            with self._client.stream(
                "POST",
                url,
                content=content,
                headers=headers,
                extensions=asked,
                timeout=_within(budget.left()),
            ) as response:
                got.read(response, stream, budget)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise TargetUnreachable(f"cannot connect to {self.base_url}: {_reason(exc)}") from None
        except httpx.TimeoutException as exc:
            # Nothing read yet: the model is slow (or the server hung, which the next request
            # shows). Something read, then silence: the server stopped making progress.
            silent = got.events or got.chunks
            got.failure = _failure(exc) if silent else f"{SLOW}nothing after {self.timeout:g}s"
        except httpx.HTTPError as exc:
            got.failure = _failure(exc)
        except Overrun as exc:
            read.raw = got.cut(str(exc)[:_FAILURE_LIMIT], read.raw)
        exchange = Exchange(
            url=url,
            request=body,
            stream=stream,
            status=got.status,
            content_type=got.content_type,
            body=got.body,
            events=tuple(got.events),
            failure=got.failure,
            elapsed=time.perf_counter() - started,
            request_headers=read.headers,
            reason=got.reason,
            headers=_pairs(got.headers),
            raw=read.raw,
        )
        opened = any(event.startswith("connection.connect_tcp") for event in traced)
        return exchange, bool(traced) and not opened

    def ready(self, within: float) -> bool:
        """Whether ``GET /models`` answers 200 within ``within`` seconds: a server still
        loading its model refuses the connection or answers 503 until it can serve. The status
        says it; the body is never read (an endless one cannot hold the wait)."""
        try:
            with self._client.stream("GET", self.base_url + "/models", timeout=within) as answer:
                return answer.status_code == 200
        except httpx.HTTPError:
            return False

    def accepts(self, within: float = 5.0) -> bool:
        """Whether the server still takes a connection: only a refused one says no. An answer
        of any status says yes, and so does one too slow to wait for: a busy server is not a
        dead one. The body is never read."""
        try:
            with self._client.stream("GET", self.base_url + "/models", timeout=within):
                return True
        except httpx.ConnectError:
            return False
        except httpx.HTTPError:
            return True

    def _get(self, url: str, within: float) -> tuple[int, httpx.Headers, bytes]:
        """``GET url``: the status, headers and body, read within ``within`` seconds and
        ``SMALL_LIMIT`` bytes; raises ``Overrun`` past either, or an ``httpx.HTTPError``."""
        budget = Budget(within, time.perf_counter() + within, SMALL_LIMIT)
        with self._client.stream("GET", url, timeout=_within(within)) as answer:
            return answer.status_code, answer.headers, read_small(answer, budget)

    def models(self) -> list[str]:
        """The model ids ``GET /models`` lists, in the server's order. An answer past
        ``SMALL_LIMIT`` bytes or the timeout is no model list (``ModelListError``, one line)."""
        url = self.base_url + "/models"
        try:
            status, headers, raw = self._get(url, self.timeout)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise TargetUnreachable(f"cannot connect to {self.base_url}: {_reason(exc)}") from None
        except httpx.HTTPError as exc:
            raise ModelListError(f"GET {url} failed: {_failure(exc)}") from None
        except Overrun as exc:
            raise ModelListError(f"GET {url} gave no model list ({exc})") from None
        try:
            data = json.loads(raw).get("data")
            ids = [entry["id"] for entry in data]
        except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
            ids = None
        if status != 200 or ids is None or not all(isinstance(i, str) for i in ids):
            if 300 <= status < 400:
                where = " ".join(headers.get("location", "").split())[:200] or "nowhere"
                raise ModelListError(f"GET {url} answered {status}, a redirect to {where}")
            text = raw.decode("utf-8", errors="replace")
            if "html" in headers.get("content-type", "") or text.lstrip()[:1] == "<":
                raise NotAnApi(
                    f"GET {url} answered {status} with a web page, not a model list: "
                    f"{self.base_url} is not an OpenAI-compatible API"
                )
            snippet = " ".join(text.split())[:120]
            raise ModelListError(f"GET {url} answered {status}: {snippet}")
        return ids

    def about(self) -> dict[str, Any]:
        """What the server says about itself, best effort: the model ids ``GET /models``
        lists, its ``server`` header, and a ``/version`` beside the API root (vLLM has one,
        so has the reference server, which names its profile). Nothing here fails a run: an
        answer past ``SMALL_LIMIT`` bytes or 5 seconds says nothing."""
        root = self.base_url.removesuffix("/v1")
        said: dict[str, Any] = {}
        for url in (self.base_url + "/models", root + "/version"):
            try:
                status, headers, raw = self._get(url, min(self.timeout, 5.0))
                data = json.loads(raw) if status == 200 else None
            except (httpx.HTTPError, Overrun, ValueError, RecursionError):
                continue
            if headers.get("server"):
                said.setdefault("server", headers["server"][:200])
            if isinstance(data, dict):
                said |= _said(url, data)
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
