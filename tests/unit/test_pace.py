"""A slow target's later requests get a token budget (issue 41 item 23).

Seen live: the default profile against vLLM on a CPU sent 30 requests in 352 s, 18 of them cut
at the 60 s timeout, because most requests leave ``max_tokens`` out. Once ``SLOW_LIMIT``
answers to unbounded requests run out of time, later requests carry ``max_tokens = BOUND`` and
the run says so. Driven by counts: the mock server times out at once on an unbounded request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from agentfuzz.cli._render import summary
from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.model.modes import Mode, label
from agentfuzz.model.observation import SLOW, Exchange, Observation
from agentfuzz.model.summary import Summary
from agentfuzz.request.profiles import KnobDefaults, load_profile
from agentfuzz.runs import campaign
from agentfuzz.runs.config import FuzzConfig
from agentfuzz.runs.pace import BOUND, SLOW_LIMIT, Pace
from agentfuzz.wire.target import Target

_BUDGETS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
CASE = Case(history=History(items=(UserMessage(text="q"),)))


def _answer(slow: bool) -> Observation:
    failure = f"{SLOW}nothing after 1s" if slow else None
    return Observation(exchange=Exchange("http://x/v1", {}, False, failure=failure))


def test_the_budget_is_bounded_after_enough_slow_unbounded_answers() -> None:
    defaults: dict[str, Any] = {"temperature": 0.0}
    notes: list[str] = []
    pace = Pace(defaults, 60.0, notes)
    bounded = CASE.model_copy(update={"options": Options(max_tokens=16)})
    for case, slow in ((CASE, False), (bounded, True), (CASE, True)):
        pace.hear(case, _answer(slow))
    assert "max_tokens" not in defaults and notes == []  # one slow unbounded answer so far
    pace.hear(CASE, _answer(True))
    assert defaults == {"temperature": 0.0, "max_tokens": BOUND}
    (note,) = notes
    assert "slow target" in note and f"max_tokens={BOUND}" in note and "--timeout 60s" in note
    pace.hear(CASE, _answer(True))
    assert len(notes) == 1


def test_a_budget_the_profile_sets_is_left_alone() -> None:
    defaults: dict[str, Any] = {"max_tokens": 64}
    notes: list[str] = []
    pace = Pace(defaults, 60.0, notes)
    for _ in range(SLOW_LIMIT * 3):
        pace.hear(CASE, _answer(True))
    assert defaults == {"max_tokens": 64} and notes == []


_CHAT = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}


def _drips_unless_bounded(request: httpx.Request) -> httpx.Response:
    """A model that writes to its context unless a budget is set: out of time at once."""
    try:
        body = json.loads(request.content)
    except ValueError:
        return httpx.Response(400, json={"error": {"message": "not JSON"}})
    if isinstance(body, dict) and not any(k in body for k in _BUDGETS):
        raise httpx.ReadTimeout("nothing yet", request=request)
    return httpx.Response(200, json=_CHAT)


def test_a_run_against_a_slow_target_bounds_later_requests_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def mocked(*args: Any, **kw: Any) -> Target:
        kw["transport"] = httpx.MockTransport(_drips_unless_bounded)
        return Target(*args, **kw)

    monkeypatch.setattr(campaign, "Target", mocked)
    mode: Mode = ("chat", False)
    config = FuzzConfig(
        base_url="http://slow.invalid/v1",
        model="m",
        profile=load_profile("default").model_copy(update={"knob_defaults": KnobDefaults()}),
        out=tmp_path / "out",
        modes=(mode,),
        max_examples=15,
        seed=1,
        database=None,
        timeout=1.0,
    )
    report = campaign.run_unfolded(config)
    assert report.timeouts[label(mode)] == SLOW_LIMIT  # then every request was bounded
    assert len(report.latency[label(mode)]) > 5 * SLOW_LIMIT
    (note,) = report.notes
    assert f"max_tokens={BOUND}" in note
    console = Console(record=True, width=200)
    summary(console, report.summary())
    assert note in console.export_text()
    assert Summary.model_validate(report.summary().dump()).notes == [note]
