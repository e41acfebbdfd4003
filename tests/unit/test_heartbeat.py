"""Issue 41, item 10: heartbeat lines a CI log can read. A stage is not said twice (``confirm
confirm``, ``shrink reduce``), the failures so far are labelled symptoms (the fold at the end may
make one finding of three), a repro is said to shrink only when it got smaller, and nothing a
line holds reaches the terminal raw."""

from __future__ import annotations

import io

from rich.console import Console

from agentfuzz.cli.progress import ProgressLine, doing, heartbeat
from agentfuzz.output.findings.status import Status

KEYS = (("tool_choice", "a"), ("tool_choice", "b"), ("empty_turn", "x"))


def test_the_stage_is_said_once() -> None:
    assert doing(Status("chat/stream", 3, stage="generate")) == "chat/stream generate"
    assert doing(Status("shrink", 3, stage="reduce")) == "reduce"
    assert doing(Status("confirm", 3, stage="confirm")) == "confirm"
    assert doing(Status("starting", 0)) == "starting"


def test_failures_so_far_are_labelled_symptoms() -> None:
    line = heartbeat(Status("confirm", 40, KEYS, stage="confirm"), 65.0)
    assert (
        line == "[agentfuzz 00:01:05] confirm · 40 examples · symptoms: tool_choice 2, empty_turn 1"
    )
    assert heartbeat(Status("chat/stream", 2), 0.0).endswith("· 2 examples · no failures")


def test_a_heartbeat_escapes_what_it_holds() -> None:
    line = heartbeat(Status("chat/stream\x1b[2J", 2), 0.0)
    assert "\x1b" not in line and "chat/stream\\x1b[2J" in line


def test_a_repro_is_said_to_shrink_only_when_it_got_smaller() -> None:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, width=200)
    with ProgressLine(console, total=100, every=3600.0) as watch:
        for examples, size in ((2, 9), (3, 7), (4, 8), (5, 8), (6, 5)):
            watch(Status("chat/stream", examples, KEYS, ("tool_choice", size), f"s{examples}"))
    said = [line.rsplit("· ", 1)[-1] for line in sink.getvalue().splitlines() if "shrunk" in line]
    assert said == [
        "shrunk tool_choice to 9",
        "shrunk tool_choice to 7",
        "shrunk tool_choice to 7",  # another of its failures at 8: not news
        "shrunk tool_choice to 7",
        "shrunk tool_choice to 5",
    ]
