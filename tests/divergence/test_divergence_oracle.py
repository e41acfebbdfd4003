"""``stream_divergence`` over hand-built pairs: each kind found, ids and spacing ignored, and
silent wherever the two answers need not agree."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall, Related, Violation
from agentfuzz.oracles import check, names

WEATHER = Tool(name="get_weather", parameters={"type": "object", "properties": {}})
GREEDY = Case(
    history=History(tools=(WEATHER,), items=(UserMessage(text="Weather in Paris?"),)),
    options=Options(temperature=0.0),
)
SPACED = '{ "city" :  "Paris",\n "days": 2 }'
COMPACT = json.dumps({"days": 2, "city": "Paris"}, separators=(",", ":"))


def turn(
    stream: bool,
    text: str = "",
    calls: tuple[ObservedCall, ...] = (),
    finish: str | None = "stop",
    api: str = "chat",
    status: int = 200,
    request: dict[str, object] | None = None,
) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(
        url=f"http://127.0.0.1:8000{path}",
        request={"stream": stream} if request is None else request,
        stream=stream,
        status=status,
    )
    if api == "responses":
        return Observation(exchange, text=text, tool_calls=calls, status=finish)
    return Observation(exchange, text=text, tool_calls=calls, finish_reason=finish)


def call(name: str = "get_weather", arguments: str = COMPACT, **ids: str) -> ObservedCall:
    return ObservedCall(0, ids.get("id", "call_1"), name, arguments, ids.get("call_id"))


def pair(main: Observation, twin: Observation) -> Observation:
    return dataclasses.replace(main, related=(Related("stream", twin),))


def found(obs: Observation, case: Case = GREEDY) -> list[Violation]:
    return check(case, obs, only=["stream_divergence"])


def signatures(obs: Observation, case: Case = GREEDY) -> list[str]:
    return [v.signature for v in found(obs, case)]


def test_registered_after_every_other_oracle() -> None:
    assert names()[-1] == "stream_divergence"


@pytest.mark.parametrize(
    ("streamed", "plain", "kind"),
    [
        # vLLM, forced call cut at max_tokens 8: markup as text, and nothing when streamed.
        (turn(True, finish="length"), turn(False, "<|tool_calls_section_begin|>", finish="length"),
         "shape"),
        (turn(True, calls=(call(),), finish="tool_calls"), turn(False, "It is sunny."), "shape"),
        (turn(True, "It is", finish="length"), turn(False, "It is sunny."), "cut"),
        (turn(True, calls=(call(),)), turn(False, calls=(call("get_time"),)), "calls"),
        (turn(True, calls=(call(), call())), turn(False, calls=(call(),)), "calls"),
        # At max_tokens 14 the stream invents arguments "{}".
        (turn(True, calls=(call(arguments="{}"),)), turn(False, calls=(call(arguments='{"'),)),
         "arguments"),
        (turn(True, calls=(call(arguments='{"a": true}'),)),
         turn(False, calls=(call(arguments='{"a": 1}'),)), "arguments"),
        (turn(True, "It is sunny."), turn(False, "It is rainy."), "text"),
    ],
)  # fmt: skip
def test_each_kind_is_found_either_way_round(
    streamed: Observation, plain: Observation, kind: str
) -> None:
    assert signatures(pair(streamed, plain)) == [f"stream_divergence:{kind}"]
    assert signatures(pair(plain, streamed)) == [f"stream_divergence:{kind}"]


def test_namespaces_are_part_of_the_call() -> None:
    plain = ObservedCall(0, "fc_1", "get_weather", "{}", "call_1", namespace="weather")
    streamed = dataclasses.replace(plain, namespace=None)
    obs = pair(turn(True, calls=(streamed,), api="responses", finish="completed"),
               turn(False, calls=(plain,), api="responses", finish="completed"))  # fmt: skip
    assert signatures(obs) == ["stream_divergence:calls"]


def test_evidence_shows_both_sides_and_says_which_is_the_stream() -> None:
    (v,) = found(pair(turn(False, "It is sunny."), turn(True, finish="length")))
    stream_line, plain_line = v.evidence.splitlines()
    assert stream_line.startswith("stream: nothing") and "(cut)" in stream_line
    assert plain_line.startswith("non-stream: text") and "It is sunny." in plain_line
    assert "stream gave nothing, non-stream gave text" in v.message


def test_one_violation_for_the_most_basic_difference() -> None:
    obs = pair(turn(True, "a", calls=(call(),), finish="length"), turn(False, "b"))
    assert signatures(obs) == ["stream_divergence:shape"]


@pytest.mark.parametrize(
    ("streamed", "plain"),
    [
        # Ids differ per request: chat ids, Responses item ids and call ids.
        (turn(True, calls=(call(id="chatcmpl-tool-9f"),)), turn(False, calls=(call(id="call_x"),))),
        (turn(True, calls=(call(id="fc_1", call_id="call_a"),), api="responses",
              finish="completed"),
         turn(False, calls=(call(id="fc_2", call_id="call_b"),), api="responses",
              finish="completed")),
        # Streamed arguments keep the model's spacing; the other side re-serialises them.
        (turn(True, calls=(call(arguments=SPACED),)),
         turn(False, calls=(call(arguments=COMPACT),))),
        (turn(True, calls=(call(arguments=' {"'),)), turn(False, calls=(call(arguments='{"'),))),
        (turn(True, "It is\n sunny. "), turn(False, "It is sunny.")),
        # finish_reason wording beyond the cut is not compared.
        (turn(True, calls=(call(),), finish="tool_calls"), turn(False, calls=(call(),))),
        (turn(True, "cut", finish="length"), turn(False, "cut", finish="length")),
        (turn(True, finish="stop"), turn(False, finish="stop")),
    ],
)  # fmt: skip
def test_silent_when_the_client_sees_the_same_turn(
    streamed: Observation, plain: Observation
) -> None:
    assert found(pair(streamed, plain)) == []


DIFFERENT = (turn(True, "It is sunny."), turn(False, "It is rainy."))


def test_silent_without_a_twin() -> None:
    assert found(DIFFERENT[0]) == []


@pytest.mark.parametrize("temperature", [None, 0.7, 1.0])
def test_silent_when_sampling_is_not_greedy(temperature: float | None) -> None:
    case = GREEDY.model_copy(update={"options": Options(temperature=temperature)})
    assert found(pair(*DIFFERENT), case) == []


def test_temperature_zero_in_the_body_sent_counts() -> None:
    case = GREEDY.model_copy(update={"options": Options()})
    sent = turn(True, "It is sunny.", request={"stream": True, "temperature": 0})
    assert signatures(pair(sent, DIFFERENT[1]), case) == ["stream_divergence:text"]
    hot = turn(True, "It is sunny.", request={"stream": True, "temperature": 0.5})
    assert found(pair(hot, DIFFERENT[1]), case) == []


@pytest.mark.parametrize(
    "broken",
    [
        dataclasses.replace(DIFFERENT[1], errors=(("http_status", "500"),)),
        dataclasses.replace(DIFFERENT[1], errors=(("error_frame", "boom"),)),
        dataclasses.replace(DIFFERENT[1], refused=True),
        turn(False, "It is rainy.", status=400),
    ],
)
def test_silent_when_either_side_is_not_a_normal_answer(broken: Observation) -> None:
    assert found(pair(DIFFERENT[0], broken)) == []
    assert found(pair(broken, DIFFERENT[0])) == []
