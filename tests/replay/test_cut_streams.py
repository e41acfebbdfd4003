"""A stream whose connection breaks after its last event replays as the fault it was.

llama.cpp's server cancels a stream when another request waits: the client gets `[DONE]` and then a
chunked body that never ends. The bytes alone read as a whole (if empty) answer, so the cassette
keeps the transport failure beside them and replay puts it back.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.oracles import check
from agentfuzz.tape.codec import Recorded, write_cassette
from agentfuzz.tape.replay import replay_cassette
from agentfuzz.wire.target import Target

_ROLE = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}\n\n'
)
_DONE = b"data: [DONE]\n\n"


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _answer(conn: socket.socket) -> None:
    with conn:
        head = b""
        while b"\r\n\r\n" not in head:
            head += conn.recv(65536)
        header, _, body = head.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += conn.recv(65536)
        start = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        conn.sendall(start + b"transfer-encoding: chunked\r\n\r\n" + _chunk(_ROLE) + _chunk(_DONE))
        # No terminating zero-length chunk: the body never ends, the connection just closes.


@pytest.fixture
def cut_server() -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            _answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        listener.close()
        thread.join(timeout=5)


def test_a_stream_cut_after_done_replays_as_a_transport_fault(
    cut_server: str, tmp_path: Path
) -> None:
    case = Case(history=History(items=(UserMessage(text="hi"),)), api="chat", stream=True)
    target = Target(cut_server, "m", None, 10.0)
    try:
        obs = target.observe(case)
        found = tuple(check(case, obs))
    finally:
        target.close()
    assert obs.exchange.status is not None
    assert "error:transport" in {v.signature for v in found}
    path = write_cassette(tmp_path / "cut.yaml", [Recorded(obs, case, found)], {})
    assert "failure:" in path.read_text()
    for seed in (0, None):
        (turn,) = replay_cassette(path, seed).turns
        assert {v.signature for v in turn.violations} == {v.signature for v in found}
