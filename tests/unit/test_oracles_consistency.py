"""``consistency``: an answer contradicting itself (finish reason vs calls, usage sums, ids)."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall
from agentfuzz.oracles._consistency import consistency

CHAT = Case(history=History(items=(UserMessage(text="hi"),)))
RESPONSES = CHAT.model_copy(update={"api": "responses"})


def _obs(api: str = "chat", status: int = 200, **kw: Any) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(url=f"http://h{path}", request={}, stream=False, status=status)
    return Observation(exchange=exchange, **kw)


def _signatures(case: Case, obs: Observation) -> list[str]:
    return [v.signature for v in consistency(case, obs)]


def test_tool_calls_finish_with_no_call() -> None:
    empty = _obs(finish_reason="tool_calls", text="")
    assert _signatures(CHAT, empty) == ["consistency:tool_calls_without_calls"]
    call = ObservedCall(0, "call_1", "get_weather", "{}")
    assert _signatures(CHAT, dataclasses.replace(empty, tool_calls=(call,))) == []
    # A custom tool's call is a call, and a refusal is no answer to judge.
    assert _signatures(CHAT, dataclasses.replace(empty, others=("custom",))) == []
    assert _signatures(CHAT, dataclasses.replace(empty, refused=True)) == []


def test_usage_must_add_up_on_each_api() -> None:
    good = {"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}
    bad = {"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 8}}
    assert _signatures(CHAT, _obs(payloads=(good,))) == []
    assert _signatures(CHAT, _obs(payloads=(bad,))) == ["consistency:usage_sum"]
    final = {"type": "response.completed", "response": {"usage": {}}}
    final["response"]["usage"] = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 6}
    (v,) = consistency(RESPONSES, _obs("responses", payloads=(final,)))
    assert v.message == "usage.total_tokens is 6, but input_tokens + output_tokens is 7"
    # Missing or non-numeric figures are another oracle's (wire_schema) business.
    partial = {"usage": {"prompt_tokens": 3, "total_tokens": 8}}
    assert _signatures(CHAT, _obs(payloads=(partial, {"usage": {"total_tokens": True}}))) == []


def test_two_calls_of_one_answer_sharing_an_id() -> None:
    calls = tuple(ObservedCall(i, "fc_" + str(i), "f", "{}", call_id="call_x") for i in (0, 1))
    assert _signatures(RESPONSES, _obs("responses", tool_calls=calls)) == [
        "consistency:shared_call_id"
    ]
    distinct = tuple(ObservedCall(i, f"call_{i}", "f", "{}") for i in (0, 1))
    assert _signatures(CHAT, _obs(tool_calls=distinct)) == []


def _streamed(api: str, request: dict[str, Any], *payloads: dict[str, Any]) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(url=f"http://h{path}", request=request, stream=True, status=200)
    return Observation(exchange=exchange, payloads=payloads)


def _envelope(**fields: Any) -> dict[str, Any]:
    base = {"object": "response", "model": "m", "tool_choice": "auto", "tools": []}
    return base | {"parallel_tool_calls": True, "store": False, "instructions": None} | fields


def test_a_completed_response_has_finished_each_item() -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "c", "status": "in_progress"}
    body = _envelope(status="completed", output=[call])
    assert _signatures(RESPONSES, _obs("responses", payloads=(body,))) == [
        "consistency:item_status"
    ]
    done = body | {"output": [call | {"status": "completed"}]}
    assert _signatures(RESPONSES, _obs("responses", payloads=(done,))) == []
    # Still going, or cut: not this check's to judge (an item without a status neither).
    assert (
        _signatures(RESPONSES, _obs("responses", payloads=(body | {"status": "incomplete"},))) == []
    )
    bare = body | {"output": [{"type": "reasoning", "id": "rs_1"}]}
    assert _signatures(RESPONSES, _obs("responses", payloads=(bare,))) == []


def test_two_items_of_one_response_sharing_an_id() -> None:
    items = [{"type": "reasoning", "id": "rs_1"}, {"type": "message", "id": "rs_1"}]
    body = _envelope(status="completed", output=items)
    assert _signatures(RESPONSES, _obs("responses", payloads=(body,))) == [
        "consistency:shared_item_id"
    ]
    items[1]["id"] = "msg_1"
    assert _signatures(RESPONSES, _obs("responses", payloads=(body,))) == []


def test_the_first_snapshot_agrees_with_the_final_response() -> None:
    created = {"type": "response.created", "response": _envelope(status="in_progress")}
    final = {"type": "response.completed", "response": _envelope(status="completed", output=[])}
    assert _signatures(RESPONSES, _streamed("responses", {}, created, final)) == []
    for field, other in [("tool_choice", "none"), ("parallel_tool_calls", False), ("tools", None)]:
        moved = {**final, "response": final["response"] | {field: other}}
        assert _signatures(RESPONSES, _streamed("responses", {}, created, moved)) == [
            f"consistency:envelope:{field}"
        ]
    # A field the snapshot leaves out is not judged.
    sparse = {"type": "response.created", "response": {"status": "in_progress"}}
    moved = {**final, "response": final["response"] | {"tools": None}}
    assert _signatures(RESPONSES, _streamed("responses", {}, sparse, moved)) == []


def test_the_answer_names_the_model_asked_for() -> None:
    chunk = {"object": "chat.completion.chunk", "model": "kimi", "choices": []}
    asked = {"model": "kimi"}
    assert _signatures(CHAT, _streamed("chat", asked, chunk, chunk)) == []
    leaked = chunk | {"model": "hosted_vllm/kimi"}
    assert _signatures(CHAT, _streamed("chat", asked, chunk, leaked)) == ["consistency:model_echo"]
    # A dated snapshot of an alias is how hosted APIs answer; another model is not.
    dated = {"model": "gpt-4o-2024-08-06", "choices": []}
    assert _signatures(CHAT, _streamed("chat", {"model": "gpt-4o"}, dated)) == []
    mini = {"model": "gpt-4o-mini", "choices": []}
    assert _signatures(CHAT, _streamed("chat", {"model": "gpt-4o"}, mini)) == [
        "consistency:model_echo"
    ]
    final = {"type": "response.completed", "response": _envelope(status="completed", model="x")}
    assert _signatures(RESPONSES, _streamed("responses", {"model": "m"}, final)) == [
        "consistency:model_echo"
    ]


def test_calls_the_model_chose_end_with_tool_calls() -> None:
    call = ObservedCall(0, "call_1", "get_weather", "{}")
    said_stop = _obs(finish_reason="stop", tool_calls=(call,))
    assert _signatures(CHAT, said_stop) == ["consistency:calls_with_stop"]
    auto = dataclasses.replace(said_stop, exchange=_request({"tool_choice": "auto"}))
    assert _signatures(CHAT, auto) == ["consistency:calls_with_stop"]
    # A forced call may say stop (OpenAI's API does for a named function), however the
    # request forced it; Responses has no finish reason; a call cut by the budget says length.
    named = {"type": "function", "function": {"name": "get_weather"}}
    allowed = {"type": "allowed_tools", "mode": "required", "tools": []}
    for forced in ("required", named, allowed):
        obs = dataclasses.replace(said_stop, exchange=_request({"tool_choice": forced}))
        assert _signatures(CHAT, obs) == []
    assert _signatures(CHAT, dataclasses.replace(said_stop, finish_reason="length")) == []
    assert _signatures(RESPONSES, _obs("responses", tool_calls=(call,), status="completed")) == []


def _request(body: dict[str, Any]) -> Exchange:
    return Exchange(url="http://h/v1/chat/completions", request=body, stream=False, status=200)
