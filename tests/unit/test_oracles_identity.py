"""``identity`` and ``index_gap``: streamed ids must not change, indexes must be 0..n-1."""

from __future__ import annotations

from typing import Any

import pytest

from agentfuzz.model.history import Case, History, Tool, UserMessage
from agentfuzz.model.observation import Exchange, ItemSighting, Observation, ObservedCall, Violation
from agentfuzz.oracles import check

CASE = Case(history=History(tools=(Tool(name="get_weather"),), items=(UserMessage(text="hi"),)))


def _exchange(api: str, stream: bool = True) -> Exchange:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    return Exchange(url=f"http://127.0.0.1:8000{path}", request={}, stream=stream, status=200)


def _run(oracle: str, obs: Observation) -> list[Violation]:
    return check(CASE, obs, only=[oracle])


def _completed(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "response.completed", "sequence_number": 9, "response": {"output": output}}


# Seed 002, verbatim ids: vLLM re-minted every identity in response.completed.
STREAMED_CALL = ("function_call", "86c1dbf1a8fefbcf", "call_951f53b107639ed7")
FINAL_CALL = ("function_call", "fc_bebd3a7f583cf8e4", "chatcmpl-tool-878dd447ef4d81ef")
SEED_002 = (
    ItemSighting("added", 0, "reasoning", "89d3c2a7e9e2f1cd"),
    ItemSighting("done", 0, "reasoning", "89d3c2a7e9e2f1cd"),
    ItemSighting("added", 1, *STREAMED_CALL),
    ItemSighting("done", 1, *STREAMED_CALL),
    ItemSighting("completed", 0, "reasoning", "rs_b540917d7602e6c3"),
    ItemSighting("completed", 1, *FINAL_CALL),
)


def _seed_002_obs() -> Observation:
    return Observation(
        exchange=_exchange("responses"),
        sightings=SEED_002,
        payloads=(_completed([{"type": "reasoning"}, {"type": "function_call"}]),),
    )


def test_seed_002_identity_break() -> None:
    found = _run("identity", _seed_002_obs())
    by_sig = {v.signature: v for v in found}
    assert set(by_sig) == {
        "identity:reasoning:id",
        "identity:function_call:id",
        "identity:function_call:call_id",
    }
    call_id = by_sig["identity:function_call:call_id"]
    assert call_id.evidence == "call_951f53b107639ed7 → chatcmpl-tool-878dd447ef4d81ef"
    assert "output 1" in call_id.message and "response.completed" in call_id.message
    assert by_sig["identity:function_call:id"].evidence == "86c1dbf1a8fefbcf → fc_bebd3a7f583cf8e4"


def test_identity_compares_only_where_both_sides_are_known() -> None:
    sightings = (
        ItemSighting("added", 0, "function_call", None, "call_1"),
        ItemSighting("done", 0, "function_call", "fc_1", None),
        ItemSighting("completed", 0, "function_call", "fc_1", "call_1"),
    )
    obs = Observation(
        exchange=_exchange("responses"),
        sightings=sightings,
        payloads=(_completed([{"type": "function_call"}]),),
    )
    assert _run("identity", obs) == []


def test_identity_type_change_is_named() -> None:
    sightings = (
        ItemSighting("added", 0, "message", "msg_1"),
        ItemSighting("completed", 0, "reasoning", "msg_1"),
    )
    obs = Observation(exchange=_exchange("responses"), sightings=sightings)
    (found,) = _run("identity", obs)
    assert found.signature == "identity:message:type"
    assert found.evidence == "message → reasoning"


def test_completed_output_length_must_match_the_streamed_items() -> None:
    sightings = (ItemSighting("added", 0, "function_call", "fc_1", "call_1"),)
    extra = [{"type": "function_call"}, {"type": "function_call"}]
    obs = Observation(
        exchange=_exchange("responses"), sightings=sightings, payloads=(_completed(extra),)
    )
    (found,) = _run("identity", obs)
    assert found.signature == "identity:output_length"
    assert "2 output items but 1" in found.message


def test_chat_chunk_ids_must_not_change() -> None:
    obs = Observation(
        exchange=_exchange("chat"), chunk_ids=("chatcmpl-a", "chatcmpl-a", "chatcmpl-b")
    )
    (found,) = _run("identity", obs)
    assert (found.signature, found.evidence) == ("identity:chunk:id", "chatcmpl-a → chatcmpl-b")
    steady = Observation(exchange=_exchange("chat"), chunk_ids=("chatcmpl-a",) * 3)
    assert _run("identity", steady) == []


def test_identity_ignores_non_streamed_answers() -> None:
    obs = Observation(exchange=_exchange("responses", stream=False), sightings=SEED_002)
    assert _run("identity", obs) == []


def _parallel(indexes: tuple[int | None, ...]) -> Observation:
    calls = tuple(
        ObservedCall(i, f"chatcmpl-tool-{n}", "get_weather", "{}") for n, i in enumerate(indexes)
    )
    return Observation(exchange=_exchange("chat"), tool_calls=calls, stream_indexes=indexes)


@pytest.mark.parametrize(
    ("indexes", "signatures"),
    [
        ((1,), ["index_gap:gap"]),
        ((0, 0), ["index_gap:duplicate"]),
        ((0, 2), ["index_gap:gap"]),
        ((None,), ["index_gap:no_index"]),
        ((1, 1), ["index_gap:duplicate", "index_gap:gap"]),
    ],
)
def test_stream_indexes_must_be_0_to_n_minus_1(
    indexes: tuple[int | None, ...], signatures: list[str]
) -> None:
    found = _run("index_gap", _parallel(indexes))
    assert [v.signature for v in found] == signatures
    assert all(str(list(indexes)) in v.evidence for v in found)


@pytest.mark.parametrize("indexes", [(), (0,), (0, 1, 2), (1, 0)])
def test_good_stream_indexes_are_silent(indexes: tuple[int, ...]) -> None:
    assert _run("index_gap", _parallel(indexes)) == []


def test_non_streamed_answers_skip_the_index_check() -> None:
    obs = Observation(exchange=_exchange("chat", stream=False), stream_indexes=(1,))
    assert _run("index_gap", obs) == []


@pytest.mark.parametrize("stream", [False, True])
def test_every_call_needs_an_id(stream: bool) -> None:
    chat = Observation(
        exchange=_exchange("chat", stream),
        tool_calls=(ObservedCall(0, "", "get_weather", "{}"),),
        stream_indexes=(0,) if stream else (),
    )
    (found,) = _run("index_gap", chat)
    assert found.signature == "index_gap:empty_id"
    assert "id=''" in found.evidence
    responses = Observation(
        exchange=_exchange("responses", stream),
        tool_calls=(ObservedCall(0, "fc_1", "get_weather", "{}", call_id=" "),),
    )
    (found,) = _run("index_gap", responses)
    assert found.signature == "index_gap:empty_call_id"
    # A Responses item id is not the call id: an empty item id alone is fine here.
    fine = ObservedCall(0, None, "get_weather", "{}", call_id="call_1")
    assert _run("index_gap", Observation(exchange=_exchange("responses"), tool_calls=(fine,))) == []
