"""The Responses dialect: typed input items and tools, and assembly of answers and event streams."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import ResponseInputItemParam
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
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
from agentfuzz.model.observation import Exchange, ItemSighting, ObservedCall, SSEEvent
from agentfuzz.wire.dialects import assemble, build_request

URL = "http://127.0.0.1:1/v1/responses"
WEATHER = Tool(name="get_weather", description="Weather", parameters={"type": "object"})
LS = Tool(name="ls", namespace="fs", description="list")
CAT = Tool(name="cat", namespace="fs")
CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
NS_CALL = ToolCall(id="functions.fs__ls:0", name="ls", namespace="fs", arguments="{")
# Module-level: a validated value checks its ``Iterable`` fields lazily, through its adapter.
ITEMS = TypeAdapter(ResponseInputItemParam)
BODIES: dict[bool, TypeAdapter[Any]] = {
    True: TypeAdapter(ResponseCreateParamsStreaming),
    False: TypeAdapter(ResponseCreateParamsNonStreaming),
}


def _force(value: Any) -> Any:
    """Walk a validated TypedDict value; pydantic checks ``Iterable`` fields only when iterated."""
    if isinstance(value, dict):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return [_force(v) for v in value]


def _case(*items: Any, tools: tuple[Tool, ...] = (WEATHER,), **kw: Any) -> Case:
    return Case(history=History(tools=tools, items=items), api="responses", **kw)


def _body(case: Case) -> dict[str, Any]:
    path, body = build_request(case, "m")
    assert path == "/responses"
    _force(BODIES[body["stream"]].validate_python(body))
    for item in body["input"]:
        _force(ITEMS.validate_python(item))
    json.dumps(body)
    return body


CASES = [
    _case(UserMessage(text="hi")),
    _case(UserMessage(text=""), tools=()),
    _case(UserMessage(text="q"), AssistantMessage(text="a")),
    _case(
        UserMessage(text="q"),
        AssistantMessage(tool_calls=(CALL,)),
        ToolResult(call_id="call_1", output="sun"),
    ),
    _case(
        ReasoningItem(text="r", id="rs_x"),
        AssistantMessage(text="", reasoning="", tool_calls=(CALL, NS_CALL)),
        tools=(WEATHER, LS, CAT),
    ),
    _case(UserMessage(text="q"), ToolResult(call_id="", output="")),
    _case(UserMessage(text="q"), options=Options(include_tools=False, tool_choice="none")),
    _case(
        UserMessage(text="q"),
        options=Options(tool_choice="required", temperature=1.0, max_tokens=5),
    ),
    _case(UserMessage(text="q"), options=Options(tool_choice="get_weather", seed=1), stream=True),
    _case(
        UserMessage(text="\u2603"), tools=(LS, WEATHER, CAT), options=Options(tool_choice="auto")
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_bodies_are_accepted_by_the_sdk_param_types(case: Case) -> None:
    body = _body(case)
    assert body["model"] == "m" and body["stream"] is case.stream


def test_input_items_have_the_exact_shape() -> None:
    body = _body(
        _case(
            UserMessage(text="q"),
            ReasoningItem(text="plan"),
            AssistantMessage(text="calling", reasoning="why", tool_calls=(CALL, NS_CALL)),
            ToolResult(call_id="call_1", output="sun"),
        )
    )
    assert body["input"] == [
        {"type": "message", "role": "user", "content": "q"},
        {
            "type": "reasoning",
            "id": "rs_0001",
            "summary": [{"type": "summary_text", "text": "plan"}],
        },
        {
            "type": "reasoning",
            "id": "rs_0002",
            "summary": [{"type": "summary_text", "text": "why"}],
        },
        {"type": "message", "role": "assistant", "content": "calling"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "functions.fs__ls:0",
            "name": "ls",
            "arguments": "{",
            "namespace": "fs",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "sun"},
    ]
    again = _body(
        _case(
            UserMessage(text="q"), ReasoningItem(text="plan"), ReasoningItem(text="x", id="rs_mine")
        )
    )
    assert [i.get("id") for i in again["input"]] == [None, "rs_0001", "rs_mine"]


def test_system_and_developer_messages_are_sent_in_place() -> None:
    body = _body(
        _case(
            SystemMessage(text="be brief", role="developer"),
            UserMessage(text="q"),
            ReasoningItem(text="r"),
            SystemMessage(text="now"),
        )
    )
    assert body["input"] == [
        {"type": "message", "role": "developer", "content": "be brief"},
        {"type": "message", "role": "user", "content": "q"},
        {"type": "reasoning", "id": "rs_0002", "summary": [{"type": "summary_text", "text": "r"}]},
        {"type": "message", "role": "system", "content": "now"},
    ]


def test_namespaced_tools_are_grouped_in_place() -> None:
    body = _body(_case(UserMessage(text="q"), tools=(LS, WEATHER, CAT)))

    def fn(tool: Tool) -> dict[str, Any]:
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,
        }

    assert body["tools"] == [
        {"type": "namespace", "name": "fs", "description": "", "tools": [fn(LS), fn(CAT)]},
        fn(WEATHER),
    ]
    assert "tool_choice" not in body


def test_tool_choice_and_knobs() -> None:
    named = _body(_case(UserMessage(text="q"), options=Options(tool_choice="get_weather")))
    assert named["tool_choice"] == {"type": "function", "name": "get_weather"}
    mode = _body(_case(UserMessage(text="q"), options=Options(tool_choice="none", max_tokens=4)))
    assert mode["tool_choice"] == "none" and mode["max_output_tokens"] == 4
    assert "max_tokens" not in mode and "temperature" not in mode
    off = _body(
        _case(UserMessage(text="q"), options=Options(include_tools=False, tool_choice="auto"))
    )
    assert "tools" not in off and "tool_choice" not in off
    warm = _body(_case(UserMessage(text="q"), options=Options(temperature=0.2), stream=True))
    assert warm["temperature"] == 0.2 and warm["stream"] is True


# --- assembly: non-streamed ------------------------------------------------------------------


def _response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> str:
    body = {"id": "resp_1", "object": "response", "status": status, "error": None, "output": output}
    return json.dumps({**body, **extra})


def _answer(body: str, status: int = 200) -> Exchange:
    return Exchange(url=URL, request={}, stream=False, status=status, body=body)


MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "content": [
        {"type": "output_text", "text": "Hi", "annotations": []},
        {"type": "refusal", "refusal": "no"},
    ],
}
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "sum."}],
    "content": [{"type": "reasoning_text", "text": "raw"}],
}
FC = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "ls",
    "namespace": "fs",
    "arguments": "{}",
}


def test_plain_response() -> None:
    obs = assemble(_answer(_response([REASONING, MESSAGE, FC])))
    assert obs.api == "responses"
    assert (obs.text, obs.reasoning, obs.status) == ("Hi", "sum.raw", "completed")
    assert obs.tool_calls == (
        ObservedCall(
            index=2, id="fc_1", name="ls", arguments="{}", call_id="call_1", namespace="fs"
        ),
    )
    assert obs.errors == () and len(obs.payloads) == 1
    assert (obs.reasoning_id, obs.response_id) == ("rs_1", "resp_1")


def test_failed_response_and_odd_shapes() -> None:
    failed = assemble(_answer(_response([], "failed", error={"code": "server_error"})))
    assert [k for k, _ in failed.errors] == ["error_frame", "response_failed"]
    for body in ("[]", '{"output": {"a": 1}}', '{"output": [1, null, {"type": "function_call"}]}'):
        obs = assemble(_answer(body))
        assert obs.errors == () and obs.payloads == (json.loads(body),)
    assert assemble(_answer('{"output": [{"type": "function_call"}]}')).tool_calls == (
        ObservedCall(index=0, id=None, name=None, arguments=""),
    )


def test_refusal_html_and_5xx() -> None:
    assert assemble(_answer('{"error": {"message": "bad input"}}', 400)).refused
    html = assemble(_answer("<html>oops</html>"))
    assert [k for k, _ in html.errors] == ["non_json"] and "oops" in html.errors[0][1]
    crash = assemble(_answer("Internal Server Error", 503))
    assert crash.errors == (("http_status", "503: Internal Server Error"),)


# --- assembly: streamed -----------------------------------------------------------------------


def _ev(kind: str, **fields: Any) -> SSEEvent:
    return SSEEvent(kind, json.dumps({"type": kind, **fields}))


def _stream(*events: SSEEvent, failure: str | None = None) -> Exchange:
    return Exchange(url=URL, request={}, stream=True, status=200, events=events, failure=failure)


def _fc(item_id: str, call_id: str, args: str = "") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": "ls",
        "arguments": args,
    }


def _completed(
    output: list[dict[str, Any]], kind: str = "response.completed", status: str = "completed"
) -> SSEEvent:
    return _ev(kind, response={"id": "resp_1", "status": status, "output": output})


def _full_stream(final_output: list[dict[str, Any]]) -> Exchange:
    return _stream(
        _ev("response.created", response={"id": "resp_1", "status": "in_progress", "output": []}),
        _ev("response.in_progress", response={"id": "resp_1", "status": "in_progress"}),
        _ev(
            "response.output_item.added",
            output_index=0,
            item={"type": "reasoning", "id": "rs_1", "summary": []},
        ),
        _ev("response.reasoning_summary_text.delta", output_index=0, summary_index=0, delta="Pl"),
        _ev("response.reasoning_text.delta", output_index=0, content_index=0, delta="raw"),
        _ev("response.reasoning_summary_text.done", output_index=0, summary_index=0, text="Plan"),
        _ev("response.output_item.done", output_index=0, item={"type": "reasoning", "id": "rs_1"}),
        _ev("response.output_item.added", output_index=1, item={"type": "message", "id": "msg_1"}),
        _ev("response.output_text.delta", output_index=1, content_index=0, delta="He"),
        _ev("response.output_text.delta", output_index=1, content_index=0, delta="llo"),
        _ev("response.output_text.done", output_index=1, content_index=0, text="Hello"),
        _ev("response.output_item.added", output_index=2, item=_fc("fc_a", "call_a")),
        _ev("response.output_item.added", output_index=3, item=_fc("fc_b", "call_b")),
        _ev("response.function_call_arguments.delta", output_index=2, item_id="fc_a", delta='{"p"'),
        _ev("response.function_call_arguments.delta", output_index=3, item_id="fc_b", delta="{"),
        _ev("response.function_call_arguments.delta", output_index=2, item_id="fc_a", delta=":1}"),
        _ev(
            "response.function_call_arguments.done", output_index=3, item_id="fc_b", arguments="{}"
        ),
        _ev("response.output_item.done", output_index=2, item=_fc("fc_a", "call_a", '{"p":1}')),
        _ev("response.output_item.done", output_index=3, item=_fc("fc_b", "call_b", "{}")),
        _ev("response.some_future_event", output_index=9),
        _completed(final_output),
    )


def test_full_stream_assembles_text_reasoning_calls_and_sightings() -> None:
    final = [
        {"type": "reasoning", "id": "rs_1"},
        {"type": "message", "id": "msg_1"},
        _fc("fc_a", "call_a"),
        _fc("fc_b", "call_b"),
    ]
    obs = assemble(_full_stream(final))
    assert obs.errors == ()
    assert (obs.text, obs.reasoning, obs.status) == ("Hello", "Planraw", "completed")
    assert obs.tool_calls == (
        ObservedCall(index=2, id="fc_a", name="ls", arguments='{"p":1}', call_id="call_a"),
        ObservedCall(index=3, id="fc_b", name="ls", arguments="{}", call_id="call_b"),
    )
    assert len(obs.payloads) == 21
    assert (obs.reasoning_id, obs.response_id) == ("rs_1", "resp_1")
    phases = [(s.phase, s.output_index) for s in obs.sightings]
    assert phases == [
        ("added", 0),
        ("done", 0),
        ("added", 1),
        ("added", 2),
        ("added", 3),
        ("done", 2),
        ("done", 3),
        ("completed", 0),
        ("completed", 1),
        ("completed", 2),
        ("completed", 3),
    ]


def test_reminted_identity_is_visible_in_sightings() -> None:
    obs = assemble(
        _full_stream([{"type": "function_call", "id": "fc_new", "call_id": "chatcmpl-tool-9"}])
    )
    assert obs.sightings[3] == ItemSighting("added", 2, "function_call", "fc_a", "call_a")
    assert obs.sightings[-1] == ItemSighting(
        "completed", 0, "function_call", "fc_new", "chatcmpl-tool-9"
    )
    # Calls keep the streamed identity: the final one is evidence, not a replacement.
    assert obs.tool_calls[0].call_id == "call_a"


def test_deltas_without_added_item_still_make_a_call() -> None:
    obs = assemble(
        _stream(
            _ev(
                "response.function_call_arguments.delta", output_index=0, item_id="fc_z", delta="{"
            ),
            _ev(
                "response.function_call_arguments.delta", output_index=0, item_id="fc_z", delta="}"
            ),
            _completed([], "response.incomplete", "incomplete"),
        )
    )
    assert obs.tool_calls == (ObservedCall(index=0, id="fc_z", name=None, arguments="{}"),)
    assert obs.status == "incomplete" and obs.errors == ()


def test_failed_stream() -> None:
    obs = assemble(
        _stream(_ev("response.created", response={}), _completed([], "response.failed", "failed"))
    )
    assert [k for k, _ in obs.errors] == ["response_failed"]
    assert obs.status == "failed"


def test_error_event_truncation_and_garbage() -> None:
    obs = assemble(
        _stream(
            _ev("response.output_text.delta", output_index=0, content_index=0, delta="x"),
            _ev("error", code="server_error", message="<|tool_call_begin|>"),
            SSEEvent(None, "<html>"),
            SSEEvent(None, "[DONE]"),
            failure="RemoteProtocolError: incomplete chunked read",
        )
    )
    assert [k for k, _ in obs.errors] == ["transport", "error_frame", "non_json", "no_terminal"]
    assert "<|tool_call_begin|>" in obs.errors[1][1]
    assert obs.text == "x"


def test_unnamed_type_error_event_is_an_error_frame() -> None:
    obs = assemble(_stream(SSEEvent(None, '{"type": "error", "message": "m"}'), _completed([])))
    assert [k for k, _ in obs.errors] == ["error_frame"]


def test_the_reasoning_id_is_the_final_answers_word_on_it() -> None:
    # Streamed as rs_1, completed as rs_final: a session echoes what the final answer said.
    obs = assemble(_full_stream([{"type": "reasoning", "id": "rs_final"}]))
    assert obs.reasoning_id == "rs_final"
    assert assemble(_answer(_response([MESSAGE]))).reasoning_id is None


def test_the_response_id_is_the_terminal_events_word_on_it() -> None:
    created = _ev("response.created", response={"id": "resp_early", "status": "in_progress"})
    final = _ev("response.completed", response={"id": "resp_final", "status": "completed"})
    assert assemble(_stream(created, final)).response_id == "resp_final"
    # A stream cut before its end still names the answer it began.
    assert assemble(_stream(created)).response_id == "resp_early"
    assert assemble(_answer(json.dumps({"status": "completed", "output": []}))).response_id is None
