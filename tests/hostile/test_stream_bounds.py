"""An answer is bounded in time and bytes whatever its framing (issue 41, items 12 and 20).

A stream that never completes an event (``: ping`` comments, ``data:`` lines with no blank
line, one endless line) used to hang the client: the checks ran only when a whole event came.
Each test here would hang, or keep far more than its budget, before the bound moved to the
bytes as they arrive. The byte limit is made small so that each cut is quick and certain.
"""

from __future__ import annotations

import time
from typing import BinaryIO

import httpx
import pytest
from httpx_sse import EventSource

from agentfuzz import oracles
from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import SLOW, Exchange
from agentfuzz.wire.dialects import assemble
from agentfuzz.wire.transport import _bounded
from agentfuzz.wire.transport.live import LiveTransport
from tests.hostile.servers import Handler, Request, raw_server, stream_head

# A server that writes until the client hangs up fails on closing what its write buffer still
# held: that is the test server's noise, in its own thread, not the client's.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
)
# Each write is bigger than the server's write buffer: a client that hangs up leaves nothing
# buffered for the server to fail on when it closes.
PIECES = {
    "comments": b": ping\n" * 10_000,
    "data lines with no blank line": b'data: {"x": 1}\n' * 5_000,
    "one endless line": b"data: " + b"x" * 65_536,
    "valid events": CHUNK * 600,
}


def _flood(piece: bytes, pause: float = 0.0) -> Handler:
    def handler(_request: Request, out: BinaryIO) -> None:
        stream_head(out)
        while True:  # until the client hangs up
            out.write(piece)
            out.flush()
            if pause:
                time.sleep(pause)

    return handler


def _one_big_event(_request: Request, out: BinaryIO) -> None:
    stream_head(out)
    out.write(b"data: " + b"x" * (50 * 1024 * 1024) + b"\n\n")
    out.flush()


def _send(handler: Handler, timeout: float, stream: bool = True) -> Exchange:
    with (
        raw_server(handler) as server,
        LiveTransport(server.base_url, timeout=timeout) as transport,
    ):
        return transport.send("/chat/completions", BODY, stream=stream)


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bounded, "BODY_LIMIT", 1024 * 1024)
    monkeypatch.setattr(_bounded, "CUT_KEEP", 64 * 1024)


def test_comments_without_end_are_a_slow_answer_at_the_deadline() -> None:
    # What a server sends while its model thinks: bytes keep coming, so no read timeout fires.
    exchange = _send(_flood(PIECES["comments"], pause=0.01), timeout=0.5)
    assert exchange.failure == f"{SLOW}not complete after 0.5s"
    assert exchange.elapsed < 2.0
    assert exchange.events == ()


@pytest.mark.usefixtures("small_limits")
@pytest.mark.parametrize("framing", sorted(PIECES))
def test_every_framing_is_cut_at_the_byte_limit(framing: str) -> None:
    exchange = _send(_flood(PIECES[framing]), timeout=30)
    assert exchange.failure is not None
    assert exchange.failure.startswith("ResponseTooLarge: more than 1048576 bytes")
    assert exchange.elapsed < 10
    # What is kept of a cut answer is its first bytes, not all the budget allowed.
    assert len(exchange.raw) <= 64 * 1024
    assert sum(len(e.data) for e in exchange.events) <= 64 * 1024
    # The cut is the one fault the assembly notes (with, for events, the end it never saw).
    kinds = [kind for kind, _ in assemble(exchange).errors]
    assert kinds[0] == "transport" and set(kinds) <= {"transport", "no_terminal"}


@pytest.mark.usefixtures("small_limits")
def test_one_event_bigger_than_the_limit_is_cut_before_it_ends() -> None:
    exchange = _send(_one_big_event, timeout=30)
    assert exchange.failure is not None and exchange.failure.startswith("ResponseTooLarge")
    assert exchange.events == () and len(exchange.raw) <= 64 * 1024


@pytest.mark.usefixtures("small_limits")
def test_a_cut_answer_keeps_what_its_recording_reads_as() -> None:
    # A bundle's cassette holds the recording: a replay of it must see the events judged.
    exchange = _send(_flood(PIECES["valid events"]), timeout=30)
    replayed = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=exchange.raw
    )
    again = [event.data for event in EventSource(replayed).iter_sse()]
    assert again and [event.data for event in exchange.events] == again


def test_a_whole_answer_past_the_cut_keep_is_kept_whole() -> None:
    # Only a cut answer is trimmed: a long answer that ends is judged and recorded as it came.
    count = (2 * _bounded.CUT_KEEP) // len(CHUNK) + 1
    whole = CHUNK * count + b"data: [DONE]\n\n"

    def handler(_request: Request, out: BinaryIO) -> None:
        stream_head(out)
        out.write(whole)
        out.flush()

    exchange = _send(handler, timeout=30)
    assert exchange.failure is None
    assert len(exchange.events) == count + 1 and exchange.raw == whole


@pytest.mark.usefixtures("small_limits")
def test_an_endless_plain_body_is_cut_at_the_byte_limit() -> None:
    def handler(_request: Request, out: BinaryIO) -> None:
        stream_head(out, "application/json")
        while True:
            out.write(b" " * 65_536)
            out.flush()

    exchange = _send(handler, timeout=30, stream=False)
    assert exchange.failure is not None and exchange.failure.startswith("ResponseTooLarge")
    assert len(exchange.body) <= 64 * 1024 and len(exchange.raw) <= 64 * 1024


@pytest.mark.usefixtures("small_limits")
@pytest.mark.parametrize("stream", [True, False], ids=["events", "body"])
def test_an_answer_cut_at_the_limit_is_one_finding(stream: bool) -> None:
    # The cut is the finding; that the cut stream has no end, or the cut body is not whole
    # JSON, is what cutting it did, not more the server did wrong.
    def handler(_request: Request, out: BinaryIO) -> None:
        stream_head(out, "text/event-stream" if stream else "application/json")
        out.write(CHUNK * 600 if stream else b'{"choices": [' + b'{"index": 0}, ' * 6000)
        while True:
            out.write(CHUNK * 600 if stream else b'{"index": 0}, ' * 6000)
            out.flush()

    exchange = _send(handler, timeout=30, stream=stream)
    case = Case(history=History(items=(UserMessage(text="hi"),)), stream=stream)
    found = oracles.check(case, assemble(exchange))
    assert [v.signature for v in found] == ["error:transport"]
    assert "past the size limit" in found[0].message
