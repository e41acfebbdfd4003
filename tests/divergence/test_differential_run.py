"""``fuzz --differential`` end to end: a planted server whose stream drops the text its
non-streamed answer holds is found, and its bundle replays the divergence offline; the twin
travels through cassettes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from agentfuzz.judge.judge import Judge
from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.model.observation import Observation
from agentfuzz.tape.codec import Recorded, write_cassette
from agentfuzz.tape.replay import replay_cassette
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.cassette import CassetteError

from .conftest import fuzz

_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done."}}
    ],
}


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


# The planted bug: the stream ends normally, but the text never went out.
_STREAM = _chunk({"role": "assistant"}) + _chunk({}, "stop") + b"data: [DONE]\n\n"


@contextmanager
def _text_dropping_server() -> Iterator[str]:
    """A chat server answering "done." whole, and nothing at all when asked to stream."""

    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, and each answer sent in one write: otherwise every request waits on a
        # new connection or on a delayed ACK.
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                sent = json.loads(raw)
            except (ValueError, RecursionError):
                sent = None  # a malformed body drawn by the surface: answered like any other
            streamed = isinstance(sent, dict) and sent.get("stream") is True
            body = _STREAM if streamed else json.dumps(_ANSWER).encode()
            self.send_response(200)
            kind = "text/event-stream" if streamed else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _signatures(out: Path) -> set[str]:
    return {json.loads(p.read_text())["signature"] for p in out.glob("*/repro.json")}


def test_a_stream_that_drops_the_text_is_found_and_replays_offline(
    tmp_path: Path, greedy: Path
) -> None:
    out = tmp_path / "out"
    with _text_dropping_server() as url:
        code, output = fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream", "--differential",
            "--profile", str(greedy), "--oracles", "stream_divergence",
            "--max-examples", "10", "--out", str(out),
        )  # fmt: skip
    assert code == 1, output
    assert _signatures(out) == {"stream_divergence:shape"}
    for bundle in (p.parent for p in out.glob("*/repro.json")):
        doc = json.loads((bundle / "repro.json").read_text())
        assert "stream: nothing" in doc["evidence"]
        assert "non-stream: text" in doc["evidence"]
        (turn,) = yaml.safe_load((bundle / "cassette.yaml").read_text())["metadata"]["agentfuzz"][
            "turns"
        ]
        (twin,) = turn["related"]
        assert twin["relation"] == "stream"
        assert twin["stream"] is not doc["request"]["stream"]
        (related,) = doc["related"]
        assert related["request"] == {**doc["request"], "stream": twin["stream"]}
        offline = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_repro.py"],
            cwd=bundle,
            env={**os.environ, "AGENTFUZZ_BASE_URL": ""},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert offline.returncode == 0, offline.stdout


def _differential_cassette(path: Path) -> tuple[Target, Observation]:
    """One greedy request and its twin sent to the planted server, written as a cassette."""
    case = Case(history=History(items=(UserMessage(text="hi"),)), options=Options(temperature=0))
    with _text_dropping_server() as url:
        target = Target(url, "m", None, 5.0)
        try:
            obs = Judge(target.observe, differential=True).observe(case)
        finally:
            target.close()
    assert obs.twin is not None
    write_cassette(path, [Recorded(obs, case, ())], {})
    return target, obs


def test_the_twin_is_recorded_and_replayed(tmp_path: Path) -> None:
    target, obs = _differential_cassette(tmp_path / "c.yaml")
    assert target.calls == 2 and target.answered == 2
    assert obs.twin is not None and obs.twin.exchange.stream and obs.twin.twin is None
    assert (obs.text, obs.twin.text) == ("done.", "")
    (turn,) = replay_cassette(tmp_path / "c.yaml").turns
    twin = turn.observation.twin
    assert twin is not None and twin.exchange.stream and twin.finish_reason == "stop"
    assert twin.exchange.request == obs.twin.exchange.request
    assert [v.signature for v in turn.violations] == ["stream_divergence:shape"]


def test_a_broken_twin_in_a_cassette_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _differential_cassette(path)
    doc = yaml.safe_load(path.read_text())
    del doc["metadata"]["agentfuzz"]["turns"][0]["related"][0]["body"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(CassetteError, match=r"turn 1: related\[0\]\.body"):
        replay_cassette(path)


def test_a_cassette_written_before_relations_reads_its_twin(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _differential_cassette(path)
    doc = yaml.safe_load(path.read_text())
    turn = doc["metadata"]["agentfuzz"]["turns"][0]
    (related,) = turn.pop("related")
    turn["twin"] = {k: v for k, v in related.items() if k != "relation"}
    path.write_text(yaml.safe_dump(doc))
    (replayed,) = replay_cassette(path).turns
    assert replayed.observation.twin is not None
    assert [v.signature for v in replayed.violations] == ["stream_divergence:shape"]


def test_differential_runs_with_several_workers(tmp_path: Path, greedy: Path) -> None:
    out = tmp_path / "out"
    with _text_dropping_server() as url:
        code, output = fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream", "--differential",
            "--profile", str(greedy), "--oracles", "stream_divergence", "--workers", "2",
            "--max-examples", "10", "--out", str(out),
        )  # fmt: skip
    assert code == 1, output
    assert _signatures(out) == {"stream_divergence:shape"}
