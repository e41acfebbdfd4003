"""The judge over a scripted sender: groups, K tries, rates, and what counts as the server's."""

from __future__ import annotations

import json

from agentfuzz.dialects import assemble
from agentfuzz.history import Case, History, UserMessage
from agentfuzz.judge import Judge, Verdict, any_of, same_failure
from agentfuzz.observation import Exchange, Observation

CASE = Case(history=History(items=(UserMessage(text="hi"),)))


def _answer(text: str) -> dict[str, object]:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}


EMPTY, TEXT = _answer(""), _answer("ok")


class Script:
    """Answers each request with the next body of ``bodies`` (cycling), and counts them."""

    def __init__(self, *bodies: dict[str, object]) -> None:
        self.bodies, self.sent = bodies, []

    def __call__(self, case: Case) -> Observation:
        body = self.bodies[len(self.sent) % len(self.bodies)]
        self.sent.append(case)
        return assemble(
            Exchange(
                url="http://x/v1/chat/completions",
                request={},
                stream=False,
                status=200,
                content_type="application/json",
                body=json.dumps(body),
            )
        )


EMPTY_TURN = ("empty_turn", "empty_turn")


def test_a_verdict_holds_every_violation_and_the_seen_hook_hears_it() -> None:
    heard: list[Verdict] = []
    verdict = Judge(Script(EMPTY), seen=heard.append).verdict(CASE)
    assert [v.key for v in verdict.violations] == [EMPTY_TURN]
    assert verdict.faults == verdict.violations and heard == [verdict]


def test_the_models_own_signatures_are_not_faults() -> None:
    verdict = Judge(Script(EMPTY), model_signatures=("empty_turn",)).verdict(CASE)
    assert verdict.violations and verdict.faults == ()


def test_still_fails_stops_at_the_first_failure_and_keeps_its_evidence() -> None:
    send = Script(TEXT, TEXT, EMPTY, TEXT)
    judge = Judge(send)
    assert judge.still_fails(same_failure(EMPTY_TURN), CASE, tries=10)
    assert len(send.sent) == 3
    assert judge.fired is not None and judge.fired.observation.text == ""
    assert not Judge(Script(TEXT)).still_fails(any_of(None), CASE, tries=4)


def test_a_flaky_rate_is_extended_so_it_can_be_quoted() -> None:
    assert Judge(Script(EMPTY, TEXT)).rate(any_of("empty_turn"), CASE) == (50, 100)
    assert Judge(Script(EMPTY)).rate(any_of("empty_turn"), CASE) == (10, 10)
    assert Judge(Script(EMPTY, TEXT)).hits(any_of("error"), CASE) == 0


def test_under_differential_the_group_is_the_case_and_its_stream_flipped_twin() -> None:
    send = Script(TEXT, EMPTY)
    obs = Judge(send, differential=True).observe(CASE)
    assert [c.stream for c in send.sent] == [CASE.stream, not CASE.stream]
    assert obs.text == "ok" and obs.twin is not None and obs.twin.text == ""
