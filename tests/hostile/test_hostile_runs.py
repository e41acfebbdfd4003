"""Whole runs against hostile servers stay bounded and make no false finding (issue 41, items
12, 13, 15, 16 and 20).

Each run is ``agentfuzz fuzz`` in a child process (``run_bounded``) with a small budget. Whatever
the server does, the run ends within its ``--max-time`` plus its ``--timeout`` (and a generous
margin for starting Python on a loaded machine), under 1 GB, with no traceback, and writes no
bundle but a true one: an answer past 32 MiB is a finding (``ResponseTooLarge``, documented in
docs/live-server.md), and nothing else these servers do is.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.hostile.servers import (
    Handler,
    Request,
    models_list,
    raw_server,
    respond,
    run_bounded,
    stream_head,
)

# The test server's noise, not agentfuzz's: a handler that writes until the client hangs up
# fails on closing what its write buffer still held.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
]

MAX_TIME, TIMEOUT, MARGIN = 8, 2, 25
BUDGET = ["--max-time", str(MAX_TIME), "--timeout", str(TIMEOUT), "--max-examples", "5"]
COMMON = [*BUDGET, "--workers", "1", "--quiet", "--seed", "1", "--api", "chat"]
CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
)
REFUSAL = json.dumps({"error": {"message": "this server only streams"}})


def _streams(piece: bytes | None) -> Handler:
    """Lists model ``m``; refuses a request that is not streamed (a JSON 400, judged by no
    oracle); streams ``piece`` forever to one that is (one 50 MB event when ``None``)."""

    def handler(request: Request, out: BinaryIO) -> None:
        if request.method == "GET":
            models_list(out)
            return
        body = request.json()
        if not (isinstance(body, dict) and body.get("stream")):
            respond(out, 400, REFUSAL)
            return
        stream_head(out)
        if piece is None:
            out.write(b"data: " + b"x" * (50 * 1024 * 1024) + b"\n\n")
            out.flush()
            return
        while True:  # until the client hangs up
            out.write(piece)
            out.flush()

    return handler


def _endless_models(request: Request, out: BinaryIO) -> None:
    if request.method == "POST":
        respond(out, 400, REFUSAL)
        return
    stream_head(out, "application/json")
    out.write(b'{"object": "list", "data": [')
    while True:
        out.write(b'{"id": "m", "object": "model"}, ' * 4096)
        out.flush()


def _redirects(status: int, body: bytes, content_type: str) -> Handler:
    def handler(request: Request, out: BinaryIO) -> None:
        if request.method == "GET":
            models_list(out)
            return
        where = "http://127.0.0.1:9/v1/chat/completions" if status == 301 else request.path
        respond(out, status, body, content_type, {"location": where})

    return handler


def _overloaded(request: Request, out: BinaryIO) -> None:
    if request.method == "GET":
        models_list(out)
        return
    busy = json.dumps({"error": {"message": "overloaded"}})
    respond(out, 503, busy, headers={"retry-after": "1"})


STREAMS = {
    "endless comments": b": ping\n" * 10_000,
    "data lines with no blank line": b'data: {"x": 1}\n' * 5_000,
    "one endless line": b"data: " + b"x" * 65_536,
    "endless valid events": CHUNK * 600,
    "one 50 MB event": None,
}


def _run(handler: Handler, tmp_path: Path, *extra: str) -> tuple[int, str, list[Path]]:
    out = tmp_path / "out"
    started = time.monotonic()
    with raw_server(handler) as server:
        argv = ["fuzz", "--base-url", server.base_url, "--out", str(out), *COMMON, *extra]
        done = run_bounded(argv, MAX_TIME + TIMEOUT + MARGIN + 30)
    assert "Traceback" not in done.output and "internal error" not in done.output, done.output
    assert done.seconds <= MAX_TIME + TIMEOUT + MARGIN, (done.seconds, done.output)
    assert done.peak_mb < 1024, done.peak_mb
    assert time.monotonic() - started < MAX_TIME + TIMEOUT + MARGIN + 10
    bundles = (
        sorted(p for p in out.glob("*") if (p / "repro.json").exists()) if out.exists() else []
    )
    return done.code, done.output, bundles


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_stream_without_end_is_bounded(name: str, tmp_path: Path) -> None:
    code, output, bundles = _run(_streams(STREAMS[name]), tmp_path, "--stream")
    # Cut by time: a slow answer (all of them: exit 2, "nothing was tested"); by size: a
    # ResponseTooLarge finding (exit 1). Which comes first depends on how fast the machine reads.
    assert code in (0, 1, 2), output
    for bundle in bundles:
        found = json.loads((bundle / "repro.json").read_text())
        assert found["signature"].startswith("error:transport"), found["signature"]
        assert "ResponseTooLarge" in found["message"], found["message"]
    assert (code == 1) == bool(bundles), output


@pytest.mark.parametrize("extra", [[], ["--model", "m"], ["--wait-for-server", "5"]])
def test_an_endless_model_list_is_no_model_list(extra: list[str], tmp_path: Path) -> None:
    code, output, bundles = _run(_endless_models, tmp_path, *extra)
    assert not bundles
    if "--model" in extra:
        assert code in (0, 2), output  # every request refused: nothing was found
    else:
        assert code == 2 and "gave no model list" in output, output


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [(302, b"", "application/json"), (301, b"<html><h1>Moved</h1></html>", "text/html")],
    ids=["302-loop", "301-html"],
)
def test_a_redirect_is_said_once_and_exits_2(
    status: int, body: bytes, content_type: str, tmp_path: Path
) -> None:
    code, output, bundles = _run(_redirects(status, body, content_type), tmp_path)
    assert code == 2 and not bundles, output
    assert f"every request was answered {status} (a redirect to" in output, output


def test_persistent_overload_is_no_finding(tmp_path: Path) -> None:
    code, output, bundles = _run(_overloaded, tmp_path)
    assert code == 2 and not bundles, output
    assert "error:http_status" not in output
