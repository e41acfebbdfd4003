"""The judge over a scripted sender: groups, K tries, rates, and what counts as the server's."""

from __future__ import annotations

import json

from agentfuzz.judge.judge import Judge, Verdict, any_of, same_failure
from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.wire.dialects import assemble

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


def test_markup_the_target_cannot_leak_is_the_models_text() -> None:
    # SmolLM2 on vLLM: another family's token is plain text to its tokenizer; its own is not.
    smollm2 = ("<|im_end|>", "<tool_call>", "</tool_call>")
    for text, fault in [("ok <|tool_response_end|>", False), ("ok <|im_end|>", True)]:
        verdict = Judge(Script(_answer(text)), markup=smollm2).verdict(CASE)
        assert [v.oracle for v in verdict.violations] == ["leaked_markup"]
        assert bool(verdict.faults) is fault
        anywhere = Judge(Script(_answer(text))).verdict(CASE)  # no markup listed: all count
        assert anywhere.faults == anywhere.violations


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


def _sized(prompt: int, text: str = "ok") -> dict[str, object]:
    usage = {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}
    return _answer(text) | {"usage": usage}


PAIRED = CASE.model_copy(update={"relation": "system"})


def test_a_related_request_goes_right_after_its_case_and_rides_on_its_answer() -> None:
    send = Script(_sized(10), _sized(10))
    verdict = Judge(send).verdict(PAIRED)
    first, second = send.sent
    assert first == PAIRED and second.relation is None
    assert second.history.items[0].kind == "system"
    assert [r.relation for r in verdict.observation.related] == ["system"]
    assert [v.signature for v in verdict.faults] == ["relation:system"]


def test_no_partner_is_sent_for_an_oracle_not_chosen() -> None:
    send = Script(_sized(10))
    obs = Judge(send, only=["empty_turn"]).observe(PAIRED)
    assert len(send.sent) == 1 and obs.related == ()
    send = Script(TEXT)
    Judge(send, skip=["stream_divergence"], differential=True).observe(CASE)
    assert len(send.sent) == 1


WEATHER_CALL = {"name": "get_weather", "arguments": "{}"}
GREEDY = Case(
    history=CASE.history.model_copy(update={"tools": (Tool(name="get_weather"),)}),
    options=Options(temperature=0.0),
    relation="choice_auto",
)
CALL = _answer("") | {
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": WEATHER_CALL}],
            },
            "finish_reason": "tool_calls",
        }
    ]
}


def test_a_greedy_disagreement_that_repeats_itself_is_kept() -> None:
    send = Script(CALL, TEXT)
    verdict = Judge(send, only=["relation"]).verdict(GREEDY)
    assert [v.signature for v in verdict.faults] == ["relation:choice_auto"]
    # Sent twice over: the pair, then the pair again to see each side repeat itself.
    assert len(send.sent) == 4


def test_a_greedy_disagreement_that_does_not_repeat_is_no_finding() -> None:
    # The case answers with a call, then (sent again) with text: the server is not steady.
    verdict = Judge(Script(CALL, TEXT, TEXT, TEXT), only=["relation"]).verdict(GREEDY)
    assert verdict.faults == ()
    # A prompt relation's figures need no second look.
    send = Script(_sized(10), _sized(10))
    Judge(send).verdict(PAIRED)
    assert len(send.sent) == 2
