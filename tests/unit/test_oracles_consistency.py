"""``consistency``: an answer contradicting itself (finish reason vs calls, usage sums, ids)."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentfuzz.history import Case, History, UserMessage
from agentfuzz.observation import Exchange, Observation, ObservedCall
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
