"""`--api chat --no-stream` sends no streamed request, a related request included (issue 41
item 7): the stream relation's partner is drawn only where its mode is one the run fuzzes."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from agentfuzz.cli import main
from agentfuzz.reference import serve_in_thread


class _Bodies:
    """Every request body the reference server received (in its own thread)."""

    def __init__(self) -> None:
        self.lock, self.seen = threading.Lock(), []

    def __call__(self, path: str, body: bytes) -> None:
        with self.lock:
            self.seen.append(body)

    def streamed(self) -> int:
        return sum(_streams(b) for b in self.seen if b.startswith(b"{"))


def _streams(body: bytes) -> bool:
    try:
        doc = json.loads(body)
    except RecursionError:
        # A body nested past Python's parser (a surface dimension sends one): any "stream":
        # true in it counts, so the check never passes on a body it could not read.
        return re.search(rb'"stream"\s*:\s*true', body) is not None
    return isinstance(doc, dict) and doc.get("stream") is True


@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_no_stream_sends_no_streamed_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    bodies = _Bodies()
    out = tmp_path / "out"
    with serve_in_thread("fixed", on_request=bodies) as url:
        code = main(
            ["fuzz", "--base-url", url, "--model", "m", "--api", "chat", "--no-stream",
             "--mode", kind, "--max-examples", "60", "--seed", "1", "--quiet", "--out", str(out)]
        )  # fmt: skip
    capsys.readouterr()
    assert code == 0
    assert len(bodies.seen) > 60  # related requests went out too
    assert bodies.streamed() == 0
    latency = json.loads((out / "summary.json").read_text())["latency"]
    assert "chat/stream" not in latency
