"""The live transport against raw loopback servers that answer, stream, stall, cut and reset."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from agentfuzz import oracles
from agentfuzz.errors import NotAnApi
from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import SSEEvent
from agentfuzz.wire.dialects import assemble
from agentfuzz.wire.transport import LiveTransport, ModelListError, TargetUnreachable

Handler = Callable[[socket.socket, bytes], None]
KEY = "sk-test-very-secret-0123"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi \u2603"}]}
CASE = Case(history=History(items=(UserMessage(text="hi"),)))


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest


def _headers(head: bytes) -> dict[bytes, bytes]:
    pairs = (line.partition(b":") for line in head.split(b"\r\n")[1:])
    return {name.strip().lower(): value.strip() for name, _, value in pairs}


class RawServer:
    """An HTTP/1.1 server on a free loopback port; ``handler`` writes raw bytes (or doesn't)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[bytes] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    request = _read_request(conn)
                    self.requests.append(request)
                    self.handler(conn, request)
                except OSError:
                    pass  # the client went away first: that is what some tests do

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], RawServer]]:
    servers: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        servers.append(RawServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _head(status: str, content_type: str, extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{extra}".encode()


def _respond(status: str, content_type: str, payload: bytes) -> Handler:
    def handler(conn: socket.socket, _request: bytes) -> None:
        extra = f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        conn.sendall(_head(status, content_type, extra) + payload)

    return handler


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


COMPLETION = json.dumps({"id": "x", "choices": [{"message": {"content": "hello"}}]}).encode()
EVENTS = b'data: {"id": "c", "choices": []}\n\nevent: error\ndata: boom\n\ndata: [DONE]\n\n'


def test_json_answer_and_exact_request(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_respond("200 OK", "application/json", COMPLETION))
    with LiveTransport(server.url, api_key=KEY) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=False)
    assert exchange.url == server.url + "/chat/completions"
    assert (exchange.status, exchange.content_type) == (200, "application/json")
    assert exchange.body == COMPLETION.decode() and exchange.events == ()
    assert exchange.failure is None and exchange.elapsed >= 0
    assert exchange.request == BODY
    head, _, sent = server.requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1")
    assert json.loads(sent) == BODY
    assert _headers(head)[b"authorization"] == f"Bearer {KEY}".encode()
    assert KEY not in repr(exchange) and KEY not in repr(transport)
    assert assemble(exchange).text == "hello"


def test_no_key_no_authorization_header(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_respond("200 OK", "application/json", b"{}"))
    with LiveTransport(server.url) as transport:
        transport.send("/responses", BODY, stream=False)
    assert b"authorization" not in _headers(server.requests[0].partition(b"\r\n\r\n")[0])


def test_sse_stream_keeps_every_event(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_respond("200 OK", "text/event-stream; charset=utf-8", EVENTS))
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.failure is None and exchange.body == ""
    assert exchange.events == (
        SSEEvent(None, '{"id": "c", "choices": []}'),
        SSEEvent("error", "boom"),
        SSEEvent(None, "[DONE]"),
    )
    assert _headers(server.requests[0])[b"accept"] == b"text/event-stream"


def test_stream_cut_after_two_events(serve: Callable[[Handler], RawServer]) -> None:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", "Transfer-Encoding: chunked\r\n\r\n"))
        conn.sendall(_chunk(b'data: {"id": "a", "choices": []}\n\n'))
        conn.sendall(_chunk(b'data: {"id": "b", "choices": []}\n\n'))
        # No terminating zero-length chunk: the body is incomplete.

    server = serve(handler)
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.status == 200 and exchange.failure is not None
    assert len(exchange.events) == 2
    kinds = [kind for kind, _ in assemble(exchange).errors]
    assert kinds == ["transport", "no_terminal"]


def test_body_cut_short_keeps_the_partial_body(serve: Callable[[Handler], RawServer]) -> None:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(_head("200 OK", "application/json", "Content-Length: 100\r\n\r\n"))
        conn.sendall(b'{"id": "x"')

    server = serve(handler)
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=False)
    assert exchange.status == 200 and exchange.body == '{"id": "x"'
    assert exchange.failure is not None and "RemoteProtocolError" in exchange.failure


def test_reset_before_any_answer_is_a_failure_not_unreachable(
    serve: Callable[[Handler], RawServer],
) -> None:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    server = serve(handler)
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/responses", BODY, stream=True)
    assert exchange.status is None and exchange.failure
    assert [kind for kind, _ in assemble(exchange).errors] == ["transport"]


def test_nothing_within_the_timeout_is_a_slow_answer_no_oracle_judges(
    serve: Callable[[Handler], RawServer],
) -> None:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.recv(1)  # answer nothing; returns when the client gives up and closes

    server = serve(handler)
    with LiveTransport(server.url, timeout=0.2) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=False)
    assert exchange.slow and exchange.status is None
    assert exchange.failure == "slow answer: nothing after 0.2s"
    assert oracles.check(CASE, assemble(exchange)) == []


def _silent_after(first: bytes) -> Handler:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", "Connection: close\r\n\r\n") + first)
        conn.recv(1)  # then silence, until the client gives up

    return handler


def test_a_stream_that_goes_silent_mid_answer_is_a_failure(
    serve: Callable[[Handler], RawServer],
) -> None:
    server = serve(_silent_after(b'data: {"choices": []}\n\n'))
    with LiveTransport(server.url, timeout=0.3) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.status == 200 and exchange.events and not exchange.slow
    assert exchange.failure is not None and exchange.failure.startswith("ReadTimeout")
    assert "error:transport" in {v.signature for v in oracles.check(CASE, assemble(exchange))}


def test_html_answer_to_a_stream_request_keeps_the_body(
    serve: Callable[[Handler], RawServer],
) -> None:
    server = serve(_respond("502 Bad Gateway", "text/html", b"<html>Bad Gateway</html>"))
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.status == 502 and exchange.events == ()
    assert exchange.body == "<html>Bad Gateway</html>" and exchange.failure is None
    assert [kind for kind, _ in assemble(exchange).errors] == ["http_status"]


def test_refused_port_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with LiveTransport(url, api_key=KEY) as transport, pytest.raises(TargetUnreachable) as info:
        transport.send("/chat/completions", BODY, stream=False)
    assert str(info.value) == f"cannot connect to {url}: connection refused"
    assert KEY not in str(info.value) and "\n" not in str(info.value)
    with LiveTransport(url) as transport, pytest.raises(TargetUnreachable):
        transport.models()


def test_models_in_server_order(serve: Callable[[Handler], RawServer]) -> None:
    listing = {"object": "list", "data": [{"id": "zeta"}, {"id": "alpha"}]}
    server = serve(_respond("200 OK", "application/json", json.dumps(listing).encode()))
    with LiveTransport(server.url + "/") as transport:
        assert transport.models() == ["zeta", "alpha"]
    assert server.requests[0].startswith(b"GET /v1/models HTTP/1.1")


def test_models_garbage_is_a_model_list_error(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_respond("200 OK", "application/json", b'{"data": "login"}'))
    with LiveTransport(server.url) as transport, pytest.raises(ModelListError, match="login"):
        transport.models()


def test_a_web_page_for_models_is_no_api(serve: Callable[[Handler], RawServer]) -> None:
    # A login page is not quoted (cut mid-word, it told nothing): it says what it is.
    server = serve(_respond("200 OK", "text/html", b"<html>login</html>"))
    with LiveTransport(server.url) as transport, pytest.raises(NotAnApi, match="web page"):
        transport.models()


def _forever(content_type: str, piece: bytes) -> Handler:
    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(_head("200 OK", content_type, "Connection: close\r\n\r\n"))
        while True:  # until the client hangs up (an OSError the server swallows)
            conn.sendall(piece)

    return handler


def test_a_stream_still_sending_at_the_timeout_is_a_slow_answer(
    serve: Callable[[Handler], RawServer],
) -> None:
    # Still making progress when time ran out: from the client's side, a slow model and a stream
    # without end are alike; past BODY_LIMIT bytes it is a fault (ResponseTooLarge).
    server = serve(_forever("text/event-stream", b"data: {}\n\n" * 64))
    with LiveTransport(server.url, timeout=0.3) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.status == 200 and exchange.events
    assert exchange.slow and exchange.failure == "slow answer: not complete after 0.3s"


def test_endless_body_is_cut_by_time_or_size(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_forever("application/json", b" " * 65536))
    with LiveTransport(server.url, timeout=0.3) as transport:
        exchange = transport.send("/responses", BODY, stream=False)
    assert exchange.status == 200 and exchange.body
    assert exchange.failure is not None
    assert exchange.slow or "ResponseTooLarge" in exchange.failure


def test_endless_models_answer_is_a_model_list_error(
    serve: Callable[[Handler], RawServer],
) -> None:
    server = serve(_forever("application/json", b" " * 65536))
    with LiveTransport(server.url, timeout=0.3) as transport, pytest.raises(ModelListError):
        transport.models()


def test_sse_with_invalid_utf8_is_kept(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(_respond("200 OK", "text/event-stream", b'data: {"x": "\xff\xc3"}\n\n\x80\n\n'))
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=True)
    assert exchange.status == 200 and exchange.failure is None
    assert exchange.events and "\ufffd" in exchange.events[0].data
    assemble(exchange)


def test_gzip_declared_garbage_is_a_failure(serve: Callable[[Handler], RawServer]) -> None:
    payload = b"\x00not gzip\xff" * 8
    extra = f"Content-Encoding: gzip\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"

    def handler(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(_head("200 OK", "application/json", extra) + payload)

    server = serve(handler)
    with LiveTransport(server.url) as transport:
        exchange = transport.send("/chat/completions", BODY, stream=False)
    assert exchange.status == 200
    assert exchange.failure is not None and "DecodingError" in exchange.failure


def _kept_alive(conn: socket.socket) -> None:
    payload = COMPLETION
    head = _head("200 OK", "application/json", f"Content-Length: {len(payload)}\r\n\r\n")
    conn.sendall(head + payload)


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class _KeepAliveServer:
    """Answers a connection's first request and keeps it open; resets it on its second. Each
    connection after the first answers its first request (``answer_later``) or resets it."""

    def __init__(self, answer_later: bool, die: bool = False) -> None:
        self.die = die
        self.requests: list[bytes] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
        self.answer_later = answer_later
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        first = True
        self._listener.settimeout(10)
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                self.requests.append(_read_request(conn))
                if first or self.answer_later:
                    _kept_alive(conn)
                else:
                    _reset(conn)
                    continue
                if first:
                    first = False
                    self.requests.append(_read_request(conn))
                    _reset(conn)
                    if self.die:  # the second request killed it: nothing listens any more
                        self._listener.close()
                        return

    def close(self) -> None:
        self._listener.close()
        self._thread.join(timeout=10)


def test_a_kept_alive_connection_the_server_dropped_is_tried_again_on_a_fresh_one() -> None:
    # Llama Stack closes a connection after some 400s: the next request on it fails before
    # any answer. The fault is not that request's; a client sends it again, and so do we.
    server = _KeepAliveServer(answer_later=True)
    try:
        with LiveTransport(server.url) as transport:
            assert transport.send("/chat/completions", BODY, stream=False).status == 200
            again = transport.send("/chat/completions", BODY, stream=False)
    finally:
        server.close()
    assert again.status == 200 and again.failure is None
    assert len(server.requests) == 3  # the first, the one the reset lost, its second try


def test_a_request_that_fails_on_a_fresh_connection_too_is_its_own_failure() -> None:
    server = _KeepAliveServer(answer_later=False)
    try:
        with LiveTransport(server.url) as transport:
            assert transport.send("/chat/completions", BODY, stream=False).status == 200
            failed = transport.send("/chat/completions", BODY, stream=False)
    finally:
        server.close()
    assert failed.status is None and failed.failure
    assert [kind for kind, _ in assemble(failed).errors] == ["transport"]
    assert len(server.requests) == 3  # tried again once, on a connection opened for it


def test_a_request_after_which_the_server_is_gone_keeps_its_failure() -> None:
    # Tried again, the server refuses the connection: it died of this request, which is the
    # repro (error:server_died), not unreachable from the start.
    server = _KeepAliveServer(answer_later=True, die=True)
    try:
        with LiveTransport(server.url) as transport:
            assert transport.send("/chat/completions", BODY, stream=False).status == 200
            failed = transport.send("/chat/completions", BODY, stream=False)
    finally:
        server.close()
    assert failed.status is None and failed.failure
    assert len(server.requests) == 2
