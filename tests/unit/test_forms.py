"""Message forms spell the same conversation otherwise, and come back from a captured body;
markup a request sends on purpose is never blamed on the server."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, find, settings

from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    History,
    Options,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.oracles import check
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import FORMS, used
from agentfuzz.strategies import cases
from agentfuzz.strategies._histories import MARKUP_TEMPLATES
from agentfuzz.wire.dialects import build_request, parse_request

FIND = settings(database=None, max_examples=3000, suppress_health_check=list(HealthCheck))
CALL = ToolCall(id="call_1", name="get_weather", arguments="{}")
HISTORY = History(
    tools=(Tool(name="get_weather"),),
    items=(
        SystemMessage(text="be brief"),
        UserMessage(text="hi"),
        AssistantMessage(tool_calls=(CALL,)),
        ToolResult(call_id="call_1", output="sunny"),
        UserMessage(text="and now?"),
    ),
)


LONE = History(items=(UserMessage(text="hi"),))
# A turn that called a tool, then one that only said something, and one that said nothing.
SPOKEN = History(
    tools=HISTORY.tools,
    items=(
        *HISTORY.items[:4],
        AssistantMessage(text="it is sunny"),
        UserMessage(text="thanks"),
        AssistantMessage(),
        UserMessage(text="and now?"),
    ),
)


def _history(form: str) -> History:
    """The history a form changes something in."""
    return LONE if form == "input_string" else SPOKEN if form.startswith("calls_") else HISTORY


def _body(api: Api, *forms: str, history: History = HISTORY) -> dict[str, Any]:
    case = Case(history=history, options=Options(forms=forms), api=api)
    return build_request(case, "m")[1]


def test_chat_forms_change_the_spelling_only() -> None:
    plain = _body("chat")["messages"]
    parts = _body("chat", "parts")["messages"]
    assert [m["content"] for m in parts if m["role"] != "assistant"] == [
        [{"type": "text", "text": m["content"]}] for m in plain if m["role"] != "assistant"
    ]
    assert plain[2]["content"] is None
    assert _body("chat", "content_empty")["messages"][2]["content"] == ""
    assert "content" not in _body("chat", "content_absent")["messages"][2]
    named = _body("chat", "names")["messages"]
    assert [m.get("name") for m in named] == [None, "agentfuzz_user", None, None, "agentfuzz_user"]


def test_an_assistant_turn_without_calls_may_say_tool_calls_empty_or_null() -> None:
    """Issue 41 item 24: the shapes clients send after a turn with no calls."""
    plain = _body("chat", history=SPOKEN)["messages"]
    assert all(
        "tool_calls" not in m for m in plain if m["role"] == "assistant" and m is not plain[2]
    )
    for form, value in (("calls_empty", []), ("calls_null", None)):
        said = [
            m for m in _body("chat", form, history=SPOKEN)["messages"] if m["role"] == "assistant"
        ]
        # Beside text, and alone; the turn with calls keeps them.
        assert [m["tool_calls"] for m in said[1:]] == [value, value]
        assert said[1]["content"] == "it is sunny" and said[2]["content"] is None
        assert len(said[0]["tool_calls"]) == 1
    both = _body("chat", "calls_empty", "calls_null", history=SPOKEN)["messages"]
    assert both[-2]["tool_calls"] == []
    for form in ("calls_empty", "calls_null"):
        case = Case(history=SPOKEN, options=Options(forms=(form,)))
        assert used(case) == (f"message_forms:{form}",)
        assert used(case.model_copy(update={"history": HISTORY})) == ("plain",)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_an_extra_part_goes_on_the_last_user_message_only(api: Api) -> None:
    key = "messages" if api == "chat" else "input"
    for form, kind in (("image_part", "image"), ("unknown_part", "agentfuzz_unknown")):
        entries = _body(api, form)[key]
        users = [e for e in entries if e.get("role") == "user"]
        assert isinstance(users[0]["content"], str)
        text, extra = users[-1]["content"]
        assert text["text"] == "and now?" and kind in extra["type"]
    (text, extra) = [e for e in _body(api, "untyped_part")[key] if e.get("role") == "user"][-1][
        "content"
    ]
    assert "type" not in extra


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_every_form_comes_back_from_its_body(api: Api) -> None:
    for form in FORMS[api]:
        body = _body(api, form, history=_history(form))
        case = parse_request(body, api)
        assert case.options.forms == (form,), form
        assert build_request(case, "m")[1] == body, form


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_forms_are_reached_counted_and_reduced_away(api: Api) -> None:
    found = find(cases(Profile(), api, False), lambda c: bool(c.options.forms), settings=FIND)
    assert found.options == Options(forms=(FORMS[api][0],)) and found.history.size == 1
    assert used(found) == (f"message_forms:{FORMS[api][0]}",)
    case = Case(history=HISTORY, options=Options(forms=("parts", "image_part")), api=api)
    # Failing only while an image part is sent: the reducer keeps that form and no other.
    small = reduce_case(case, lambda c: "image_part" in c.options.forms)
    assert small.options.forms == ("image_part",)


def test_a_turn_may_open_with_a_system_or_developer_message_and_hold_markup() -> None:
    profile = Profile()
    for role in ("system", "developer"):
        found = find(
            cases(profile, "chat", False),
            lambda c, r=role: any(  # type: ignore[misc]
                isinstance(i, SystemMessage) and i.role == r for i in c.history.items
            ),
            settings=FIND,
        )
        assert isinstance(found.history.items[0], SystemMessage)

    def templated(case: Case) -> str | None:
        # A tool name may itself hold markup; the markup looked for is the template's own.
        names = [n for t in case.history.tools for n in (t.name, t.flat_name) if n]
        for item in case.history.items:
            if isinstance(item, UserMessage):
                bare = item.text
                for name in sorted(names, key=len, reverse=True):
                    bare = bare.replace(name, "")
                if "<|im_end|>" in bare:
                    return item.text
        return None

    marked = find(cases(profile, "chat", False), lambda c: templated(c) is not None, settings=FIND)
    # Whatever the free text and tool, the message is one of the markup templates.
    shapes = [
        re.escape(t.replace("{{", "{").replace("}}", "}")).replace(r"\{text\}", ".*")
        for t in MARKUP_TEMPLATES
    ]
    shapes = [s.replace(r"\{tool\}", ".*").replace(r"\{other\}", ".*") for s in shapes]
    text = templated(marked)
    assert text is not None
    assert any(re.fullmatch(shape, text, re.S) for shape in shapes), text


def _answer(text: str) -> Observation:
    exchange = Exchange(
        url="http://127.0.0.1:1/v1/chat/completions", request={}, stream=False, status=200
    )
    return Observation(exchange=exchange, text=text, finish_reason="stop")


def test_markup_the_request_sent_is_not_blamed_on_the_server() -> None:
    history = History(
        tools=(Tool(name="get_weather"),), items=(UserMessage(text="say <|im_end|>"),)
    )
    case = Case(history=history)
    echoed = check(case, _answer("you said <|im_end|>"), only=["leaked_markup"])
    assert echoed == []
    other = check(case, _answer("<|im_start|>assistant"), only=["leaked_markup"])
    assert [v.signature for v in other] == ["leaked_markup:<|im_start|>"]


def test_a_lone_responses_message_goes_as_a_bare_string_and_counts_only_then() -> None:
    assert _body("responses", "input_string", history=LONE)["input"] == "hi"
    assert isinstance(_body("responses", "input_string")["input"], list)
    lone = Case(history=LONE, options=Options(forms=("input_string",)), api="responses")
    assert used(lone) == ("message_forms:input_string",)
    assert used(lone.model_copy(update={"history": HISTORY})) == ("plain",)
