"""The chat dialect: exact request bodies, and assembly of hand-written answers and streams."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, ObservedCall, SSEEvent
from agentfuzz.wire.dialects import assemble, build_request

URL = "http://127.0.0.1:1/v1/chat/completions"
WEATHER = Tool(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
LS = Tool(name="ls", namespace="fs")


def _force(value: Any) -> Any:
    """Walk a validated TypedDict value; pydantic checks ``Iterable`` fields only when iterated."""
    if isinstance(value, dict):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return [_force(v) for v in value]


# Module-level: a validated value checks its ``Iterable`` fields lazily, through its adapter.
BODIES: dict[bool, TypeAdapter[Any]] = {
    True: TypeAdapter(CompletionCreateParamsStreaming),
    False: TypeAdapter(CompletionCreateParamsNonStreaming),
}


def _validate(body: dict[str, Any]) -> None:
    _force(BODIES[body["stream"]].validate_python(body))
    json.dumps(body)


def _case(*items: Any, tools: tuple[Tool, ...] = (WEATHER,), **kw: Any) -> Case:
    return Case(history=History(tools=tools, items=items), api="chat", **kw)


def _body(case: Case) -> dict[str, Any]:
    path, body = build_request(case, "m")
    assert path == "/chat/completions"
    _validate(body)
    return body


CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
NS_CALL = ToolCall(id="functions.fs__ls:1", name="ls", namespace="fs", arguments="{")

CASES = [
    _case(UserMessage(text="hi")),
    _case(UserMessage(text=""), tools=()),
    _case(UserMessage(text="hi"), AssistantMessage(text="hello")),
    _case(
        UserMessage(text="q"),
        AssistantMessage(tool_calls=(CALL,)),
        ToolResult(call_id="call_1", output="sun"),
    ),
    _case(
        UserMessage(text="q"),
        AssistantMessage(text="", reasoning="", tool_calls=(CALL, NS_CALL)),
        tools=(WEATHER, LS),
    ),
    _case(ReasoningItem(text="hmm"), AssistantMessage(text="a"), ReasoningItem(text="dropped")),
    _case(UserMessage(text="q"), ToolResult(call_id="orphan", output="")),
    _case(UserMessage(text="q"), options=Options(include_tools=False, tool_choice="required")),
    _case(
        UserMessage(text="q"),
        options=Options(tool_choice="none", seed=3, temperature=0.0, max_tokens=9),
    ),
    _case(UserMessage(text="q"), options=Options(tool_choice="get_weather"), stream=True),
    _case(
        UserMessage(text="\u2603 \x00"),
        AssistantMessage(tool_calls=(ToolCall(id="", name="a.b/c"),)),
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_bodies_are_accepted_by_the_sdk_param_types(case: Case) -> None:
    body = _body(case)
    assert body["model"] == "m"
    assert body["stream"] is case.stream


def test_messages_have_the_exact_chat_shape() -> None:
    body = _body(
        _case(
            UserMessage(text="q"),
            AssistantMessage(text=None, reasoning="think", tool_calls=(CALL, NS_CALL)),
            ToolResult(call_id="call_1", output="sun"),
            AssistantMessage(text="done"),
        )
    )
    assert body["messages"] == [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "functions.fs__ls:1",
                    "type": "function",
                    "function": {"name": "fs__ls", "arguments": "{"},
                },
            ],
            "reasoning_content": "think",
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sun"},
        {"role": "assistant", "content": "done"},
    ]


def test_system_and_developer_messages_are_sent_in_place() -> None:
    body = _body(
        _case(
            SystemMessage(text="be brief"),
            UserMessage(text="q"),
            SystemMessage(text="use tools", role="developer"),
            UserMessage(text="again"),
        )
    )
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q"},
        {"role": "developer", "content": "use tools"},
        {"role": "user", "content": "again"},
    ]


def test_standalone_reasoning_folds_into_the_next_assistant_or_is_dropped() -> None:
    body = _body(
        _case(
            ReasoningItem(text="first"),
            AssistantMessage(text="a", reasoning="own"),
            ReasoningItem(text="orphan"),
        )
    )
    assert body["messages"] == [
        {"role": "assistant", "content": "a", "reasoning_content": "first\n\nown"}
    ]


def test_tools_and_tool_choice() -> None:
    body = _body(_case(UserMessage(text="q"), tools=(WEATHER, LS)))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": WEATHER.parameters,
            },
        },
        {
            "type": "function",
            "function": {"name": "fs__ls", "description": "", "parameters": LS.parameters},
        },
    ]
    assert "tool_choice" not in body
    for mode in ("auto", "none", "required"):
        assert _body(_case(options=Options(tool_choice=mode)))["tool_choice"] == mode
    named = _body(_case(options=Options(tool_choice="get_weather")))["tool_choice"]
    assert named == {"type": "function", "function": {"name": "get_weather"}}


@pytest.mark.parametrize(
    "case",
    [
        _case(UserMessage(text="q"), options=Options(include_tools=False, tool_choice="auto")),
        _case(UserMessage(text="q"), tools=(), options=Options(tool_choice="required")),
    ],
)
def test_no_tools_means_no_tool_choice(case: Case) -> None:
    body = _body(case)
    assert "tools" not in body
    assert "tool_choice" not in body


def test_knobs_appear_only_when_set() -> None:
    plain = _body(_case(UserMessage(text="q")))
    assert not {"seed", "temperature", "max_tokens"} & plain.keys()
    assert plain["stream"] is False
    knobs = _body(
        _case(UserMessage(text="q"), options=Options(seed=0, temperature=0.5, max_tokens=7))
    )
    assert (knobs["seed"], knobs["temperature"], knobs["max_tokens"]) == (0, 0.5, 7)
    assert _body(_case(UserMessage(text="q"), stream=True))["stream"] is True


# --- assembly: non-streamed ------------------------------------------------------------------


def _answer(body: str, status: int = 200, **kw: Any) -> Exchange:
    return Exchange(url=URL, request={}, stream=False, status=status, body=body, **kw)


def _completion(message: dict[str, Any], finish: str = "stop") -> str:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]})


def test_plain_answer() -> None:
    obs = assemble(_answer(_completion({"content": "hi", "reasoning_content": "hmm"})))
    assert (obs.text, obs.reasoning, obs.finish_reason) == ("hi", "hmm", "stop")
    assert obs.errors == () and not obs.refused
    assert obs.api == "chat"
    assert len(obs.payloads) == 1 and obs.payloads[0]["id"] == "chatcmpl-1"


def test_parallel_calls_keep_their_positions() -> None:
    calls = [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": {"x": 1}}},
    ]
    obs = assemble(_answer(_completion({"content": None, "tool_calls": calls}, "tool_calls")))
    assert obs.text == ""
    assert obs.tool_calls == (
        ObservedCall(index=0, id="a", name="f", arguments="{}"),
        ObservedCall(index=1, id="b", name="g", arguments='{"x": 1}'),
    )
    assert obs.finish_reason == "tool_calls"


@pytest.mark.parametrize("body", ["[]", "42", '{"choices": "x"}', '{"choices": [null]}', "null"])
def test_odd_json_shapes_never_raise_and_are_left_to_wire_schema(body: str) -> None:
    obs = assemble(_answer(body))
    assert obs.errors == ()
    assert obs.payloads == (json.loads(body),)
    assert obs.text == "" and obs.tool_calls == ()


def test_html_body_is_non_json() -> None:
    obs = assemble(_answer("<html><body>Bad Gateway</body></html>", content_type="text/html"))
    assert [k for k, _ in obs.errors] == ["non_json"]
    assert "Bad Gateway" in obs.errors[0][1]
    assert obs.payloads == ()


def test_5xx_is_http_status_with_the_body_as_evidence() -> None:
    markup = "<|tool_calls_section_begin|>" + "x" * 1000
    obs = assemble(_answer(markup, status=500))
    assert [k for k, _ in obs.errors] == ["http_status"]
    detail = obs.errors[0][1]
    assert detail.startswith("500") and "<|tool_calls_section_begin|>" in detail
    assert len(detail) <= 300


def test_4xx_json_error_is_a_refusal() -> None:
    obs = assemble(_answer('{"error": {"message": "bad id", "type": "invalid"}}', status=400))
    assert obs.refused and obs.errors == ()


@pytest.mark.parametrize(
    "body", ['{"detail": "tool_choice needs tools"}', '{"detail": [{"loc": ["body"]}]}', "[]"]
)
def test_4xx_json_of_another_shape_is_a_refusal_not_an_answer(body: str) -> None:
    # FastAPI's own refusals (Llama Stack's among them) have no "error" key; judged as an
    # answer, the body read as a completion with no choices, a false finding everywhere.
    obs = assemble(_answer(body, status=400))
    assert obs.refused and obs.errors == ()
    assert obs.tool_calls == () and obs.text == ""


def test_4xx_html_is_not_a_refusal() -> None:
    obs = assemble(_answer("<h1>nope</h1>", status=404))
    assert not obs.refused
    assert [k for k, _ in obs.errors] == ["non_json"]


def test_200_with_error_object_is_an_error_frame() -> None:
    obs = assemble(_answer('{"error": {"message": "parser exploded"}}'))
    assert [k for k, _ in obs.errors] == ["error_frame"]
    assert "parser exploded" in obs.errors[0][1]


def test_transport_failure_is_kept() -> None:
    exchange = Exchange(url=URL, request={}, stream=False, failure="ReadError: reset")
    obs = assemble(exchange)
    assert obs.errors == (("transport", "ReadError: reset"),)


# --- assembly: streamed -----------------------------------------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None, chunk_id: str = "c1") -> SSEEvent:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return SSEEvent(None, json.dumps({"id": chunk_id, "choices": [choice]}))


def _stream(*events: SSEEvent, **kw: Any) -> Exchange:
    return Exchange(url=URL, request={}, stream=True, status=200, events=events, **kw)


DONE = SSEEvent(None, "[DONE]")


def _tc(
    index: int | None, call_id: str | None = None, name: str | None = None, args: str = ""
) -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args}
    if name is not None:
        fn["name"] = name
    tc: dict[str, Any] = {"id": call_id, "function": fn}
    if index is not None:
        tc["index"] = index
    return {"tool_calls": [tc]}


def test_streamed_text_and_reasoning() -> None:
    obs = assemble(
        _stream(
            _chunk({"role": "assistant", "reasoning_content": "th"}),
            _chunk({"reasoning": "ink"}),
            _chunk({"content": "Hel"}, chunk_id="c1"),
            _chunk({"content": "lo"}, "stop"),
            DONE,
        )
    )
    assert (obs.text, obs.reasoning, obs.finish_reason) == ("Hello", "think", "stop")
    assert obs.chunk_ids == ("c1", "c1", "c1", "c1")
    assert obs.errors == ()
    assert len(obs.payloads) == 4


def test_streamed_parallel_calls_merge_by_index() -> None:
    obs = assemble(
        _stream(
            _chunk(_tc(0, "a", "f", '{"x"')),
            _chunk(_tc(1, "b", "g", "{")),
            _chunk(_tc(0, None, None, ": 1}")),
            _chunk(_tc(1, None, None, "}")),
            _chunk({}, "tool_calls"),
            DONE,
        )
    )
    assert obs.tool_calls == (
        ObservedCall(index=0, id="a", name="f", arguments='{"x": 1}'),
        ObservedCall(index=1, id="b", name="g", arguments="{}"),
    )
    assert obs.stream_indexes == (0, 1)


def test_duplicate_gapped_and_missing_indexes_stay_visible() -> None:
    obs = assemble(
        _stream(
            _chunk(_tc(0, "a", "f", "{}")),
            _chunk(_tc(0, "b", "g", "{}")),
            _chunk(_tc(2, "c", "h", "{}")),
            _chunk(_tc(None, "d", "k", "{")),
            _chunk(_tc(None, None, None, "}")),
            DONE,
        )
    )
    assert obs.stream_indexes == (0, 0, 2, None)
    assert [(c.index, c.id, c.arguments) for c in obs.tool_calls] == [
        (0, "a", "{}{}"),
        (2, "c", "{}"),
        (None, "d", "{}"),
    ]


def test_finish_reason_without_done_is_a_terminal() -> None:
    obs = assemble(_stream(_chunk({"content": "x"}, "length")))
    assert obs.errors == () and obs.finish_reason == "length"


def test_truncated_stream_has_no_terminal() -> None:
    obs = assemble(_stream(_chunk({"content": "x"}), failure="RemoteProtocolError: cut"))
    assert [k for k, _ in obs.errors] == ["transport", "no_terminal"]
    assert obs.text == "x"


def test_named_error_frame_keeps_raw_markup_once() -> None:
    raw = "<|tool_call_begin|>functions_get_weather_0<|tool_call_argument_begin|>"
    obs = assemble(_stream(_chunk({"content": ""}), SSEEvent("error", raw), DONE))
    assert obs.errors == (("error_frame", raw),)


def test_error_key_in_a_chunk_is_an_error_frame() -> None:
    obs = assemble(_stream(SSEEvent(None, '{"error": {"message": "boom"}}'), DONE))
    assert [k for k, _ in obs.errors] == ["error_frame"]
    assert obs.payloads == ({"error": {"message": "boom"}},)


def test_garbage_event_is_non_json_and_the_rest_still_assembles() -> None:
    obs = assemble(_stream(SSEEvent(None, "not json {"), _chunk({"content": "ok"}, "stop"), DONE))
    assert [k for k, _ in obs.errors] == ["non_json"]
    assert "not json {" in obs.errors[0][1]
    assert obs.text == "ok"


def test_stream_request_answered_with_json_is_read_as_a_body() -> None:
    exchange = Exchange(
        url=URL, request={}, stream=True, status=200, body=_completion({"content": "hi"})
    )
    obs = assemble(exchange)
    assert obs.text == "hi" and obs.errors == ()


def test_stream_request_answered_with_nothing_has_no_terminal() -> None:
    obs = assemble(Exchange(url=URL, request={}, stream=True, status=200))
    assert [k for k, _ in obs.errors] == ["no_terminal"]


def test_stream_refusal() -> None:
    exchange = Exchange(
        url=URL, request={}, stream=True, status=422, body='{"error": {"message": "no"}}'
    )
    obs = assemble(exchange)
    assert obs.refused and obs.errors == ()
