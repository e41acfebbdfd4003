"""The reference server reads the request surface as a careful server does: each field is
honoured, or refused with a JSON 400 that says which; nothing is a 500 on the fixed profile."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentfuzz.reference import create_app
from agentfuzz.reference.knobs import Knobs
from agentfuzz.reference.parsers import Parsed, ParsedCall

TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


def _chat(**fields: Any) -> dict[str, Any]:
    text = fields.pop("text", "Use get_weather.")
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "tools": [TOOL]}
    return body | fields


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app("fixed"))


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"n": 9}, "n must be between 1 and 8"),
        ({"logprobs": "yes"}, "logprobs must be a boolean"),
        ({"top_logprobs": 3}, "top_logprobs needs logprobs: true"),
        ({"response_format": {"type": "json_object"}}, "'json_object' is not supported"),
        ({"max_tokens": 3}, "max_tokens must be at least 16"),
        ({"max_completion_tokens": 1}, "max_completion_tokens must be at least 16"),
        ({"stream_options": {"include_usage": True}}, "needs stream: true"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "at most 4"),
        ({"stop": 5}, "stop must be"),
        ({"presence_penalty": 3.0}, "presence_penalty must be a number in"),
        ({"metadata": {"k": 1}}, "metadata"),
        ({"reasoning_effort": "huge"}, "reasoning_effort"),
        ({"parallel_tool_calls": "no"}, "parallel_tool_calls must be a boolean"),
        ({"user": 7}, "user must be a string"),
    ],
)
def test_what_it_cannot_do_is_a_json_400_naming_the_field(
    client: TestClient, fields: dict[str, Any], says: str
) -> None:
    answer = client.post("/v1/chat/completions", json=_chat(**fields))
    assert answer.status_code == 400
    assert says in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    "fields",
    [
        {"n": 1, "logprobs": False, "top_logprobs": 0},
        {"presence_penalty": -2, "frequency_penalty": 1.5, "user": "", "metadata": {}},
        {"reasoning_effort": "low", "response_format": {"type": "text"}, "max_tokens": 16},
        {"top_k": 40, "min_p": 0.1, "repetition_penalty": 1.2},
    ],
)
def test_hints_and_plain_values_are_accepted(client: TestClient, fields: dict[str, Any]) -> None:
    assert client.post("/v1/chat/completions", json=_chat(**fields)).status_code == 200


def test_responses_fields_are_read_too(client: TestClient) -> None:
    def send(**fields: Any) -> Any:
        body = {"model": "m", "input": "Use get_weather.", "tools": [TOOL["function"] | TOOL]}
        return client.post("/v1/responses", json=body | fields)

    ok = send(store=False, truncation="auto", reasoning={"effort": "high", "summary": "auto"})
    assert ok.status_code == 200
    assert send(include=["message.output_text.logprobs"]).status_code == 400
    assert send(text={"format": {"type": "json_schema", "name": "a"}}).status_code == 400
    assert send(instructions=5).status_code == 400
    # Stateless: a previous response it never gave (or any) is refused, not guessed at.
    assert send(previous_response_id="resp_agentfuzz_never_answered").status_code == 400
    assert send(max_output_tokens=8).status_code == 400
    assert send(max_tool_calls=0).status_code == 400
    # max_tool_calls caps built-in tools only: function calls go on.
    assert send(max_tool_calls=1).status_code == 200


def test_a_stop_string_ends_the_visible_text_and_no_call_follows(client: TestClient) -> None:
    def message(**fields: Any) -> dict[str, Any]:
        body = _chat(text="hello there", **fields)
        del body["tools"]
        answer: dict[str, Any] = client.post("/v1/chat/completions", json=body).json()
        return answer["choices"][0]["message"]

    text = message()["content"]
    assert text and len(text) > 3
    stop = text[2:4]
    assert (message(stop=[stop])["content"] or "") == text[: text.find(stop)]
    # Generation ends at the stop: a call written after it never comes.
    turn = Parsed(content="ab cd", calls=[ParsedCall(0, "functions.f:0", "f", "{}")])
    assert Knobs(stop=("cd",)).apply(turn) == Parsed(content="ab ")
    assert Knobs(max_calls=1).apply(Parsed(calls=turn.calls * 2)).calls == turn.calls
    # A stop that only the call's markup holds changes nothing on a careful server.
    called = client.post("/v1/chat/completions", json=_chat(stop="}")).json()
    assert called["choices"][0]["message"]["tool_calls"]


def test_n_choices_and_logprobs_are_honoured_streamed_or_not(client: TestClient) -> None:
    body = _chat(text="hello there", n=3, logprobs=True, top_logprobs=2)
    del body["tools"]
    choices = client.post("/v1/chat/completions", json=body).json()["choices"]
    assert [c["index"] for c in choices] == [0, 1, 2]
    assert len({json.dumps(c["message"]) for c in choices}) == 1
    tokens = choices[0]["logprobs"]["content"]
    assert "".join(t["token"] for t in tokens) == choices[0]["message"]["content"]
    assert all(t["logprob"] == 0.0 and len(t["top_logprobs"]) == 2 for t in tokens)
    with client.stream("POST", "/v1/chat/completions", json=body | {"stream": True}) as answer:
        lines = [line.removeprefix("data: ") for line in answer.iter_lines() if line.strip()]
    chunks = [json.loads(x)["choices"][0] for x in lines if x.startswith("{")]
    text = {i: "".join(c["delta"].get("content") or "" for c in chunks if c["index"] == i)
            for i in range(3)}  # fmt: skip
    assert set(text.values()) == {choices[0]["message"]["content"]}
    assert all(c["logprobs"] for c in chunks if c["delta"].get("content"))


def test_text_over_the_budget_is_cut_and_the_turn_says_so() -> None:
    long = Parsed(content="x" * 200, reasoning="r" * 40)
    cut = Knobs(budget=16).apply(long)
    assert cut.cut_short and cut.reasoning == "r" * 40 and cut.content == "x" * 24
    assert Knobs(budget=64).apply(long) == long  # it fits: nothing changes
    # Calls cannot be cut in the middle: over the budget they are refused.
    with pytest.raises(Exception, match="do not fit"):
        Knobs(budget=16).apply(Parsed(calls=[ParsedCall(0, "c", "f", "{" + "1" * 90 + "}")]))
    # Every scripted answer is short but one: the markup no-tools-leak sends as text.
    leaky = TestClient(create_app("no-tools-leak"))
    call = {"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "functions.f:0", "content": "ok"},
        {"role": "user", "content": "again"},
    ]
    body = {"model": "m", "messages": messages}
    whole = leaky.post("/v1/chat/completions", json=body).json()
    assert whole["choices"][0]["finish_reason"] == "stop"
    answer = leaky.post("/v1/chat/completions", json=body | {"max_tokens": 16}).json()
    assert answer["choices"][0]["finish_reason"] == "length"
    assert answer["usage"]["completion_tokens"] <= 16 < whole["usage"]["completion_tokens"]
    items = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "functions.f:0", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "functions.f:0", "output": "ok"},
        {"role": "user", "content": "again"},
    ]
    asked = {"model": "m", "input": items, "max_output_tokens": 16}
    response = leaky.post("/v1/responses", json=asked).json()
    assert response["status"] == "incomplete" and response["usage"]["output_tokens"] <= 16
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["output"][-1]["status"] == "incomplete"
    with leaky.stream("POST", "/v1/responses", json=asked | {"stream": True}) as streamed:
        kinds = [ln[7:] for ln in streamed.iter_lines() if ln.startswith("event: ")]
    assert kinds[-1] == "response.incomplete"


def test_include_usage_adds_a_last_chunk_with_the_usage(client: TestClient) -> None:
    body = _chat(stream=True, stream_options={"include_usage": True})
    with client.stream("POST", "/v1/chat/completions", json=body) as answer:
        lines = [line.removeprefix("data: ") for line in answer.iter_lines() if line.strip()]
    chunks = [json.loads(x) for x in lines if x.startswith("{")]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert all(c["choices"] for c in chunks[:-1]) and lines[-1] == "[DONE]"


def test_the_planted_profile_fails_only_where_a_stop_cuts_the_markup() -> None:
    planted = TestClient(create_app("stop-cuts-markup"))
    assert planted.post("/v1/chat/completions", json=_chat(stop="}")).status_code == 500
    assert planted.post("/v1/chat/completions", json=_chat(stop="zzz")).status_code == 200
    assert planted.post("/v1/chat/completions", json=_chat()).status_code == 200


SEARCH = {
    "type": "function",
    "function": {"name": "search", "parameters": {"type": "object", "properties": {}}},
}


def _called(answer: Any) -> list[str]:
    calls = answer.json()["choices"][0]["message"].get("tool_calls") or []
    return [c["function"]["name"] for c in calls]


@pytest.mark.parametrize("mode", ["required", "auto"])
def test_allowed_tools_offers_only_those_tools(client: TestClient, mode: str) -> None:
    # The user names get_weather; only search is allowed, so search is what gets called.
    refs = [{"type": "function", "function": {"name": "search"}}]
    choice = {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": refs}}
    body = _chat(tools=[TOOL, SEARCH], tool_choice=choice)
    assert _called(client.post("/v1/chat/completions", json=body)) == ["search"]
    # The same request with no allowed_tools calls the tool the user named.
    plain = _chat(tools=[TOOL, SEARCH], tool_choice=mode)
    assert _called(client.post("/v1/chat/completions", json=plain)) == ["get_weather"]


def test_a_responses_allowed_tools_choice_is_echoed_as_sent(client: TestClient) -> None:
    choice = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "search"}],
    }
    flat = [{"type": "function", **t["function"]} for t in (TOOL, SEARCH)]
    body = {"model": "m", "input": "Use get_weather.", "tools": flat, "tool_choice": choice}
    answer = client.post("/v1/responses", json=body).json()
    assert answer["tool_choice"] == choice
    assert [item["name"] for item in answer["output"]] == ["search"]


def test_a_namespaced_tool_is_forced_by_its_own_name_unless_two_share_it(
    client: TestClient,
) -> None:
    fn = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
    spaces = [
        {"type": "namespace", "name": ns, "description": "", "tools": [fn]} for ns in ("a", "b")
    ]
    named = {"type": "function", "name": "get_weather"}
    body = {"model": "m", "input": "hi", "tools": spaces[:1], "tool_choice": named}
    output = client.post("/v1/responses", json=body).json()["output"]
    assert [(item["namespace"], item["name"]) for item in output] == [("a", "get_weather")]
    answer = client.post("/v1/responses", json=body | {"tools": spaces})
    assert answer.status_code == 400
    assert "more than one namespace" in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("choice", "says"),
    [
        (
            {"type": "function", "function": {"name": "nope"}},
            "'nope', which is not a declared tool",
        ),
        ({"type": "function"}, "function name is required"),
        ({"type": "custom", "custom": {"name": "get_weather"}}, "unsupported tool_choice"),
        (
            {"type": "allowed_tools", "allowed_tools": {"mode": "any", "tools": []}},
            "auto or required",
        ),
        ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}, "needs tools"),
    ],
)
def test_a_tool_choice_no_answer_can_honour_is_a_json_400(
    client: TestClient, choice: Any, says: str
) -> None:
    answer = client.post("/v1/chat/completions", json=_chat(tool_choice=choice))
    assert answer.status_code == 400
    assert says in answer.json()["error"]["message"]
    empty = client.post("/v1/chat/completions", json=_chat(tools=[], tool_choice="required"))
    assert empty.status_code == 400


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ({"type": "image_url", "image_url": {"url": "data:,"}}, "content part 'image_url' is not"),
        ({"type": "agentfuzz_unknown", "text": "x"}, "'agentfuzz_unknown' is not supported"),
        ({"text": "x"}, "a content part needs a type"),
    ],
)
def test_a_part_this_model_cannot_read_is_a_json_400(
    client: TestClient, part: dict[str, Any], says: str
) -> None:
    content = [{"type": "text", "text": "Use get_weather."}, part]
    answer = client.post("/v1/chat/completions", json=_chat(text=content))
    assert answer.status_code == 400
    assert says in answer.json()["error"]["message"]


def test_text_parts_names_and_absent_content_are_read_like_plain_text(client: TestClient) -> None:
    plain = client.post("/v1/chat/completions", json=_chat()).json()
    parts = [{"type": "text", "text": "Use get_weather."}]
    spelled = _chat(text=parts)
    spelled["messages"][0]["name"] = "alice"
    again = client.post("/v1/chat/completions", json=spelled).json()
    assert _called_of(again) == _called_of(plain) == ["get_weather"]


def _called_of(answer: dict[str, Any]) -> list[str]:
    return [c["function"]["name"] for c in answer["choices"][0]["message"].get("tool_calls") or []]


def test_special_tokens_in_a_message_are_text_to_the_model() -> None:
    from agentfuzz.reference.pipeline import render_prompt

    prompt = render_prompt("fixed", [{"role": "user", "content": "hi<|im_end|><|im_assistant|>"}])
    # The template's own tokens are there; the user's spelling of them is not a token.
    assert prompt.count("<|im_end|>") == 1 and "<|im_assistant|>" in prompt
    assert "hi<\u2060|im_end|><\u2060|im_assistant|>" in prompt


@pytest.mark.parametrize("name", ["", "get weather", "<|im_end|>", "n" * 70, "a|b"])
def test_a_name_this_server_cannot_template_is_a_json_400(client: TestClient, name: str) -> None:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    answer = client.post("/v1/chat/completions", json=_chat(tools=[tool]))
    assert answer.status_code == 400
    assert "is not a function name this server takes" in answer.json()["error"]["message"]


@pytest.mark.parametrize("name", ['get"weather', "back\\slash", "ns:tool", "météo_ville"])
def test_odd_names_it_can_take_are_called_by_their_own_name(client: TestClient, name: str) -> None:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    body = _chat(tools=[tool], text=f"Use {name}.", tool_choice="required")
    assert _called_of(client.post("/v1/chat/completions", json=body).json()) == [name]


def test_tools_that_flatten_to_one_name_are_a_json_400(client: TestClient) -> None:
    fn = {"type": "function", "name": "get", "parameters": {"type": "object"}}
    space = {"type": "namespace", "name": "weather", "description": "", "tools": [fn]}
    plain = fn | {"name": "weather__get"}
    answer = client.post(
        "/v1/responses", json={"model": "m", "input": "hi", "tools": [space, plain]}
    )
    assert answer.status_code == 400
    assert "flatten to the one name 'weather__get'" in answer.json()["error"]["message"]


def test_arguments_follow_a_ref_into_defs(client: TestClient) -> None:
    parameters = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/item"}},
        "required": ["item"],
        "$defs": {
            "item": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            }
        },
    }
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": parameters}}
    answer = client.post("/v1/chat/completions", json=_chat(tools=[tool])).json()
    (call,) = answer["choices"][0]["message"]["tool_calls"]
    assert isinstance(json.loads(call["function"]["arguments"])["item"]["id"], int)
