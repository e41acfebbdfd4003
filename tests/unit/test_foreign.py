"""The dimensions drawn onto the history. Tools that are not functions (custom, hosted) and
strict functions: sent in each api's wire form, read back from captured bodies, reduced away,
and never mistaken for an empty or wrong answer when a server calls one. A message long enough
to reach the context limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, find, settings
from starlette.testclient import TestClient

from agentfuzz.model.history import Api, Case, ForeignItem, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, SSEEvent
from agentfuzz.oracles import check
from agentfuzz.oracles._common import Forced, forced
from agentfuzz.reduce.reduction import candidates, reduce_case
from agentfuzz.reference import create_app
from agentfuzz.reference.intake import CONTEXT_CHARS
from agentfuzz.request.profiles import load_profile
from agentfuzz.request.surface import FILLER, used
from agentfuzz.strategies import cases
from agentfuzz.strategies._foreign import CUSTOM_NAME, strict_schema
from agentfuzz.wire.dialects import assemble, build_request, parse_request

DEFAULT = load_profile("default")
FIND = settings(database=None, max_examples=3000, suppress_health_check=list(HealthCheck))
WEATHER = Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def _found(api: Api, row: str) -> Case:
    return find(cases(DEFAULT, api, False), lambda c: row in used(c), settings=FIND)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_custom_tool_is_reached_and_shrinks_to_a_bare_declaration(api: Api) -> None:
    case = _found(api, "custom_tools")
    assert used(case) == ("custom_tools",)
    (declared,) = case.history.foreign_tools
    assert declared["type"] == "custom" and "format" not in declared.get("custom", declared)
    assert not any(isinstance(i, ForeignItem) for i in case.history.items)
    _, body = build_request(case, "m")
    # After the functions, in the api's own nesting.
    assert body["tools"][-1] == declared and len(body["tools"]) == len(case.history.tools) + 1
    name = declared["custom"]["name"] if api == "chat" else declared["name"]
    assert name == CUSTOM_NAME


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_past_custom_call_ends_the_history_and_comes_back_from_its_body(api: Api) -> None:
    case = _found(api, "custom_tools:history")
    _, body = build_request(case, "m")
    entries = body["messages" if api == "chat" else "input"]
    call, output = entries[-2:]
    if api == "chat":
        assert call["tool_calls"][0]["type"] == "custom"
        assert output == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"]} | {
            "content": "Done."
        }
    else:
        assert (call["type"], output["type"]) == ("custom_tool_call", "custom_tool_call_output")
        assert call["call_id"] == output["call_id"]
    assert build_request(parse_request(body, api), "m")[1] == body


def test_a_hosted_tool_is_reached_on_responses_only_and_shrinks_to_web_search_preview() -> None:
    case = _found("responses", "hosted_tools:web_search_preview")
    assert case.history.foreign_tools == ({"type": "web_search_preview"},)
    assert used(case) == ("hosted_tools:web_search_preview",)
    past = _found("responses", "hosted_tools:history")
    (item,) = [i for i in past.history.items if isinstance(i, ForeignItem)]
    assert item.body["type"] == "web_search_call" and item == past.history.items[-1]
    chat = [used(c) for c in _some(cases(DEFAULT, "chat", False))]
    assert not any(r.startswith("hosted_tools") for rows in chat for r in rows)


def _some(strategy: Any, n: int = 300) -> list[Case]:
    drawn: list[Case] = []
    find(
        strategy,
        lambda c: drawn.append(c) or len(drawn) >= n,  # type: ignore[func-returns-value]
        settings=settings(database=None, max_examples=n, suppress_health_check=list(HealthCheck)),
    )
    return drawn


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_strict_function_shrinks_to_its_schema_as_it_was(api: Api) -> None:
    case = _found(api, "strict_tools")
    assert used(case) == ("strict_tools",)
    (tool,) = case.history.tools
    assert tool.strict is True
    _, body = build_request(case, "m")
    spec = body["tools"][0]["function"] if api == "chat" else body["tools"][0]
    assert spec["strict"] is True and spec["parameters"] == tool.parameters
    assert parse_request(body, api).history.tools == (tool,)
    # A request that leaves its tools out sent no strict tool: the row does not count it.
    omitted = case.model_copy(
        update={"options": case.options.model_copy(update={"include_tools": False})}
    )
    assert "strict_tools" not in used(omitted)


def test_strict_schema_requires_every_property_all_the_way_down() -> None:
    schema = {
        "type": "object",
        "properties": {
            "properties": {"type": "string", "enum": [{"type": "object"}]},
            "where": {"type": "object", "properties": {"city": {"type": "string"}}},
            "many": {"type": "array", "items": {"$ref": "#/$defs/spot"}},
        },
        "$defs": {"spot": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }
    strict = strict_schema(schema)
    assert strict["required"] == ["properties", "where", "many"]
    assert strict["additionalProperties"] is False
    props = strict["properties"]
    # A property named "properties" is a property; an enum's values are values.
    assert props["properties"] == {"type": "string", "enum": [{"type": "object"}]}
    assert props["where"]["required"] == ["city"]
    assert props["where"]["additionalProperties"] is False
    assert strict["$defs"]["spot"]["required"] == ["x"]


CODEX_LIKE = {
    "model": "m",
    "input": [
        {"type": "message", "role": "user", "content": "fix the typo"},
        {
            "type": "local_shell_call",
            "id": "lsh_1",
            "call_id": "call_1",
            "status": "completed",
            "action": {"type": "exec", "command": ["cat", "a.txt"], "env": {}},
        },
        {"type": "local_shell_call_output", "id": "call_1", "output": "teh"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "…"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done."},
    ],
    "tools": [
        {"type": "function", "name": "update_plan", "parameters": {"type": "object"}},
        {"type": "local_shell"},
        {"type": "custom", "name": "apply_patch", "format": {"type": "text"}},
    ],
    "tool_choice": "auto",
    "stream": True,
}


def test_a_captured_body_with_hosted_and_custom_tools_is_kept_as_it_came() -> None:
    case = parse_request(CODEX_LIKE)
    assert [t.name for t in case.history.tools] == ["update_plan"]
    assert case.history.foreign_tools == tuple(CODEX_LIKE["tools"][1:])  # type: ignore[index]
    assert [type(i).__name__ for i in case.history.items] == ["UserMessage"] + ["ForeignItem"] * 4
    assert set(used(case)) >= {"hosted_tools:local_shell", "custom_tools", "hosted_tools:history"}
    rebuilt = build_request(case, "m")[1]
    assert {k: v for k, v in rebuilt.items() if k != "tools"} == {
        k: v for k, v in CODEX_LIKE.items() if k != "tools"
    }
    assert [t["type"] for t in rebuilt["tools"]] == ["function", "local_shell", "custom"]


def test_a_chat_assistant_message_with_a_custom_call_is_kept_whole() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "custom", "custom": {"name": "x", "input": "y"}}],
    }
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, message]}
    case = parse_request(body)
    assert case.history.items[-1] == ForeignItem(body=message)
    assert build_request(case, "m")[1]["messages"][-1] == message


def test_reduction_drops_a_foreign_tool_and_keeps_a_history_that_ends_in_one() -> None:
    foreign = ({"type": "web_search_preview"}, {"type": "image_generation"})
    ends = ForeignItem(body={"type": "web_search_call", "id": "ws_1", "status": "completed"})
    history = History(tools=(WEATHER,), items=(UserMessage(text="hi"), ends), foreign_tools=foreign)
    case = Case(history=history, api="responses")
    smaller = list(candidates(case))
    assert any(c.history.foreign_tools == foreign[1:] for c in smaller)
    # Only the image tool matters: reduction keeps it and the item ending the history.
    kept = reduce_case(case, lambda c: {"type": "image_generation"} in c.history.foreign_tools)
    assert kept.history.foreign_tools == foreign[1:]
    assert kept.history.items[-1] == ends or kept.history.items == (UserMessage(text=""),)


_DONE = SSEEvent(None, "[DONE]")  # a chat stream's last event


def _exchange(api: Api, body: Any = None, events: tuple[SSEEvent, ...] = ()) -> Exchange:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    return Exchange(
        url=f"http://127.0.0.1:1{path}",
        request={},
        stream=bool(events),
        status=200,
        content_type="text/event-stream" if events else "application/json",
        body="" if body is None else json.dumps(body),
        events=events,
    )


_CUSTOM_CALL = {"id": "c1", "type": "custom", "custom": {"name": CUSTOM_NAME, "input": "*** x"}}
_CHAT = {
    "id": "x",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [_CUSTOM_CALL]},
        }
    ],
}
_CHUNK = {
    "id": "x",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "delta": {"tool_calls": [_CUSTOM_CALL | {"index": 0}]}}],
}
_END = {
    "id": "x",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
}
_ITEM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "c1", "name": "x", "input": "y"}
_RESPONSE = {"id": "resp_1", "object": "response", "status": "completed", "output": [_ITEM]}


def _events(*payloads: dict[str, Any]) -> tuple[SSEEvent, ...]:
    return tuple(SSEEvent(p.get("type"), json.dumps(p)) for p in payloads)


@pytest.mark.parametrize(
    ("api", "exchange"),
    [
        ("chat", _exchange("chat", _CHAT)),
        (
            "chat",
            _exchange(
                "chat",
                events=(
                    SSEEvent(None, json.dumps(_CHUNK)),
                    SSEEvent(None, json.dumps(_END)),
                    _DONE,
                ),
            ),
        ),
        ("responses", _exchange("responses", _RESPONSE)),
        (
            "responses",
            _exchange(
                "responses",
                events=_events(
                    {"type": "response.output_item.added", "output_index": 0, "item": _ITEM},
                    {"type": "response.output_item.done", "output_index": 0, "item": _ITEM},
                    {"type": "response.completed", "response": _RESPONSE},
                ),
            ),
        ),
    ],
)
def test_a_call_to_a_custom_tool_is_an_answer_not_an_empty_or_nameless_call(
    api: Api, exchange: Exchange
) -> None:
    obs = assemble(exchange)
    assert obs.tool_calls == () and obs.others == ("custom" if api == "chat" else _ITEM["type"],)
    declared = _custom_declared(api)
    case = Case(
        history=History(
            tools=(WEATHER,), items=(UserMessage(text="patch it"),), foreign_tools=(declared,)
        ),
        options=Options(tool_choice="required"),
        api=api,
    )
    # The fixtures are not whole SDK Responses (no created_at…): wire_schema only for chat.
    skipped = () if api == "chat" else ("wire_schema",)
    assert check(case, obs, skip=skipped) == []


def _custom_declared(api: Api) -> dict[str, Any]:
    if api == "chat":
        return {"type": "custom", "custom": {"name": CUSTOM_NAME}}
    return {"type": "custom", "name": CUSTOM_NAME}


def test_with_a_foreign_tool_beside_the_functions_required_is_not_judged_but_a_name_is() -> None:
    history = History(
        tools=(WEATHER,), items=(UserMessage(text="hi"),), foreign_tools=(_custom_declared("chat"),)
    )
    required = Case(history=history, options=Options(tool_choice="required"))
    named = Case(history=history, options=Options(tool_choice="get_weather"))
    none = Case(history=history, options=Options(tool_choice="none"))
    assert forced(required) is None
    assert forced(named) == Forced("named", "get_weather")
    assert forced(none) == Forced("none")
    assert forced(required.model_copy(update={"history": History(tools=(WEATHER,))})) == Forced(
        "required"
    )


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_reference_server_refuses_them_with_a_json_400(api: Api) -> None:
    client = TestClient(create_app("fixed"))
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    foreign = [_custom_declared(api)]
    if api == "responses":
        foreign.append({"type": "web_search_preview"})
    history = History(tools=(WEATHER,), items=(UserMessage(text="hi"),))
    for declared in foreign:
        case = Case(history=history.model_copy(update={"foreign_tools": (declared,)}), api=api)
        answer = client.post(path, json=build_request(case, "m")[1])
        assert answer.status_code == 400 and answer.json()["error"]["message"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_long_text_shrinks_to_half_the_context_before_the_request(api: Api) -> None:
    case = _found(api, "long_text")
    assert used(case) == ("long_text",)
    (message,) = [i for i in case.history.items if isinstance(i, UserMessage)]
    half = DEFAULT.context_chars // 2
    assert message.text.startswith(FILLER) and len(message.text) > half
    # The request itself stays last, where the model reads it.
    assert not message.text[half:].startswith(FILLER[:10])


@pytest.mark.parametrize(("share", "status"), [(0.9, 200), (1.1, 400)])
def test_the_reference_server_takes_what_its_context_holds_and_refuses_the_rest(
    share: float, status: int
) -> None:
    client = TestClient(create_app("fixed"))
    text = (FILLER * 2000)[: int(CONTEXT_CHARS * share)]
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    answer = client.post("/v1/chat/completions", json=body)
    assert answer.status_code == status
    if status == 400:
        assert "context holds" in answer.json()["error"]["message"]


def test_a_foreign_tool_counts_only_when_the_request_sent_its_tools() -> None:
    history = History(
        tools=(WEATHER,), items=(UserMessage(text="hi"),), foreign_tools=(_custom_declared("chat"),)
    )
    assert used(Case(history=history)) == ("custom_tools",)
    omitted = Case(history=history, options=Options(include_tools=False))
    assert "tools" not in build_request(omitted, "m")[1]
    assert used(omitted) == ("tools_omitted",)
    emptied = Case(history=history, options=Options(fields={"tools": []}))
    assert "custom_tools" not in used(emptied)


def test_legacy_functions_shrink_to_the_tools_declared_again_and_come_back() -> None:
    case = _found("chat", "legacy_functions")
    assert used(case) == ("legacy_functions",)
    assert case.options.fields == {
        "functions": [
            {"name": t.flat_name, "description": t.description, "parameters": t.parameters}
            for t in case.history.tools
        ]
    }
    past = _found("chat", "legacy_functions:history")
    _, body = build_request(past, "m")
    call, result = body["messages"][-2:]
    assert call["function_call"]["name"] == result["name"] and result["role"] == "function"
    assert build_request(parse_request(body), "m")[1] == body
    client = TestClient(create_app("fixed"))
    refused = client.post("/v1/chat/completions", json=body)
    assert refused.status_code == 400 and refused.json()["error"]["message"]


def test_a_legacy_function_call_in_an_answer_is_an_answer() -> None:
    legacy = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": ""}}
    body = _CHAT | {"choices": [{"index": 0, "finish_reason": "function_call", "message": legacy}]}
    chunk = _CHUNK | {"choices": [{"index": 0, "delta": {"function_call": {"name": "f"}}}]}
    streamed = (SSEEvent(None, json.dumps(chunk)), SSEEvent(None, json.dumps(_END)), _DONE)
    for exchange in (_exchange("chat", body), _exchange("chat", events=streamed)):
        obs = assemble(exchange)
        assert obs.tool_calls == () and obs.others == ("function_call",)
        case = Case(history=History(tools=(WEATHER,), items=(UserMessage(text="hi"),)))
        assert check(case, obs, only=["empty_turn"]) == []
