"""The proxy's wire: an OpenAI-compatible pass-through in front of an upstream server.

Every request under ``/v1`` goes to the upstream unchanged (its headers too, less the hop-by-hop
ones), and the answer streams back to the client chunk by chunk as it arrives, byte for byte.
Nothing is buffered before the client gets it, so the client's own timeouts still work. Meanwhile
each chat or Responses exchange is kept (``Forwarded``: the body sent, the bytes read) and handed
to ``seen`` once the client has the last chunk. The proxy never writes a key or a cookie:
``Forwarded`` holds no request headers, and its answer headers are kept without the secret ones.

One answer is relayed for at most ``timeout`` seconds in all (a stream that never ends, however
it is framed, is then cut and the client's connection dropped), and only its first
``live.BODY_LIMIT`` bytes are kept for the judge, whatever more the client gets: a flood costs
the proxy no more memory than one answer the fuzzer would judge. When the client goes away, the
upstream's answer is closed at once.

``replayed(forwarded)`` answers one request with a kept answer, so that the client pipeline
(``target.Target``) assembles what the client got exactly as it assembles a live answer.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agentfuzz.model.observation import SLOW
from agentfuzz.model.secrets import remember
from agentfuzz.wire.transport._answer import Copy, whole
from agentfuzz.wire.transport._tee import SECRET_HEADERS

__all__ = ["JUDGED_PATHS", "Forwarded", "relay_app", "replayed", "run_relay", "serving_relay"]

# The endpoints whose exchanges are kept and judged (relative to the upstream's base URL).
JUDGED_PATHS = ("/chat/completions", "/responses")
# Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and the
# length, which the streamed answer no longer carries.
_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
}
_FAILURE_LIMIT = 300


@dataclass(frozen=True)
class Forwarded:
    """One exchange as the client had it: what it sent, what it read, and how it ended.

    ``path`` is relative to the upstream's base URL (``/chat/completions``). ``status`` is None
    when the upstream never answered. ``failure`` says why the answer stopped short (the
    upstream broke off); ``client_left`` that the client went away before the end, which
    cuts an answer short by the client's own hand. ``cut``: the answer went on past
    ``live.BODY_LIMIT`` bytes, and ``raw`` holds only those (the client got them all).
    """

    method: str
    path: str
    body: bytes
    status: int | None
    headers: tuple[tuple[str, str], ...]
    raw: bytes
    failure: str | None
    elapsed: float
    first_byte: float | None = None
    client_left: bool = False
    cut: bool = False


class _UpstreamBroke(Exception):
    """The upstream dropped the answer midway: the client's connection is dropped too."""


class _Quiet(logging.Filter):
    """Keeps uvicorn from printing a traceback for an answer the upstream broke off: the
    proxy drops the client's connection on purpose then, and the watcher reports it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _UpstreamBroke)


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")[:_FAILURE_LIMIT]


def _timed_out(exc: BaseException) -> bool:
    """Whether the upstream took the request and then said nothing in time: a slow model."""
    return isinstance(exc, (TimeoutError, httpx.ReadTimeout, httpx.WriteTimeout))


class _OutOfTime(Exception):
    """The upstream was still sending when the answer's time ran out."""


def _unsecret(headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
    """An answer's headers as kept for the judge: without a cookie or a key."""
    return tuple((k, v) for k, v in headers.multi_items() if k not in SECRET_HEADERS)


def _remember_client_secrets(headers: Mapping[str, str]) -> None:
    """The client's key and secret headers, masked in whatever the proxy writes from now on
    (an upstream may echo them into an answer that lands in a bundle)."""
    secret = {k: v for k, v in headers.items() if k.lower() in SECRET_HEADERS}
    bearer = secret.pop("authorization", "").removeprefix("Bearer ").strip()
    remember(key=bearer or None, headers=secret)


def _kept(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
    return [(k, v) for k, v in pairs if k.lower() not in _HOP]


class _Relay:
    def __init__(
        self,
        upstream: str,
        seen: Callable[[Forwarded], None],
        timeout: float | None,
        not_found: Callable[[str], None] | None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.seen = seen
        self.timeout = timeout
        self.not_found = not_found
        limit = httpx.Timeout(connect=10.0, read=timeout, write=timeout, pool=None)
        # No decoding, no redirects: the client gets what the upstream sent. No headers of
        # httpx's own either (it would ask for gzip where the client did not): the client's go.
        self.client = httpx.AsyncClient(timeout=limit, follow_redirects=False)
        self.client.headers.clear()

    def _left(self, started: float) -> float | None:
        """The seconds an answer begun at ``started`` may still take (None: no limit)."""
        return None if self.timeout is None else started + self.timeout - time.perf_counter()

    async def forward(self, request: Request) -> Response:
        tail = request.url.path.removeprefix("/v1")
        query = request.url.query
        url = self.upstream + tail + (f"?{query}" if query else "")
        try:
            body = await request.body()
        except ClientDisconnect:
            # Gone before its whole body came: nothing was sent upstream, nobody to answer.
            return Response(status_code=400)
        kept = request.method == "POST" and tail in JUDGED_PATHS
        _remember_client_secrets(request.headers)
        started = time.perf_counter()
        sent = self.client.build_request(
            request.method, url, headers=_kept(request.headers.raw), content=body
        )
        try:
            with anyio.fail_after(self._left(started)):
                upstream = await self.client.send(sent, stream=True)
        except (httpx.HTTPError, TimeoutError) as exc:
            why = f"{SLOW}nothing after {self.timeout:g}s" if _timed_out(exc) else _failure(exc)
            if kept:
                lost = Forwarded(request.method, tail, body, None, (), b"", why, 0.0)
                self.seen(lost)
            error = {"message": f"agentfuzz proxy: upstream {why}", "type": "upstream"}
            return JSONResponse({"error": error}, status_code=504 if _timed_out(exc) else 502)
        if upstream.status_code == 404 and self.not_found is not None:
            said, self.not_found = self.not_found, None  # once: the first 404 says it all
            said(tail)
        answer = StreamingResponse(
            self._through(request, tail, body, upstream, started, kept),
            status_code=upstream.status_code,
        )
        # As they came, a header sent twice (``set-cookie``) included.
        answer.raw_headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1"))
            for k, v in _kept(upstream.headers.raw)
        ]
        return answer

    async def _next(self, chunks: AsyncIterator[bytes], started: float) -> bytes | None:
        """The upstream's next chunk, or None at the end; ``_OutOfTime`` past the answer's
        time, however steadily the bytes come."""
        try:
            with anyio.fail_after(self._left(started)):
                return await anext(chunks)
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise _OutOfTime from None

    async def _through(
        self,
        request: Request,
        tail: str,
        body: bytes,
        upstream: httpx.Response,
        started: float,
        kept: bool,
    ) -> AsyncIterator[bytes]:
        copy = Copy()
        failure: str | None = None
        first: float | None = None
        left = False
        chunks = upstream.aiter_raw()
        try:
            while (chunk := await self._next(chunks, started)) is not None:
                if first is None:
                    first = time.perf_counter() - started
                copy.add(chunk)
                yield chunk
        except (httpx.HTTPError, _OutOfTime) as exc:
            # A client that left first may be why the upstream's answer broke off (or why it
            # never reached the end): the client's doing either way, nothing to judge.
            left = await request.is_disconnected()
            # Out of time while the answer still came: a slow answer, never judged a fault.
            if isinstance(exc, _OutOfTime):
                failure = f"{SLOW}not complete after {self.timeout:g}s"
            else:
                slow = SLOW if isinstance(exc, httpx.TimeoutException) else ""
                failure = slow + _failure(exc)
            raise _UpstreamBroke(failure) from None
        except BaseException:
            # Cancelled or closed while yielding: the client went away, before the end of the
            # answer unless it already had all of it (the openai SDK hangs up at ``[DONE]`` or
            # an error frame, often before the upstream's end of the stream reaches the proxy).
            left = copy.cut or not whole(copy.raw())
            raise
        finally:
            # Shielded: when the client went away this task is cancelled, and the upstream's
            # answer must still be closed, not left streaming into a socket nobody reads.
            with anyio.CancelScope(shield=True):
                await upstream.aclose()
            if kept:
                self.seen(
                    Forwarded(
                        request.method,
                        tail,
                        body,
                        upstream.status_code,
                        _unsecret(upstream.headers),
                        copy.raw(),
                        failure,
                        time.perf_counter() - started,
                        first,
                        left,
                        copy.cut,
                    )
                )

    async def close(self) -> None:
        await self.client.aclose()


def relay_app(
    upstream: str,
    seen: Callable[[Forwarded], None],
    timeout: float | None = 600.0,
    not_found: Callable[[str], None] | None = None,
) -> Starlette:
    """The proxy for ``upstream`` (a base URL with its ``/v1``): every path under ``/v1``,
    every method; ``seen`` hears of each chat and Responses exchange once it is over, and
    ``not_found`` of the path of the first request the upstream answered 404 (a base URL
    without its ``/v1`` gets nothing else). ``timeout``: the seconds one answer may take."""
    relay = _Relay(upstream, seen, timeout, not_found)
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [Route("/v1/{rest:path}", relay.forward, methods=methods)]

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await relay.close()

    return Starlette(routes=routes, lifespan=lifespan)


def _listening(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


_QUIET = _Quiet()


def _server(app: Starlette) -> uvicorn.Server:
    logging.getLogger("uvicorn.error").addFilter(_QUIET)  # once: the same filter is kept once
    config = uvicorn.Config(
        app, log_config=None, log_level="warning", access_log=False, timeout_graceful_shutdown=2
    )
    return uvicorn.Server(config)


def _url(host: str, sock: socket.socket) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{sock.getsockname()[1]}/v1"


def run_relay(app: Starlette, host: str, port: int, listening: Callable[[str], None]) -> None:
    """Serve ``app`` until interrupted; ``listening`` hears the base URL once bound. Raises
    ``OSError`` when the address cannot be listened on."""
    sock = _listening(host, port)
    try:
        listening(_url(host, sock))
        _server(app).run(sockets=[sock])
    finally:
        sock.close()


@contextmanager
def serving_relay(app: Starlette, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` in a background thread; yields the proxy's base URL (with ``/v1``)."""
    sock = _listening(host, port)
    server = _server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the proxy failed to start")
            time.sleep(0.005)
        yield _url(host, sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


class _Replayed(httpx.BaseTransport):
    def __init__(self, forwarded: Forwarded) -> None:
        self._forwarded = forwarded

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        kept = self._forwarded
        return httpx.Response(
            kept.status or 599,
            headers=list(kept.headers),
            stream=httpx.ByteStream(kept.raw),
            request=request,
        )


def replayed(forwarded: Forwarded) -> httpx.BaseTransport:
    """A transport that answers any request with ``forwarded``'s answer, as the client read it
    (its content encoding undone by the client pipeline, as a live answer's is)."""
    return _Replayed(forwarded)
