"""REPORT.md as issue 41 asked: the answer the server gave, cut to a readable length; a request
the proxy captured told as captured (seen once as the client got it, no seed); after
``agentfuzz reduce`` both who captured it and who cut it down named."""

from __future__ import annotations

from typing import Any

from agentfuzz.output.reports.bundle import ANSWER_CHARS, report_text

PROXY = {
    "command": "agentfuzz proxy --upstream http://gpu:8000/v1",
    "agentfuzz": "0.1.0",
    "run": "run-proxy",
    "profile": "default",
    "captured": True,
}
REDUCE = {"command": "agentfuzz reduce out/empty_turn-1/session.json", "agentfuzz": "0.1.1"}


def _doc(**more: Any) -> dict[str, Any]:
    return {
        "url": "http://gpu:8000/v1/chat/completions",
        "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "oracle": "empty_turn",
        "message": "2xx turn with no visible text",
        "api": "chat",
        "stream": False,
        "reproduced": "3/3",
        "observed": {"status": 200, "content_type": "application/json", "body": '{"id": "x"}'},
    } | more


def test_the_answer_the_server_gave_is_quoted() -> None:
    report = report_text(_doc(), "b")
    answer = report[report.index("## Answer") : report.index("## Re-send it")]
    assert "HTTP 200, `application/json`" in answer
    assert '```\n{"id": "x"}\n```' in answer


def test_a_long_answer_is_cut_keeping_its_head_and_tail() -> None:
    events = [f'{{"n": {n}, "pad": "{"x" * 80}"}}' for n in range(100)]
    observed = {"status": 200, "events": events, "body": None}
    report = report_text(_doc(stream=True, observed=observed), "b")
    answer = report[report.index("## Answer") : report.index("## Re-send it")]
    assert 'data: {"n": 0,' in answer and 'data: {"n": 99,' in answer
    assert 'data: {"n": 50,' not in answer
    assert "characters left out" in answer
    assert len(answer) < ANSWER_CHARS + 300


def test_an_answer_no_fence_can_break_out_of() -> None:
    observed = {"status": 500, "body": "```\n# not a heading\n````"}
    report = report_text(_doc(observed=observed), "b")
    assert "\n`````\n```\n# not a heading\n````\n`````" in report


def test_a_request_the_proxy_captured_is_told_as_captured() -> None:
    doc = _doc(found_by=PROXY, reproduced="1/1 (as the client got it)")
    report = report_text(doc, "b")
    assert "smallest request it found" not in report
    assert "captured from a client's traffic, as it was sent" in report
    assert "- Seen: once, as the client got it" in report
    assert "tries" not in report
    assert "seed" not in report  # a proxy draws nothing: there is no seed to name
    assert (
        "- Found by: captured from a client's traffic by "
        "`agentfuzz proxy --upstream http://gpu:8000/v1` (agentfuzz 0.1.0, profile `default`)"
    ) in report
    assert "Reduced by" not in report


def test_after_reduce_both_the_proxy_and_the_reduce_command_are_named() -> None:
    found_by = PROXY | {"run": "run-reduce", "reduce": REDUCE | {"from_run": "run-proxy"}}
    report = report_text(_doc(found_by=found_by), "b")
    assert "captured from a client's traffic, cut down by `agentfuzz reduce`" in report
    assert "- Found by: captured from a client's traffic by `agentfuzz proxy" in report
    assert "- Reduced by: `agentfuzz reduce out/empty_turn-1/session.json` (agentfuzz 0.1.1)" in (
        report
    )
    assert "- Reproduced: 3/3 tries" in report


def test_a_fuzz_run_names_its_seed_and_a_capture_no_run_found_says_so() -> None:
    fuzz = {"command": "agentfuzz fuzz --seed 7", "seed": 7, "profile": "default"}
    report = report_text(_doc(found_by=fuzz), "b")
    assert "(agentfuzz ?, fuzz profile `default`, seed 7)" in report
    assert "smallest request it found" in report
    given = {"command": None, "reduce": REDUCE}
    report = report_text(_doc(found_by=given), "b")
    assert "- Found by: a request given to `agentfuzz reduce` (no agentfuzz run found it)" in report
    assert "- Reduced by: `agentfuzz reduce" in report
