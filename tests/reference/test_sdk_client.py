"""The official openai SDK as the client: every profile that is meant to keep the wire intact."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
import openai
import pytest

from agentfuzz.reference import BEHAVIOURS

from .wire import CHAT_TOOLS, RESPONSES_TOOLS, SCHEMAS, WEATHER, assert_clean, send

# exo-kimi-k2 answers clean first turns too; it only breaks on sanitised history ids.
WIRE_SAFE = sorted(BEHAVIOURS)
# Planted misreadings under which the model never sees a tool it may call (asked without a
# tool_choice): those profiles answer in text, which is their fault, not the wire's.
NO_CALLS = ("tools_unrendered", "omitted_choice_none")
MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]
ASK = "What is the weather in Paris? Use get_weather."


def chat_loop(call_id: str) -> list[dict[str, Any]]:
    args = json.dumps({"city": "Paris", "days": 2})
    return [
        {"role": "user", "content": ASK},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": '{"temp_c": 17}'},
    ]


def responses_loop(call_id: str) -> list[dict[str, Any]]:
    args = json.dumps({"city": "Paris", "days": 2})
    return [
        {"type": "message", "role": "user", "content": ASK},
        {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": args},
        {"type": "function_call_output", "call_id": call_id, "output": '{"temp_c": 17}'},
    ]


def body(api: str, stream: bool, history: str, **extra: Any) -> dict[str, Any]:
    """A request for one of a few clean histories: ``ask``, ``loop`` (ends in a tool result)."""
    if api == "chat":
        msgs = (
            [{"role": "user", "content": ASK}]
            if history == "ask"
            else chat_loop("functions.get_weather:0")
        )
        out = {"model": "m", "messages": msgs, "tools": CHAT_TOOLS, "stream": stream}
    else:
        items: Any = ASK if history == "ask" else responses_loop("functions.get_weather:0")
        out = {"model": "m", "input": items, "tools": RESPONSES_TOOLS, "stream": stream}
    out.update(extra)
    return {k: v for k, v in out.items() if v is not None}


@pytest.mark.parametrize("profile", WIRE_SAFE)
def test_openai_sdk_all_four_modes(
    serve: Callable[..., str], profile: str, request: pytest.FixtureRequest
) -> None:
    client = openai.OpenAI(base_url=serve(profile), api_key="x", max_retries=0)
    request.addfinalizer(client.close)  # its pooled sockets go with it, not to the collector
    assert client.models.list().data[0].id

    text = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert text.choices[0].message.content
    assert client.responses.create(model="m", input="hi").output_text
    if BEHAVIOURS[profile].relation_fault in NO_CALLS:
        return

    done = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": ASK}], tools=CHAT_TOOLS
    )  # type: ignore[arg-type]
    # The planted odd shape of call-unnamed: a call named "", which the SDK takes as it comes.
    name = "" if BEHAVIOURS[profile].answer_fault == "call_unnamed" else "get_weather"
    call = done.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == name  # type: ignore[union-attr]
    jsonschema.validate(json.loads(call.function.arguments), WEATHER)  # type: ignore[union-attr]

    chunks = list(
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": ASK}], tools=CHAT_TOOLS, stream=True
        )
    )  # type: ignore[arg-type]
    if BEHAVIOURS[profile].answer_fault != "calls_say_stop":  # planted: the SDK takes it
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert len({c.id for c in chunks}) == 1

    response = client.responses.create(model="m", input=ASK, tools=RESPONSES_TOOLS)  # type: ignore[arg-type]
    calls = [o for o in response.output if o.type == "function_call"]
    assert [c.name for c in calls] == [name]

    events = list(client.responses.create(model="m", input=ASK, tools=RESPONSES_TOOLS, stream=True))  # type: ignore[arg-type]
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    if BEHAVIOURS[profile].frame_fault != "sequence":  # the planted gaps pass the SDK unseen
        assert [e.sequence_number for e in events] == list(range(len(events)))


CLEAN = ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed", "vllm-gpt-oss-fixed", "no-tools-leak"]


@pytest.mark.parametrize("profile", CLEAN)
@pytest.mark.parametrize(("api", "stream"), MODES)
@pytest.mark.parametrize(
    ("history", "choice"),
    [
        ("ask", None),
        ("loop", None),
        ("ask", "none"),
        ("loop", "required"),
        ("ask", "named"),
    ],
)
def test_fixed_profiles_answer_cleanly(
    serve: Callable[..., str],
    profile: str,
    api: str,
    stream: bool,
    history: str,
    choice: str | None,
) -> None:
    named = {"type": "function", "function": {"name": "read_file"}}
    if api == "responses":
        named = {"type": "function", "name": "read_file"}
    tool_choice: Any = named if choice == "named" else choice
    turn = send(serve(profile), api, body(api, stream, history, tool_choice=tool_choice))
    assert_clean(turn, choice=tool_choice or "auto")
    if choice == "named":
        assert [c["name"] for c in turn.calls] == ["read_file"]
    if history == "loop" and choice is None:
        assert turn.text and not turn.calls  # answers after the tool result


@pytest.mark.parametrize("profile", CLEAN)
@pytest.mark.parametrize(("api", "stream"), MODES)
def test_no_tools_means_text(
    serve: Callable[..., str], profile: str, api: str, stream: bool
) -> None:
    request = body(api, stream, "ask")
    del request["tools"]
    turn = send(serve(profile), api, request)
    assert_clean(turn, tools=False)
    assert set(SCHEMAS) == {"get_weather", "read_file"}
