"""A puppet session's turns (``strategies._puppet_sessions``): each scripts a call to the tool
its user asks for, or plain text; in a format whose calls carry ids, a mimic that heads the call
with the last call id the prompt shows, as the reference server renders that prompt."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfuzz.model.plan import Plan
from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import Call, Script, format_named
from agentfuzz.puppet.scripted import FIELD, PROSE, carried, carry_turn, mimicked
from agentfuzz.reference import render_prompt
from agentfuzz.request.profiles import load_profile
from agentfuzz.strategies import sessions

KIMI = format_named("kimi_k2")
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_weather", "search")
]


def _history(call_id: str) -> list[dict[str, Any]]:
    function = {"name": "get_weather", "arguments": "{}"}
    call = {"id": call_id, "type": "function", "function": function}
    return [
        {"role": "user", "content": "Use get_weather."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
        {"role": "user", "content": "Use search."},
    ]


def _written(xargs: dict[str, str], prompt: str) -> str:
    script = channel.decode(xargs)
    assert script is not None
    return script.text_for(prompt) if isinstance(script, channel.Mimic) else script.text


@pytest.mark.parametrize(
    ("profile", "shown"),
    [
        # Rendered verbatim (seed 000): the model copies the minted id.
        ("vllm-kimi-k2", "call_4144fac2c5e1f3e0"),
        # Renumbered to the family's own shape: the model numbers its own call (the second).
        ("fixed", "functions.search:1"),
    ],
)
def test_the_mimic_copies_a_foreign_last_call_id_and_numbers_a_native_one(
    profile: str, shown: str
) -> None:
    xargs = carry_turn(KIMI, Script((Call("search", {"query": "Paris"}),)), index=1)
    prompt = render_prompt(profile, _history("call_4144fac2c5e1f3e0"), TOOLS)
    assert _written(xargs, prompt).startswith(
        f"<|tool_calls_section_begin|><|tool_call_begin|>{shown}<|tool_call_argument_begin|>"
    )


def test_with_no_call_in_the_prompt_the_mimic_writes_the_formats_own_script() -> None:
    script = Script((Call("search", {"query": "Paris"}),))
    prompt = render_prompt("vllm-kimi-k2", _history("x")[:1], TOOLS)
    assert _written(carry_turn(KIMI, script), prompt) == KIMI.write(script)


def test_a_mimic_is_not_held_to_a_truth_and_a_text_is() -> None:
    script = Script((Call("search"),))
    mimic = {FIELD: carry_turn(KIMI, script)}
    assert carried(mimic) is None and mimicked(mimic) is not None
    text = {FIELD: carry_turn(format_named("hermes"), script)}
    assert carried(text) == (format_named("hermes"), script, format_named("hermes").write(script))
    assert mimicked(text) is None


@settings(max_examples=30, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(["kimi_k2", "hermes"]))
def test_each_turn_calls_the_tool_its_user_asks_for_or_answers_in_text(
    data: st.DataObject, fmt: str
) -> None:
    plan: Plan = data.draw(sessions(load_profile("default"), "chat", False, puppet=fmt))
    omitted = False
    for step in plan.steps:
        script = channel.decode(step.fields[FIELD])
        if step.ask is None or omitted:
            assert script == channel.Text(PROSE)
        else:
            asked = plan.tools[step.ask].name
            found = mimicked(step.fields) if fmt == "kimi_k2" else carried(step.fields)
            assert found is not None and found[0].name == fmt
            assert asked in _written(step.fields[FIELD], "")
        omitted = step.policy == "strip-tools"


def test_only_the_last_header_is_copied_and_only_when_foreign() -> None:
    """An earlier `call_` header does not count once a native one follows it."""
    pattern = KIMI.prompt_header
    assert pattern is not None
    mimic = channel.Mimic("{{header}}", pattern, "functions.search:2")
    begin, args = "<|tool_call_begin|>", "<|tool_call_argument_begin|>"
    foreign_then_native = f"{begin}call_ab{args}{{}} x {begin}functions.get_weather:1{args}{{}}"
    assert mimic.text_for(foreign_then_native) == "functions.search:2"
    native_then_foreign = f"{begin}functions.get_weather:0{args}{{}} x {begin}call_ab{args}{{}}"
    assert mimic.text_for(native_then_foreign) == "call_ab"
    assert mimic.text_for("no call at all") == "functions.search:2"
