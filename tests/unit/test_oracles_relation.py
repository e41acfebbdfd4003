"""``relation`` over hand-built pairs: each relation's fault found by its figures, and silent
wherever the two answers cannot be compared."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation, Related, Violation
from agentfuzz.oracles import check, relation_of, steady
from agentfuzz.wire.dialects import assemble

ASK = UserMessage(text="Use get_weather and search.")
CASE = Case(
    history=History(tools=(Tool(name="get_weather"), Tool(name="search")), items=(ASK,)),
    options=Options(temperature=0.0),
)


SEARCH = {"name": "search", "arguments": "{}"}


def answer(
    prompt: int | None = 10,
    text: str = "ok",
    calls: int = 0,
    status: int = 200,
    finish: str = "stop",
) -> Observation:
    message: dict[str, object] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "search", "arguments": "{}"},
            }
            for n in range(calls)
        ]
    body: dict[str, object] = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if prompt is not None:
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": 1,
            "total_tokens": prompt + 1,
        }
    if status != 200:
        body = {"error": {"message": "no", "type": "invalid_request_error"}}
    return assemble(
        Exchange(
            url="http://x/v1/chat/completions",
            request={"temperature": 0},
            stream=False,
            status=status,
            content_type="application/json",
            body=json.dumps(body),
        )
    )


def judged(
    relation: str, mine: Observation, theirs: Observation, case: Case = CASE
) -> list[Violation]:
    case = case.model_copy(update={"relation": relation})
    pair = dataclasses.replace(mine, related=(Related(relation, theirs),))
    return check(case, pair, only=["relation"])


def signatures(relation: str, mine: Observation, theirs: Observation) -> list[str]:
    return [v.signature for v in judged(relation, mine, theirs)]


@pytest.mark.parametrize(
    ("relation", "mine", "theirs", "fires"),
    [
        ("tools", 40, 40, True),
        ("tools", 40, 12, False),
        ("tools", 12, 40, False),
        ("system", 20, 20, True),
        ("system", 20, 19, True),
        ("system", 20, 90, False),
        ("tool_result", 50, 50, True),
        ("tool_result", 50, 80, False),
        ("text_part", 30, 31, True),
        ("text_part", 30, 30, False),
    ],
)
def test_a_prompt_relation_reads_the_two_sizes(
    relation: str, mine: int, theirs: int, fires: bool
) -> None:
    found = judged(relation, answer(mine), answer(theirs))
    assert [v.signature for v in found] == ([f"relation:{relation}"] if fires else [])
    if fires:
        assert f"{mine} for the request, {theirs} for its partner" in found[0].evidence


def test_special_tokens_fire_only_past_one_token_saved_per_spelling() -> None:
    two = CASE.model_copy(
        update={
            "history": History(items=(UserMessage(text="<|im_end|> and <|eot_id|>"),)),
        }
    )
    for saved, fires in ((0, False), (2, False), (3, True), (8, True)):
        found = judged("special_token", answer(20), answer(20 + saved), two)
        assert bool(found) is fires, saved
    # The real spelling costing more than its near miss is how a careful server reads it.
    assert judged("special_token", answer(30), answer(20), two) == []


@pytest.mark.parametrize("relation", ["tools", "system", "tool_result", "text_part"])
def test_silent_without_a_figure_on_either_side(relation: str) -> None:
    assert signatures(relation, answer(None), answer(10)) == []
    assert signatures(relation, answer(10), answer(None)) == []


@pytest.mark.parametrize("broken", [answer(10, status=400), answer(10, status=500)])
def test_silent_when_either_side_is_not_a_normal_answer(broken: Observation) -> None:
    assert signatures("tools", answer(10), broken) == []
    assert signatures("tools", broken, answer(10)) == []


def test_choice_auto_compares_the_kind_of_turn_at_temperature_zero() -> None:
    found = judged("choice_auto", answer(text="", calls=1, finish="tool_calls"), answer())
    assert [v.signature for v in found] == ["relation:choice_auto"]
    assert "gave text where leaving it out gave calls" in found[0].message
    assert signatures("choice_auto", answer(text="hello"), answer(text="other words")) == []
    warm = CASE.model_copy(update={"options": Options(temperature=0.7)})
    assert judged("choice_auto", answer(text="", calls=1), answer(), warm) == []


def test_required_calls_fires_only_on_fewer_calls_and_never_on_a_cut_turn() -> None:
    two, one = answer(text="", calls=2, finish="tool_calls"), answer(text="", calls=1)
    assert signatures("required_calls", two, one) == ["relation:required_calls"]
    assert signatures("required_calls", one, two) == []
    assert signatures("required_calls", answer(), one) == []
    cut = answer(text="", calls=1, finish="length")
    assert signatures("required_calls", two, cut) == []


def test_the_stream_relation_is_left_to_stream_divergence() -> None:
    assert signatures("stream", answer(text="a"), answer(text="b")) == []


def test_relation_of_names_the_relation_a_violation_judged() -> None:
    assert relation_of(Violation("relation", "m", signature="relation:system")) == "system"
    assert relation_of(Violation("stream_divergence", "m", signature="x")) == "stream"
    assert relation_of(Violation("empty_turn", "m", signature="empty_turn")) is None


def test_steady_means_the_same_turn_as_a_client_sees_it() -> None:
    call = answer(text="", calls=1)
    assert steady(call, answer(text="", calls=1))
    assert not steady(call, answer(text="", calls=2))
    assert not steady(answer(), answer(status=500))
