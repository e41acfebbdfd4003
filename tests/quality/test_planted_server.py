"""The planted server's own sanity: correct with bugs off; each bug fires only on its trigger."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from .planted_server import BUGS, KIMI_MARKUP, build_app, planted_server, shows_effect

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "note": {"type": "string"},
    },
    "required": ["city", "days", "unit"],
    "additionalProperties": False,
}
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def chat_tool(name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "", "parameters": SCHEMA}}


def call(id: str, args: str = '{"city": "xx"}', name: str = "get_weather") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def user(text: str = "hello") -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(*calls: dict[str, Any], reasoning: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": list(calls)}
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def result(id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": id, "content": "ok"}


def chat(messages: list[dict[str, Any]], *, tools: bool = True, **knobs: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "planted", "messages": messages, **knobs}
    if tools:
        body["tools"] = [chat_tool()]
    return body


def r_user(text: str = "hello") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


def r_call(id: str, name: str = "get_weather", args: str = '{"city": "xx"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": id, "name": name, "arguments": args}


def r_result(id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": id, "output": "ok"}


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hm"}]}


def responses(items: list[dict[str, Any]], *names: str, **knobs: Any) -> dict[str, Any]:
    names = names or ("get_weather",)
    tools = [{"type": "function", "name": n, "parameters": SCHEMA} for n in names]
    return {"model": "planted", "input": items, "tools": tools, **knobs}


def post(url: str, body: dict[str, Any]) -> httpx.Response:
    path = "/chat/completions" if "messages" in body else "/responses"
    return httpx.post(url + path, json=body, timeout=10)


def payloads(answer: httpx.Response) -> list[Any]:
    if not answer.headers["content-type"].startswith("text/event-stream"):
        return [answer.json()]
    data = [ln[5:].strip() for ln in answer.text.splitlines() if ln.startswith("data:")]
    return [json.loads(d) for d in data if d != "[DONE]"]


def validated(answer: httpx.Response, body: dict[str, Any]) -> list[Any]:
    """Every payload of a 200 answer, each checked against the openai SDK's own models."""
    assert answer.status_code == 200, answer.text
    found = payloads(answer)
    for p in found:
        if "messages" in body:
            (ChatCompletionChunk if body.get("stream") else ChatCompletion).model_validate(p)
        elif body.get("stream"):
            EVENTS.validate_python(p)
        else:
            Response.model_validate(p)
    return found


@pytest.fixture
def sdk(clean_url: str) -> Iterator[openai.OpenAI]:
    """An SDK client on the clean server, closed afterwards (its pooled sockets with it)."""
    with openai.OpenAI(base_url=clean_url, api_key="x") as client:
        yield client


def test_sdk_chat_answers_a_user_turn_with_one_schema_valid_call(
    clean_url: str, sdk: openai.OpenAI
) -> None:
    client = sdk
    tools: Any = [chat_tool("get_weather"), chat_tool("get_time")]
    answer = client.chat.completions.create(
        model="planted", messages=[user("please use get_time")], tools=tools
    )
    calls = answer.choices[0].message.tool_calls or []
    assert answer.choices[0].finish_reason == "tool_calls"
    assert [c.function.name for c in calls] == ["get_time"]  # type: ignore[union-attr]
    jsonschema.validate(json.loads(calls[0].function.arguments), SCHEMA)  # type: ignore[union-attr]
    assert calls[0].id.startswith("call_")


def test_sdk_chat_stream_has_constant_id_index_zero_and_done(
    clean_url: str, sdk: openai.OpenAI
) -> None:
    client = sdk
    tools: Any = [chat_tool()]
    chunks = list(
        client.chat.completions.create(model="planted", messages=[user()], tools=tools, stream=True)
    )
    assert len({c.id for c in chunks}) == 1
    deltas = [d for c in chunks for d in c.choices[0].delta.tool_calls or []]
    assert [d.index for d in deltas] == [0, 0] and deltas[0].id and not deltas[1].id
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    raw = post(clean_url, chat([user()], stream=True)).text
    assert raw.rstrip().endswith("data: [DONE]")


def test_sdk_responses_calls_a_namespaced_tool_by_bare_name(
    clean_url: str, sdk: openai.OpenAI
) -> None:
    client = sdk
    inner = {"type": "function", "name": "lookup", "parameters": SCHEMA}
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": SCHEMA},
        {"type": "namespace", "name": "crm", "description": "", "tools": [inner]},
    ]
    answer = client.responses.create(model="planted", input="use crm__lookup", tools=tools)
    (item,) = answer.output
    assert item.type == "function_call"
    assert (item.namespace, item.name, item.status) == ("crm", "lookup", "completed")
    assert answer.status == "completed"


def test_sdk_responses_stream_keeps_ids_and_sequence(clean_url: str, sdk: openai.OpenAI) -> None:
    client = sdk
    tools: Any = [{"type": "function", "name": "get_weather", "parameters": SCHEMA}]
    with client.responses.stream(model="planted", input="hi", tools=tools) as stream:
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-2:] == ["response.output_item.done", "response.completed"]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    added, done, completed = events[2], events[-2], events[-1]
    assert added.type == "response.output_item.added" and done.type == "response.output_item.done"
    assert completed.type == "response.completed"
    final = completed.response.output[0]
    assert added.item.id == done.item.id == final.id
    assert getattr(added.item, "call_id") == getattr(final, "call_id")  # noqa: B009


@pytest.mark.parametrize("stream", [False, True])
def test_sdk_text_turns_say_done(clean_url: str, stream: bool, sdk: openai.OpenAI) -> None:
    client = sdk
    if stream:
        with client.responses.stream(model="planted", input="hi") as s:
            assert s.get_final_response().output_text == "done."
    else:
        answer = client.chat.completions.create(model="planted", messages=[user()])
        assert answer.choices[0].message.content == "done."


@pytest.mark.parametrize(
    ("body", "calls"),
    [
        (chat([user(), asst(call("call_1")), result("call_1")]), False),
        (chat([user()], tool_choice="none"), False),
        (chat([user()], tools=False), False),
        (chat([user(), asst(call("call_1")), result("call_1")], tool_choice="required"), True),
        (
            chat(
                [user()],
                tools=False,
                tool_choice={"type": "function", "function": {"name": "get_weather"}},
            )
            | {"tools": [chat_tool("a"), chat_tool("get_weather")]},
            True,
        ),
    ],
)
def test_tool_choice_and_last_item_decide_call_or_text(
    clean_url: str, body: dict[str, Any], calls: bool
) -> None:
    message = validated(post(clean_url, body), body)[0]["choices"][0]["message"]
    assert bool(message.get("tool_calls")) is calls
    assert (message["content"] == "done.") is not calls
    if calls:
        assert message["tool_calls"][0]["function"]["name"] == "get_weather"


ODD_CHAT = [
    [user(), result("nobody")],
    [user(), asst(call("call_1")), user()],
    [user(), asst(call("")), result("")],
    [user(), asst(call("呼び出し_ü")), result("呼び出し_ü")],
    [user(), asst(call("dup"), call("dup")), result("dup"), user()],
    [user(), asst(call("c1", args="{")), result("c1"), user()],
    [user(), asst(call("c1", args="[1,")), result("c1")],
    [user(), asst(call("c1", args="")), user()],
    [user(), asst(call("x" * 200, args='{"days": "many"}')), result("x" * 200), user()],
    [user(), asst(call("c1"), reasoning="thinking")],
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("messages", ODD_CHAT)
def test_odd_chat_histories_get_valid_answers(
    clean_url: str, messages: list[dict[str, Any]], stream: bool
) -> None:
    body = chat(messages, stream=stream)
    assert validated(post(clean_url, body), body)


ODD_RESPONSES = [
    [r_user(), r_result("nobody")],
    [r_user(), REASONING, r_call("c1"), r_user()],
    [r_user(), r_call(""), r_result("")],
    [r_user(), r_call("c1"), r_call("c1"), r_result("c1"), r_user()],
    [r_user(), r_call("c1", args="{"), r_result("c1"), r_user()],
    [r_user(), {"type": "message", "role": "assistant", "content": "ok"}, r_user()],
    [r_user(), r_call("ü" * 70), r_result("ü" * 70)],
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("items", ODD_RESPONSES)
def test_odd_responses_histories_get_valid_answers(
    clean_url: str, items: list[dict[str, Any]], stream: bool
) -> None:
    body = responses(items, stream=stream)
    assert validated(post(clean_url, body), body)


@pytest.mark.parametrize("raw", [b"{nope", b"[]", b'{"messages": 3}'])
def test_bad_bodies_get_a_400_json_error(clean_url: str, raw: bytes) -> None:
    answer = httpx.post(clean_url + "/chat/completions", content=raw, timeout=10)
    assert answer.status_code == 400
    assert "message" in answer.json()["error"]


def test_answers_are_deterministic(clean_url: str) -> None:
    body = responses([r_user()], stream=True)
    assert post(clean_url, body).text == post(clean_url, body).text


def test_models_lists_planted(sdk: openai.OpenAI) -> None:
    models = sdk.models.list()
    assert [m.id for m in models] == ["planted"]


def test_unknown_bug_names_are_refused() -> None:
    with pytest.raises(ValueError, match="nonsense"):
        build_app(["nonsense"])


# Per bug: (a request that fires it, the same request without the trigger), in the bug's mode.
TRIGGERS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "empty_on_foreign_id": (
        chat([user(), asst(call("abc123XYZ")), result("abc123XYZ")]),
        chat([user(), asst(call("call_abc123XYZ")), result("call_abc123XYZ")]),
    ),
    "crash_on_parallel": (
        chat([user(), asst(call("c1"), call("c2")), result("c1"), result("c2")]),
        chat([user(), asst(call("c1"), call("c2")), result("c1")]),
    ),
    "leak_without_tools": (
        chat([user(), asst(call("c1")), result("c1")], tools=False),
        chat([user(), asst(call("c1")), result("c1")]),
    ),
    "regen_ids": (
        responses([r_user(), REASONING, r_call("c1"), r_result("c1"), r_user()], stream=True),
        responses([r_user(), r_call("c1"), r_result("c1"), r_user()], stream=True),
    ),
    "gap_after_dropped": (
        chat([user(), asst(call("c1")), user()], stream=True),
        chat([user(), asst(call("c1")), result("c1"), user()], stream=True),
    ),
    "echo_bad_args": (
        chat([user(), asst(call("c1", args="{")), result("c1"), user()]),
        chat([user(), asst(call("c1", args="{")), user()]),
    ),
    "truncate_dotted": (
        responses([r_user("use a.b.c")], "get_weather", "a.b.c"),
        responses([r_user("use a_b_c")], "get_weather", "a_b_c"),
    ),
    "ignore_choice_none": (
        chat([user(), asst(call("c1")), result("c1")], stream=True, tool_choice="none"),
        chat([user(), asst(call("c1")), result("c1")], stream=True, tool_choice="auto"),
    ),
    "bad_finish": (
        chat([user(), asst(call("c1")), result("c1"), result("nobody")]),
        chat([user(), asst(call("c1")), result("nobody")]),
    ),
    "finish_without_calls": (
        chat([user(), asst(call("c1")), result("c1")]),
        chat([user(), asst(call("c1")), user()]),
    ),
    "usage_miscount": (
        responses([r_user(), r_call("c1"), r_result("c1")]),
        responses([r_user()]),
    ),
}


def effect(bug: str, url: str, body: dict[str, Any]) -> bool:
    answer = post(url, body)
    ctype = answer.headers.get("content-type", "")
    return shows_effect(bug, body, answer.status_code, ctype, answer.text)


def test_every_bug_has_a_trigger_in_its_own_mode() -> None:
    assert set(TRIGGERS) == set(BUGS)
    for name, (fires, _) in TRIGGERS.items():
        bug = BUGS[name]
        assert ("messages" in fires) is (bug.api == "chat")
        assert bool(fires.get("stream")) is bug.stream
        assert len(fires.get("messages") or fires["input"]) >= bug.min_items


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_bug_fires_only_on_its_trigger(clean_url: str, bug: str) -> None:
    fires, quiet = TRIGGERS[bug]
    with planted_server([bug]) as url:
        assert effect(bug, url, fires)
        assert not effect(bug, url, quiet)
    assert not effect(bug, clean_url, fires)
    assert validated(post(clean_url, fires), fires)


def test_leaked_markup_is_the_kimi_section() -> None:
    body = chat([user(), asst(call("c1")), result("c1")], tools=False)
    with planted_server(["leak_without_tools"]) as url:
        content = post(url, body).json()["choices"][0]["message"]["content"]
    assert content == KIMI_MARKUP


def test_crash_on_parallel_streams_an_error_frame() -> None:
    body = chat([user(), asst(call("c1"), call("c2")), result("c1"), result("c2")], stream=True)
    with planted_server(["crash_on_parallel"]) as url:
        text = post(url, body).text
    assert "event: error" in text and "[DONE]" not in text


@pytest.mark.parametrize("stream", [False, True])
def test_html_and_list_bodies(stream: bool) -> None:
    body = chat([user()], stream=stream)
    with planted_server(["html_body"]) as url:
        answer = post(url, body)
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/html")
        assert httpx.get(url + "/models").json()["data"]
    with planted_server(["list_body"]) as url:
        assert payloads(post(url, body)) == [[]]


def test_truncated_stream_has_no_terminal_event() -> None:
    body = responses([r_user()], stream=True)
    with planted_server(["truncated_stream"]) as url:
        found = payloads(post(url, body))
    assert [p["type"] for p in found] == ["response.created", "response.in_progress"]


@pytest.mark.parametrize("stream", [False, True])
def test_reset_drops_the_connection_mid_answer(stream: bool) -> None:
    with planted_server(["reset"]) as url, pytest.raises(httpx.RemoteProtocolError):
        post(url, chat([user()], stream=stream))
