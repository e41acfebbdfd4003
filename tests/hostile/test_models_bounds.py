"""``GET /models`` and ``/version`` are read within a small size and the timeout (issue 41,
item 13).

They were read whole, with no limit: an endless body reached 7.8 GB at the start of a run (even
with ``--model``, which still asks what the server says of itself), in the server-died probe
and in ``--wait-for-server``, then "internal error: MemoryError". An answer past 1 MiB or the
timeout is now no model list; the probes read no body at all.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import BinaryIO

import pytest

from agentfuzz.cli import main
from agentfuzz.errors import ModelListError, NotAnApi
from agentfuzz.wire.target import Target, first_model, wait_for_server
from agentfuzz.wire.transport.live import LiveTransport
from tests.hostile.servers import Request, raw_server, respond, stream_head

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


def _endless(_request: Request, out: BinaryIO) -> None:
    """A 200 whose JSON body never ends, on every path."""
    stream_head(out, "application/json")
    out.write(b'{"object": "list", "data": [')
    while True:
        out.write(b'{"id": "m", "object": "model"}, ' * 4096)
        out.flush()


def _drip(_request: Request, out: BinaryIO) -> None:
    """A 200 whose body comes a few bytes at a time, never ending."""
    stream_head(out, "application/json")
    while True:
        out.write(b" " * 16)
        out.flush()
        time.sleep(0.05)


def test_an_endless_model_list_is_no_model_list() -> None:
    started = time.monotonic()
    with raw_server(_endless) as server, pytest.raises(ModelListError, match="no model list"):
        first_model(server.base_url, None, timeout=10)
    assert time.monotonic() - started < 5


def test_a_model_list_that_never_finishes_is_cut_at_the_timeout() -> None:
    started = time.monotonic()
    with raw_server(_drip) as server, pytest.raises(ModelListError, match="not complete"):
        first_model(server.base_url, None, timeout=0.5)
    assert time.monotonic() - started < 3


def test_what_the_server_says_of_itself_is_bounded() -> None:
    # Asked at the start of every live run, --model or not.
    started = time.monotonic()
    with raw_server(_endless) as server, LiveTransport(server.base_url, timeout=2) as live:
        assert "models" not in live.about()
    assert time.monotonic() - started < 5


def test_the_probes_read_no_body() -> None:
    started = time.monotonic()
    with raw_server(_endless) as server:
        with LiveTransport(server.base_url, timeout=2) as live:
            assert live.ready(2) and live.accepts(2)
        assert wait_for_server(server.base_url, 5)
        with Target(server.base_url, "m", timeout=2) as target:
            assert target.alive()  # the server-died probe
    assert time.monotonic() - started < 3


def test_a_redirected_model_list_says_where_it_leads() -> None:
    def moved(_request: Request, out: BinaryIO) -> None:
        out.write(b"HTTP/1.1 302 Found\r\nlocation: https://elsewhere/v1/models\r\n")
        out.write(b"content-length: 0\r\nconnection: close\r\n\r\n")
        out.flush()

    with raw_server(moved) as server, pytest.raises(ModelListError) as raised:
        first_model(server.base_url, None, timeout=2)
    assert "302, a redirect to https://elsewhere/v1/models" in str(raised.value)


def _web_server(_request: Request, out: BinaryIO) -> None:
    """``python -m http.server``'s answer to every path it lacks: an HTML error page."""
    page = "<!DOCTYPE HTML><html><head><title>Error response</title></head><body>"
    respond(out, 404, page + "<p>Error code: 404</p></body></html>", "text/html")


def test_a_web_page_for_the_model_list_says_the_target_is_no_api(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Not a quote of the page cut mid-word, nor "pass --model": no model name would help
    # (issue 41, item 3).
    with raw_server(_web_server) as server:
        code = main(["fuzz", "--base-url", server.base_url, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "web page" in err and "not an OpenAI-compatible API" in err
    assert "check --base-url and --api-key" in err and "--model" not in err and "<" not in err
    with (
        raw_server(_web_server) as server,
        LiveTransport(server.base_url, timeout=5) as live,
        pytest.raises(NotAnApi),
    ):
        live.models()
