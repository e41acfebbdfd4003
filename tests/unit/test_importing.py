"""Importing captured requests: every body agentfuzz builds round-trips, each input format is
recognized, and any JSON value either imports or fails with one line naming where."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    Provenance,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies import cases
from agentfuzz.wire.dialects import (
    InputError,
    build_request,
    parse_input,
    parse_jsonl,
    parse_request,
    parse_text,
)

PROFILE = Profile()
ROUND_TRIP = settings(
    max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
WEATHER = Tool(name="get_weather", description="Weather", parameters={"type": "object"})
CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')


def _body(case: Case) -> dict[str, Any]:
    return build_request(case, "m")[1]


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
def test_every_body_agentfuzz_builds_comes_back_unchanged(api: Any, stream: bool) -> None:
    @ROUND_TRIP
    @given(cases(PROFILE, api, stream))
    def check(case: Case) -> None:
        body = _body(case)
        parsed = parse_request(json.loads(json.dumps(body)))
        assert parsed.api == api and parsed.stream is stream
        assert _body(parsed) == body
        # The Case may differ from the one that built the body (chat folds reasoning; ids of
        # Responses reasoning become explicit), but importing is a fixed point after one step.
        assert parse_request(_body(parsed)) == parsed

    check()


def test_responses_case_comes_back_when_reasoning_ids_are_explicit() -> None:
    ns_call = ToolCall(id="c2", name="ls", namespace="fs", arguments="{", item_id="fc_2")
    case = Case(
        history=History(
            tools=(WEATHER, Tool(name="ls", namespace="fs", description="list")),
            items=(
                SystemMessage(text="be brief", role="developer"),
                UserMessage(text="q"),
                ReasoningItem(text="plan", id="rs_1"),
                AssistantMessage(text="calling", tool_calls=(CALL, ns_call)),
                ToolResult(call_id="call_1", output="sun"),
            ),
        ),
        options=Options(tool_choice="fs__ls", temperature=0.5, max_tokens=9),
        api="responses",
        stream=True,
    )
    assert parse_request(_body(case)) == case


def test_chat_case_comes_back_with_system_prompts_and_flat_names() -> None:
    flat = ToolCall(id="functions.fs__ls:1", name="fs__ls", arguments="not json")
    case = Case(
        history=History(
            tools=(WEATHER, Tool(name="fs__ls")),
            items=(
                SystemMessage(text="sys"),
                UserMessage(text="q"),
                AssistantMessage(reasoning="why", tool_calls=(CALL, flat)),
                ToolResult(call_id="call_1", output=""),
            ),
        ),
        options=Options(tool_choice="required", seed=3, temperature=0.0, max_tokens=5),
    )
    assert parse_request(_body(case)) == case


def test_chat_spellings_other_clients_use() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "a"}, {"text": "b"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": None,
                "reasoning": "r",
                "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}],
            },
            {"role": "tool", "tool_call_id": None, "content": [{"type": "text", "text": "ok"}]},
        ],
        "tools": [{"type": "function", "name": "f"}],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "max_completion_tokens": 7,
        "temperature": 1,
    }
    case = parse_request(body)
    assert case.history.items == (
        SystemMessage(text="a\nb", role="developer"),
        UserMessage(text="hi"),
        AssistantMessage(
            reasoning="r", tool_calls=(ToolCall(id="", name="f", arguments='{"x": 1}'),)
        ),
        ToolResult(call_id="", output="ok"),
    )
    assert case.history.tools == (Tool(name="f"),)
    # A limit under another spelling travels as it came.
    assert case.options == Options(
        tool_choice="f", temperature=1.0, fields={"max_completion_tokens": 7}, forms=("parts",)
    )
    assert case.stream is False


def test_responses_spellings_other_clients_use() -> None:
    body = {
        "instructions": "sys",
        "input": [
            {"role": "user", "content": "q"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "s"}],
                "content": [{"type": "reasoning_text", "text": "c"}],
                "encrypted_content": "xyz",
            },
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]},
        ],
        "tools": [
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "f"}]}
        ],
        "tool_choice": {"type": "function", "name": "ns__f"},
        "max_output_tokens": 3,
        "stream": True,
    }
    with pytest.raises(InputError, match=r"^input\[3\]\.content\[0\]\.text: expected a string"):
        parse_request(body)
    body["input"][3]["content"] = [{"type": "output_text", "text": "done"}]  # type: ignore[index]
    case = parse_request(body)
    assert case.history.items == (
        UserMessage(text="q"),
        ReasoningItem(text="s\n\nc"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="f", arguments="{"),)),
        AssistantMessage(text="done"),
    )
    assert case.history.tools == (Tool(name="f", namespace="ns"),)
    assert case.options == Options(
        tool_choice="ns__f", max_tokens=3, fields={"instructions": "sys"}, forms=("parts",)
    )
    assert parse_request({"input": "just text"}).history.items == (UserMessage(text="just text"),)


def test_a_body_without_tools_leaves_them_out() -> None:
    case = parse_request({"messages": [{"role": "user", "content": "q"}], "tool_choice": "none"})
    assert case.history.tools == ()
    # The tool_choice is kept as it came: a tool_choice with no tools is a request of its own.
    assert case.options == Options(include_tools=False, fields={"tool_choice": "none"})


def test_api_given_overrides_detection() -> None:
    body = {"messages": [{"role": "user", "content": "q"}], "input": "other"}
    assert parse_request(body, api="chat").history.items == (UserMessage(text="q"),)
    assert parse_request(body, api="responses").history.items == (UserMessage(text="other"),)
    with pytest.raises(InputError, match="either 'messages'"):
        parse_request(body)


def test_repro_json_uses_its_case_or_else_its_request() -> None:
    case = Case(
        history=History(tools=(WEATHER,), items=(UserMessage(text="q"),)),
        api="responses",
        session=Provenance(turn=2),
    )
    doc = {
        "url": "http://127.0.0.1:8000/v1/responses",
        "request": _body(case),
        "oracle": "empty_turn",
        "case": case.model_dump(mode="json"),
    }
    assert parse_input(doc) == [case]
    doc["case"] = {"history": "from another version"}
    (fallback,) = parse_input(doc)
    assert fallback == case.model_copy(update={"session": None})
    # The url names the api even for an ambiguous request body.
    doc["request"] = {"messages": [], "input": [{"role": "user", "content": "q"}]}
    assert parse_input(doc)[0].api == "responses"
    doc["request"] = ["not", "a", "body"]
    with pytest.raises(InputError, match=r"^request: expected an object, got an array$"):
        parse_input(doc)


def test_bare_chat_messages_declare_what_they_call() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "mcp__x__y", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "mcp__x__y", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
    ]  # fmt: skip
    (case,) = parse_input(messages)
    assert case.api == "chat"
    assert case.history.tools == (Tool(name="mcp__x__y", parameters={"type": "object"}),)
    assert case.options.include_tools
    assert _body(case)["tools"][0]["function"]["parameters"] == {"type": "object"}
    (plain,) = parse_input(messages[:2])
    assert plain.history.tools == () and not plain.options.include_tools


def test_bare_responses_items_mix_role_messages_and_typed_items() -> None:
    items = [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "c", "name": "ls", "namespace": "fs", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "c", "output": [{"text": "x"}]},
    ]
    (case,) = parse_input(items)
    assert case.api == "responses"
    assert case.history.calls == (
        ToolCall(id="c", name="ls", namespace="fs", arguments="", item_id="fc_1"),
    )
    assert case.history.tools == (Tool(name="ls", namespace="fs", parameters={"type": "object"}),)
    assert case.history.items[-1] == ToolResult(call_id="c", output="x")


def test_a_session_as_an_array_of_bodies_and_as_jsonl() -> None:
    first = {"messages": [{"role": "user", "content": "a"}]}
    second = {"input": [{"role": "user", "content": "b"}], "stream": True}
    assert [c.api for c in parse_input([first, second])] == ["chat", "responses"]
    text = "\n" + json.dumps(first) + "\n\n   \n" + json.dumps(second) + "\n"
    jsonl = parse_jsonl(text)
    assert [(c.api, c.stream) for c in jsonl] == [("chat", False), ("responses", True)]
    assert parse_text(text) == jsonl
    assert parse_text(json.dumps(first)) == parse_input(first)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("text", "not a request body, a messages array, an input array, a repro.json, a"),
        ({"model": "m"}, "not a request body, a messages array"),
        ([], "an empty array: nothing to import"),
        ([1, 2], "not a request body, a messages array"),
        ({"messages": "hi"}, "messages: expected an array, got a string"),
        (
            {"messages": [{"role": "user", "content": "q"}, {}, {"role": "robot"}]},
            "messages[1]: unknown role None",
        ),
        ({"messages": [{"role": "robot", "content": "q"}]}, "messages[0]: unknown role 'robot'"),
        (
            {"messages": [{"role": "user", "content": None}]},
            "messages[0].content: expected an array, got null",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image_url"}]},
                    {"role": "user", "content": "q"},
                ]
            },
            "messages[0].content[0]: unsupported content part 'image_url'",
        ),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]},
            "messages[0].tool_calls[0].function.name: expected a string, got null",
        ),
        (
            {"messages": [{"role": "assistant", "tool_calls": {}}]},
            "messages[0].tool_calls: expected an array, got an object",
        ),
        ({"input": 3}, "input: expected an array, got a number"),
        ({"input": [{"id": "x"}]}, "input[0]: an input item needs a type"),
        (
            {"input": [{"type": "reasoning", "summary": 5}]},
            "input[0].summary: expected an array, got a number",
        ),
        (
            {"input": "q", "tools": [{"type": "namespace", "name": "n", "tools": [{"type": 1}]}]},
            "tools[0].tools[0]: unsupported tool type 1 inside a namespace",
        ),
        (
            {"input": "q", "tools": [{"type": "namespace", "name": "n"}]},
            "tools[0].tools: expected an array, got null",
        ),
        (
            {"input": "q", "tools": [{"type": "function", "name": "f", "parameters": []}]},
            "tools[0].parameters: expected an object",
        ),
        ({"input": "q", "stream": "yes"}, "stream: expected a boolean, got a string"),
        ({"input": "q", "temperature": "hot"}, "temperature: expected a number, got a string"),
        ({"input": "q", "temperature": 10**400}, "temperature: number out of range"),
        ({"messages": [], "seed": 1.5}, "seed: expected an integer, got a number"),
        (
            {"input": "q", "max_output_tokens": True},
            "max_output_tokens: expected an integer, got a boolean",
        ),
        ([{"messages": []}, {"input": 1}], "[1]: input: expected an array, got a number"),
    ],
)
def test_errors_say_what_and_where_in_one_line(data: Any, message: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_input(data)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_jsonl_errors_name_the_line() -> None:
    good = json.dumps({"messages": [{"role": "user", "content": "a"}]})
    with pytest.raises(InputError, match=r"^line 3: not JSON$"):
        parse_jsonl(f"{good}\n\n{{oops\n")
    with pytest.raises(
        InputError, match=r"^line 2: request body: expected an object, got an array$"
    ):
        parse_text(f"{good}\n[1]\n")
    with pytest.raises(InputError, match=r"^line 1: messages\[0\]: unknown role 'x'$"):
        parse_jsonl('{"messages": [{"role": "x"}]}\n' + good)
    with pytest.raises(InputError, match="the input is empty"):
        parse_text(" \n\n")


_KEYS = (
    "messages", "input", "request", "oracle", "case", "url", "api", "role", "type", "content",
    "text", "tool_calls", "function", "name", "arguments", "id", "call_id", "output", "tools",
    "tool_choice", "summary", "namespace", "parameters", "stream", "temperature", "seed",
    "max_tokens", "reasoning_content", "instructions", "tool_call_id", "description",
)  # fmt: skip
_VALUES = (
    "user", "assistant", "system", "developer", "tool", "function", "message", "reasoning",
    "function_call", "function_call_output", "namespace", "text", "input_text", "auto", "none",
    "chat", "responses",
)  # fmt: skip
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | st.sampled_from(_VALUES)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=3), inner, max_size=5)
    ),
    max_leaves=30,
)
# Bodies close to valid, each field usually right and sometimes any JSON at all, so examples
# reach every branch of importing rather than stopping at the first check.
_STR = st.text(max_size=5) | st.sampled_from(_VALUES)


def _mostly(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(*[right] * 6, _SCALARS, st.lists(_SCALARS, max_size=2))


def _obj(need: str = "", **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects of ``fields``, each usually right; ``need`` names the one always present."""
    optional = {k: _mostly(v) for k, v in fields.items() if k != need}
    return st.fixed_dictionaries({need: fields[need]} if need else {}, optional=optional)


_PART = _obj("text", type=st.sampled_from(("text", "input_text", "image_url")), text=_STR)
_CONTENT = _STR | _STR | st.lists(_PART, max_size=2)
_CALL = _obj(id=_STR, type=st.just("function"), function=_obj(name=_STR, arguments=_STR))
_MESSAGE = _obj(
    "role",
    role=st.sampled_from(("user", "system", "developer", "assistant", "tool", "robot")),
    content=_CONTENT | st.none(),
    tool_calls=st.lists(_CALL, max_size=2),
    tool_call_id=_STR,
    reasoning_content=_STR,
)
_ITEM = _obj(
    "type",
    type=st.sampled_from((*_VALUES[5:10], "web_search_call")),
    role=st.sampled_from(("user", "assistant", "developer")),
    content=_CONTENT,
    output=_CONTENT,
    summary=st.lists(_PART, max_size=2),
    call_id=_STR,
    id=_STR,
    name=_STR,
    namespace=_STR,
    arguments=_STR,
)
_FUNCTION = _obj(type=st.just("function"), name=_STR, parameters=st.just({"type": "object"}))
_TOOL = _FUNCTION | _obj(type=st.just("namespace"), name=_STR, tools=st.lists(_FUNCTION))
_KNOBS = _obj(
    tools=st.lists(_TOOL, max_size=2),
    tool_choice=st.sampled_from(("auto", "none")) | _obj(type=st.just("function"), name=_STR),
    stream=st.booleans(),
    temperature=st.floats(0, 2),
    seed=st.integers(),
    max_tokens=st.integers(1, 9),
    instructions=_STR,
)
_BODY = st.builds(
    lambda key, value, knobs: {key: value, **knobs},
    st.sampled_from(("messages", "input")),
    st.lists(_MESSAGE, max_size=4) | st.lists(_ITEM, max_size=4) | _STR,
    _KNOBS,
)
_ANY_JSON = _JSON | _BODY | st.lists(_MESSAGE, max_size=3) | st.lists(_ITEM, max_size=3)


@settings(max_examples=500, database=None, deadline=None)
@given(_ANY_JSON)
def test_any_json_value_imports_or_fails_with_one_line(data: Any) -> None:
    try:
        got = parse_input(data)
    except InputError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert got and all(isinstance(c, Case) for c in got)
    for case in got:
        # Whatever imports can be sent, and the body sent imports back to itself.
        body = json.loads(json.dumps(_body(case)))
        assert _body(parse_request(body)) == body


@settings(max_examples=100, database=None, deadline=None)
@given(st.lists(st.text(max_size=20) | _ANY_JSON.map(json.dumps), max_size=4))
def test_any_text_imports_or_fails_with_one_line(lines: list[str]) -> None:
    try:
        parse_text("\n".join(lines))
    except InputError as err:
        assert "\n" not in str(err)


def test_a_session_json_gives_each_turns_request_in_order() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "a"}]}
    responses = {"model": "m", "input": "b", "stream": True}
    doc = {
        "turns": [
            {"turn": 1, "url": "http://h/v1/chat/completions", "request": chat},
            {"turn": 2, "url": "http://h/v1/responses", "request": responses},
        ]
    }
    cases = parse_text(json.dumps(doc))
    assert [(c.api, c.stream) for c in cases] == [("chat", False), ("responses", True)]
    assert cases == [parse_request(chat), parse_request(responses)]
    with pytest.raises(InputError, match="turns: an empty session"):
        parse_input({"turns": []})
    with pytest.raises(InputError, match=r"turns\[0\]: request: expected an object"):
        parse_input({"turns": [{"url": "http://h/v1/responses", "request": "x"}]})
