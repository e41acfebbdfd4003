"""The oracle registry, and every oracle staying silent on realistic, SDK-valid answers."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, ItemSighting, Observation, ObservedCall, Violation
from agentfuzz.oracles import _registry, check, names, register

WEATHER = Tool(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
ARGS = json.dumps({"city": "Paris"})
CASE = Case(history=History(tools=(WEATHER,), items=(UserMessage(text="Weather in Paris?"),)))


def _exchange(api: str, stream: bool) -> Exchange:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    return Exchange(
        url=f"http://127.0.0.1:8000{path}",
        request={},
        stream=stream,
        status=200,
        content_type="text/event-stream" if stream else "application/json",
    )


def chat_plain() -> Observation:
    body = {
        "id": "chatcmpl-7f3a",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "kimi-k2",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_Ab3dE5fG7hI9jK1lM3nO5pQ7",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ARGS},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
    }
    call = ObservedCall(0, "call_Ab3dE5fG7hI9jK1lM3nO5pQ7", "get_weather", ARGS)
    return Observation(
        exchange=_exchange("chat", False),
        tool_calls=(call,),
        finish_reason="tool_calls",
        payloads=(body,),
    )


def chat_stream() -> Observation:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-7f3a",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "kimi-k2",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    first = {"index": 0, "id": "chatcmpl-tool-1", "type": "function"}
    second = {"index": 1, "id": "chatcmpl-tool-2", "type": "function"}
    chunks = (
        chunk({"role": "assistant", "content": "Checking both."}),
        chunk({"tool_calls": [{**first, "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ARGS}}]}),
        chunk({"tool_calls": [{**second, "function": {"name": "get_weather", "arguments": ARGS}}]}),
        chunk({}, "tool_calls"),
    )
    return Observation(
        exchange=_exchange("chat", True),
        text="Checking both.",
        tool_calls=(
            ObservedCall(0, "chatcmpl-tool-1", "get_weather", ARGS),
            ObservedCall(1, "chatcmpl-tool-2", "get_weather", ARGS),
        ),
        finish_reason="tool_calls",
        chunk_ids=("chatcmpl-7f3a",) * len(chunks),
        stream_indexes=(0, 1),
        payloads=chunks,
    )


REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
CALL_ITEM = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_951f53b107639ed7",
    "name": "get_weather",
    "arguments": ARGS,
    "status": "completed",
}


def _response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "kimi-k2",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def responses_plain() -> Observation:
    call = ObservedCall(1, "fc_1", "get_weather", ARGS, call_id="call_951f53b107639ed7")
    return Observation(
        exchange=_exchange("responses", False),
        reasoning="The user wants weather.",
        tool_calls=(call,),
        status="completed",
        payloads=(_response("completed", [REASONING, CALL_ITEM]),),
    )


def responses_stream() -> Observation:
    added = {**CALL_ITEM, "arguments": "", "status": "in_progress"}
    events = (
        {"type": "response.created", "sequence_number": 0,
         "response": _response("in_progress", [])},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": REASONING},
        {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0,
         "item": REASONING},
        {"type": "response.output_item.added", "sequence_number": 3, "output_index": 1,
         "item": added},
        {"type": "response.function_call_arguments.delta", "sequence_number": 4,
         "output_index": 1, "item_id": "fc_1", "delta": ARGS},
        {"type": "response.function_call_arguments.done", "sequence_number": 5,
         "output_index": 1, "item_id": "fc_1", "arguments": ARGS},
        {"type": "response.output_item.done", "sequence_number": 6, "output_index": 1,
         "item": CALL_ITEM},
        {"type": "response.completed", "sequence_number": 7,
         "response": _response("completed", [REASONING, CALL_ITEM])},
    )  # fmt: skip
    sightings = tuple(
        ItemSighting(phase, index, kind, item_id, call_id)
        for phase in ("added", "done", "completed")
        for index, kind, item_id, call_id in (
            (0, "reasoning", "rs_1", None),
            (1, "function_call", "fc_1", "call_951f53b107639ed7"),
        )
    )
    call = ObservedCall(1, "fc_1", "get_weather", ARGS, call_id="call_951f53b107639ed7")
    return Observation(
        exchange=_exchange("responses", True),
        tool_calls=(call,),
        status="completed",
        sightings=sightings,
        payloads=events,
    )


CLEAN = {
    "chat": chat_plain,
    "chat-stream": chat_stream,
    "responses": responses_plain,
    "responses-stream": responses_stream,
}


def test_names_is_the_public_contract() -> None:
    assert names() == [
        "empty_turn",
        "error",
        "leaked_markup",
        "identity",
        "index_gap",
        "bad_arguments",
        "unknown_tool",
        "tool_choice",
        "wire_schema",
        "consistency",
        "knob",
        "framing",
        "puppet_truth",  # issue 42
        "puppet_cut",  # the last of the single-turn oracles
        "self_rejection",
        "id_roundtrip",
        "proxy_fidelity",
        "relation",
        "stream_divergence",
    ]


@pytest.mark.parametrize("mode", sorted(CLEAN))
@pytest.mark.parametrize("choice", [None, "auto", "required", "get_weather"])
def test_every_oracle_is_silent_on_a_clean_answer(mode: str, choice: str | None) -> None:
    case = CASE.model_copy(update={"options": Options(tool_choice=choice)})
    assert check(case, CLEAN[mode]()) == []


def _empty_500() -> Observation:
    exchange = dataclasses.replace(_exchange("chat", False), status=500, body="oops")
    return Observation(exchange=exchange, errors=(("http_status", "500 Internal Server Error"),))


def test_check_runs_only_the_selected_oracles() -> None:
    obs = Observation(exchange=_exchange("chat", False), payloads=([],))
    every = {v.oracle for v in check(CASE, obs)}
    assert every == {"empty_turn", "wire_schema"}
    assert {v.oracle for v in check(CASE, obs, only=["wire_schema"])} == {"wire_schema"}
    assert {v.oracle for v in check(CASE, obs, skip=["wire_schema"])} == {"empty_turn"}
    assert check(CASE, obs, only=["empty_turn"], skip=["empty_turn"]) == []
    assert {v.oracle for v in check(CASE, _empty_500())} == {"error"}


@pytest.mark.parametrize("arg", ["only", "skip"])
def test_unknown_oracle_names_raise_one_line_listing_the_valid_ones(arg: str) -> None:
    with pytest.raises(ValueError, match="bogus") as info:
        check(CASE, chat_plain(), **{arg: ["empty_turn", "bogus"]})
    message = str(info.value)
    assert "\n" not in message
    assert all(name in message for name in names())


def test_registry_stamps_names_and_clips_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_ORACLES", {})

    @register("loud")
    def loud(case: Case, obs: Observation) -> list[Violation]:
        return [Violation(oracle="wrong", message="m", evidence="x" * 2000, signature="loud")]

    assert names() == ["loud"]
    (found,) = check(CASE, chat_plain())
    assert found.oracle == "loud"
    assert len(found.evidence) <= 500
    with pytest.raises(ValueError, match="already registered"):
        register("loud")(loud)
