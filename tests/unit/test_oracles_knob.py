"""``knob``: an answer that ignores a knob its request set, judged on answers the real assembly
reads off the wire (each check silent where the request did not ask, or the server refused)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, SSEEvent
from agentfuzz.oracles._knob import knob
from agentfuzz.request.profiles import Profile
from agentfuzz.wire.dialects import assemble

CHAT = Case(history=History(items=(UserMessage(text="hi"),)))
RESPONSES = CHAT.model_copy(update={"api": "responses"})
USAGE = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def _choice(i: int, text: str, finish: str = "stop", logprobs: Any = None) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"index": i, "message": message, "finish_reason": finish, "logprobs": logprobs}


def _chat(request: dict[str, Any], *choices: dict[str, Any], usage: Any = USAGE) -> list[str]:
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m"}
    body |= {"choices": list(choices) or [_choice(0, "Sure.")], "usage": usage}
    exchange = Exchange(
        url="http://h/v1/chat/completions",
        request={"model": "m", "messages": [], **request},
        stream=False,
        status=200,
        content_type="application/json",
        body=json.dumps(body),
    )
    return [v.signature for v in knob(CHAT, assemble(exchange))]


def _chunk(choices: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return chunk | {"choices": choices, **({"usage": usage} if usage else {})}


def _delta(i: int, text: str, finish: str | None = None, logprobs: Any = None) -> dict[str, Any]:
    delta = {"index": i, "delta": {"content": text}, "finish_reason": finish}
    return delta | ({"logprobs": logprobs} if logprobs else {})


def _stream(request: dict[str, Any], chunks: list[dict[str, Any]]) -> list[str]:
    events = (*(SSEEvent(None, json.dumps(c)) for c in chunks), SSEEvent(None, "[DONE]"))
    exchange = Exchange(
        url="http://h/v1/chat/completions",
        request={"model": "m", "messages": [], "stream": True, **request},
        stream=True,
        status=200,
        content_type="text/event-stream",
        events=events,
    )
    return [v.signature for v in knob(CHAT, assemble(exchange))]


def _response(request: dict[str, Any], output: list[Any], usage: dict[str, int]) -> list[str]:
    body = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m"}
    body |= {"status": "completed", "output": output, "usage": usage, "tool_choice": "auto"}
    body |= {"tools": [], "parallel_tool_calls": True}
    exchange = Exchange(
        url="http://h/v1/responses",
        request={"model": "m", "input": "hi", **request},
        stream=False,
        status=200,
        content_type="application/json",
        body=json.dumps(body),
    )
    return [v.signature for v in knob(RESPONSES, assemble(exchange))]


def _message(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [part]}  # fmt: skip


def _call(i: int) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "f",
            "arguments": "{}", "status": "completed"}  # fmt: skip


def test_n_gives_that_many_choices() -> None:
    assert _chat({"n": 2}) == ["knob:n"]
    assert _chat({"n": 2}, _choice(0, "a"), _choice(1, "b")) == []
    assert _chat({}) == []
    streamed = [_chunk([_delta(0, "a", "stop")]), _chunk([_delta(1, "b", "stop")])]
    assert _stream({"n": 2}, streamed) == []
    assert _stream({"n": 3}, streamed) == ["knob:n"]


def test_no_stop_string_in_any_choice_text() -> None:
    assert _chat({"stop": [","]}, _choice(0, "Sure, here.")) == ["knob:stop"]
    assert _chat({"stop": "\n"}, _choice(0, "Sure")) == []
    # The second choice, streamed: a stop held back badly reaches the client in pieces.
    chunks = [
        _chunk([_delta(0, "ok")]),
        _chunk([_delta(1, "</tool")]),
        _chunk([_delta(1, "_call>")]),
    ]
    assert _stream({"n": 2, "stop": "</tool_call>"}, chunks) == ["knob:stop"]
    # An empty stop string stops nothing.
    assert _chat({"stop": [""]}, _choice(0, "Sure")) == []


def test_the_token_budget_holds_over_every_choice() -> None:
    over = USAGE | {"completion_tokens": 9, "total_tokens": 14}
    assert _chat({"max_tokens": 8}, usage=over) == ["knob:budget"]
    assert _chat({"max_completion_tokens": 9}, usage=over) == []
    # Two budgets: a server may follow either, so only the larger binds.
    assert _chat({"max_tokens": 4, "max_completion_tokens": 9}, usage=over) == []
    # n choices share no budget: each may spend it all.
    two = (_choice(0, "a"), _choice(1, "b"))
    assert _chat({"max_tokens": 5, "n": 2}, *two, usage=over) == []
    used = {"input_tokens": 4, "output_tokens": 7, "total_tokens": 11}
    assert _response({"max_output_tokens": 6}, [_message("Sure.")], used) == ["knob:budget"]
    assert _response({"max_output_tokens": 7}, [_message("Sure.")], used) == []


def test_include_usage_gives_one_usage_chunk_with_no_choices_last() -> None:
    asked = {"stream_options": {"include_usage": True}}
    text = _chunk([_delta(0, "Sure.", "stop")])
    assert _stream(asked, [text, _chunk([], USAGE)]) == []
    assert _stream(asked, [text]) == ["knob:include_usage:count"]
    assert _stream(asked, [text, _chunk([], USAGE), _chunk([], USAGE)]) == [
        "knob:include_usage:count"
    ]
    assert _stream(asked, [_chunk([], USAGE), text]) == ["knob:include_usage:not_last"]
    with_choice = _chunk([_delta(0, "Sure.", "stop")], USAGE)
    assert _stream(asked, [with_choice]) == ["knob:include_usage:choices"]
    # Not asked: a usage chunk or none, either is fine.
    assert _stream({"stream_options": {"include_usage": False}}, [text]) == []


def test_parallel_tool_calls_false_allows_one_call() -> None:
    used = {"input_tokens": 4, "output_tokens": 7, "total_tokens": 11}
    two = [_call(0), _call(1)]
    assert _response({"parallel_tool_calls": False}, two, used) == ["knob:parallel_tool_calls"]
    assert _response({"parallel_tool_calls": True}, two, used) == []
    assert _response({"parallel_tool_calls": False}, two[:1], used) == []


def test_logprobs_present_when_asked() -> None:
    entry = {"token": "Sure", "logprob": -0.1, "bytes": [83], "top_logprobs": []}
    assert _chat({"logprobs": True}) == ["knob:logprobs:missing"]
    assert _chat({"logprobs": True}, _choice(0, "Sure", logprobs={"content": [entry]})) == []
    top = {"logprobs": True, "top_logprobs": 2}
    assert _chat(top, _choice(0, "Sure", logprobs={"content": [entry]})) == ["knob:logprobs:top"]
    alternatives = entry | {"top_logprobs": [{"token": "Sure", "logprob": -0.1, "bytes": [83]}]}
    assert _chat(top, _choice(0, "Sure", logprobs={"content": [alternatives]})) == []
    # A choice with no text has no tokens to give figures for.
    assert _chat({"logprobs": True}, _choice(0, "")) == []
    streamed = [_chunk([_delta(0, "Su", logprobs={"content": [entry]})]), _chunk([_delta(0, "re")])]
    assert _stream({"logprobs": True}, streamed) == []


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        ({"type": "json_object"}, "not json", ["knob:response_format:not_json"]),
        ({"type": "json_object"}, ' {"a": 1} ', []),
        ({"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": True}},
         '{"b": 1}', ["knob:response_format:schema"]),
        ({"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": True}},
         '{"answer": "x"}', []),
        # Not strict: the spec promises no adherence, so nothing is judged.
        ({"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}, "prose", []),
        ({"type": "text"}, "prose", []),
    ],
)  # fmt: skip
def test_a_json_response_format_parses(fmt: dict[str, Any], text: str, expected: list[str]) -> None:
    assert _chat({"response_format": fmt}, _choice(0, text)) == expected


def test_a_json_format_is_not_judged_on_a_cut_answer() -> None:
    fmt = {"response_format": {"type": "json_object"}}
    assert _chat(fmt, _choice(0, '{"a": ', "length")) == []
    # A stop string may cut the JSON anywhere.
    assert _chat(fmt | {"stop": "}"}, _choice(0, '{"a": 1')) == []
    used = {"input_tokens": 4, "output_tokens": 7, "total_tokens": 11}
    text_format = {"text": {"format": {"type": "json_object"}}}
    assert _response(text_format, [_message("{")], used) == ["knob:response_format:not_json"]
    assert _response(text_format, [_message("{}")], used) == []


def test_max_tool_calls_counts_built_in_tool_calls_only() -> None:
    used = {"input_tokens": 4, "output_tokens": 7, "total_tokens": 11}
    searches = [{"type": "web_search_call", "id": f"ws_{i}", "status": "completed"} for i in (0, 1)]
    assert _response({"max_tool_calls": 1}, searches, used) == ["knob:max_tool_calls"]
    assert _response({"max_tool_calls": 2}, searches, used) == []
    # The cap does not count function calls.
    assert _response({"max_tool_calls": 1}, [_call(0), _call(1)], used) == []


def test_a_refusal_is_judged_by_nobody_here() -> None:
    exchange = Exchange(
        url="http://h/v1/chat/completions",
        request={"model": "m", "messages": [], "n": 3},
        stream=False,
        status=400,
        content_type="application/json",
        body=json.dumps({"error": {"message": "n is not supported", "type": "invalid"}}),
    )
    assert list(knob(CHAT, assemble(exchange))) == []


def test_a_profile_quiets_the_knobs_its_target_does_not_claim() -> None:
    profile = Profile(knobs=("stop", "budget"), model_signatures=("bad_arguments:schema",))
    quiet = profile.quiet_signatures
    assert "knob:n" in quiet and "knob:stop" not in quiet and "bad_arguments:schema" in quiet
    with pytest.raises(ValueError, match="unknown knob 'temperature'"):
        Profile(knobs=("temperature",))
