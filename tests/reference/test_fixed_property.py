"""Odd but well-typed histories: the fixed profiles answer every one cleanly, in all four modes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .wire import CHAT_TOOLS, RESPONSES_TOOLS, assert_clean, send

IDS = st.sampled_from(
    [
        "call_4144fac2c5e1f3e0",
        "functions_get_weather_0",
        "functions.get_weather:0",
        "call_abc123:0",
        "",
        " ",
        "ünï-id",
        "toolu_01ABCDEFGHIJKLMNOPQRSTUV",
        "0",
        "x" * 80,
        "functions.x",
        "<|tool_call_end|>",
    ]
)
NAMES = st.sampled_from(["get_weather", "read_file"])
ARGS = st.sampled_from(['{"city": "Paris", "days": 1}', "{", "", "[]", '{"path": "a"}'])


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A list of ('user', text) | ('calls', [(id, name, args)]) | ('result', id) steps."""
    steps: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["user", "calls", "result"]))
        if kind == "user":
            steps.append(
                (
                    "user",
                    draw(st.sampled_from(["hi", "use read_file", "use get_weather and read_file"])),
                )
            )
        elif kind == "calls":
            steps.append(
                ("calls", draw(st.lists(st.tuples(IDS, NAMES, ARGS), min_size=1, max_size=2)))
            )
        else:
            steps.append(("result", draw(IDS)))
    steps.append(("user", draw(st.sampled_from(["go on", "use get_weather"]))))
    return steps


def chat_messages(steps: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, value in steps:
        if kind == "user":
            out.append({"role": "user", "content": value})
        elif kind == "calls":
            calls = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in value
            ]
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
        else:
            out.append({"role": "tool", "tool_call_id": value, "content": "ok"})
    return out


def responses_input(steps: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, value in steps:
        if kind == "user":
            out.append({"type": "message", "role": "user", "content": value})
        elif kind == "calls":
            out += [
                {"type": "function_call", "call_id": i, "name": n, "arguments": a}
                for i, n, a in value
            ]
        else:
            out.append({"type": "function_call_output", "call_id": value, "output": "ok"})
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=histories(),
    profile=st.sampled_from(
        ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed", "vllm-gpt-oss-fixed"]
    ),
    api=st.sampled_from(["chat", "responses"]),
    stream=st.booleans(),
    choice=st.sampled_from([None, "auto", "none", "required"]),
    tools=st.booleans(),
)
def test_fixed_profiles_never_misbehave(
    serve: Callable[..., str],
    steps: Any,
    profile: str,
    api: str,
    stream: bool,
    choice: Any,
    tools: bool,
) -> None:
    if api == "chat":
        body: dict[str, Any] = {"model": "m", "messages": chat_messages(steps), "stream": stream}
    else:
        body = {"model": "m", "input": responses_input(steps), "stream": stream}
    if tools:
        body["tools"] = CHAT_TOOLS if api == "chat" else RESPONSES_TOOLS
    if choice:
        body["tool_choice"] = choice
    turn = send(serve(profile), api, body)
    if turn.status == 400:
        assert choice == "required" and not tools, turn.body
        assert "error" in json.loads(turn.body)
        return
    assert_clean(turn, tools=tools, choice=choice or "auto")
