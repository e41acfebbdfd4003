"""The progress display keeps time and keeps a log alive (issue 17, point 4)."""

from __future__ import annotations

import io
import threading
import time
from types import SimpleNamespace

import pytest
from rich.console import Console

from agentfuzz.cli import progress as _progress
from agentfuzz.cli.progress import ProgressLine
from agentfuzz.output.findings.status import Status


class _Sink(io.StringIO):
    """A log file that says when a line arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Event()

    def write(self, text: str) -> int:
        self.arrived.set()
        return super().write(text)


def test_a_log_gets_a_heartbeat_when_no_status_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before the first example, in a long shrink, or with shards not yet started, no Status
    # comes: the heartbeat comes from a timer all the same.
    monkeypatch.setattr(_progress, "HEARTBEAT_EVERY", 0.05)
    sink = _Sink()
    with ProgressLine(Console(file=sink, force_terminal=False, width=200), total=10):
        assert sink.arrived.wait(30), "no heartbeat without a status"
    first = sink.getvalue().splitlines()[0]
    assert first.startswith("[agentfuzz 00:00:00] starting · 0 examples · no failures")


def test_the_timer_repeats_the_latest_status_in_a_long_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_progress, "HEARTBEAT_EVERY", 0.05)
    sink = _Sink()
    with ProgressLine(Console(file=sink, force_terminal=False, width=200), total=10) as watch:
        watch(Status("shrink", 7, (("error", "a"),), None, "reduce"))
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while len(lines) < 2 and time.monotonic() < deadline:
            sink.arrived.clear()
            sink.arrived.wait(1)
            lines = [ln for ln in sink.getvalue().splitlines() if "] reduce ·" in ln]
    assert len(lines) >= 2, sink.getvalue()
    assert all("7 examples · symptoms: error 1" in ln for ln in lines)


def test_the_clock_moves_on_once_the_bar_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich's elapsed column stops at a full bar; the run goes on shrinking and confirming.
    now = [1000.0]
    fake = SimpleNamespace(monotonic=lambda: now[0], strftime=time.strftime, gmtime=time.gmtime)
    monkeypatch.setattr(_progress, "time", fake)
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=200)
    with ProgressLine(console, total=4) as watch:
        watch(Status("chat/stream", 4))  # every example planned has run: the bar is full
        now[0] += 3725.0  # an hour, two minutes, five seconds of shrinking later
        watch(Status("shrink", 4, (), None, "reduce"))
        console.print(watch._bar.get_renderable())
    assert "01:02:05" in sink.getvalue()
