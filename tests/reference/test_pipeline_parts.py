"""Templates, id renumbering, parsers and the scripted model, tested without a socket."""

from __future__ import annotations

import random
import re

import pytest

from agentfuzz.reference import BEHAVIOURS, UnknownBehaviour, create_app, render_prompt
from agentfuzz.reference.intake import Call, Message
from agentfuzz.reference.model import imitate
from agentfuzz.reference.parsers import ParseFailure, parse_kimi
from agentfuzz.reference.renumber import renumber

HEADER_LINES = re.compile(r"<\|tool_call_begin\|>[^<]*|## Return of [^\n]*")


def seed_000_history() -> list[dict[str, object]]:
    """The two-call function_call / function_call_output history from the seed's PR."""
    out: list[dict[str, object]] = [
        {"role": "user", "content": "List the repo, then read the README."}
    ]
    for call_id, name in (
        ("call_4144fac2c5e1f3e0", "exec_command"),
        ("call_9bd0e1a7c2", "read_file"),
    ):
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": call_id, "content": "ok"})
    return out


TOOLS = [{"type": "function", "function": {"name": n}} for n in ("exec_command", "read_file")]


def test_seed_000_render_before_and_after() -> None:
    before = HEADER_LINES.findall(render_prompt("vllm-kimi-k2", seed_000_history(), TOOLS))
    after = HEADER_LINES.findall(render_prompt("vllm-kimi-k2-fixed", seed_000_history(), TOOLS))
    assert before == [
        "<|tool_call_begin|>call_4144fac2c5e1f3e0",
        "## Return of call_4144fac2c5e1f3e0",
        "<|tool_call_begin|>call_9bd0e1a7c2",
        "## Return of call_9bd0e1a7c2",
    ]
    assert after == [
        "<|tool_call_begin|>functions.exec_command:0",
        "## Return of functions.exec_command:0",
        "<|tool_call_begin|>functions.read_file:1",
        "## Return of functions.read_file:1",
    ]


def test_kimi_template_renders_the_name_only_inside_the_id() -> None:
    prompt = render_prompt("vllm-kimi-k2", seed_000_history(), None)
    assert "exec_command" not in prompt


def test_renumber_one_counter_pairs_results_and_is_idempotent() -> None:
    msgs = [
        Message("user", "go"),
        Message("assistant", tool_calls=[Call("a", "x", "{}"), Call("functions.y:1", "y", "{}")]),
        Message("tool", "r1", tool_call_id="a"),
        Message("tool", "r2", tool_call_id="functions.y:1"),
        Message("tool", "orphan", tool_call_id="nope"),
        Message("assistant", tool_calls=[Call("a", "ns__z", "{}")]),
        Message("tool", "r3", tool_call_id="a"),
    ]
    once = renumber(msgs, "strict")
    ids = [c.id for m in once for c in m.tool_calls]
    assert ids == ["functions.x:0", "functions.y:1", "functions.ns__z:2"]
    assert [m.tool_call_id for m in once if m.role == "tool"] == [
        "functions.x:0",
        "functions.y:1",
        "nope",
        "functions.ns__z:2",
    ]
    assert renumber(once, "strict") == once
    assert renumber(msgs, "none") is msgs


def test_loose_renumber_lets_near_native_ids_through() -> None:
    msgs = [
        Message(
            "assistant", tool_calls=[Call("call_abc123:0", "x", "{}"), Call("call_q", "x", "{}")]
        )
    ]
    assert [c.id for c in renumber(msgs, "loose")[0].tool_calls] == [
        "call_abc123:0",
        "functions.x:1",
    ]


SECTION = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"
CALL = "<|tool_call_begin|>{}<|tool_call_argument_begin|>{{}}<|tool_call_end|>"


@pytest.mark.parametrize(
    ("header", "vllm", "exo_fixed"),
    [
        ("functions.get_weather:3", "get_weather", "functions.get_weather:3"),
        ("functions_get_weather_3", None, "functions.get_weather:3"),
        ("call_4144fac2c5e1f3e0", None, None),
        ("call_abc123:1", None, None),
    ],
)
def test_kimi_header_grammars(header: str, vllm: str | None, exo_fixed: str | None) -> None:
    raw = SECTION.format(CALL.format(header))
    got = parse_kimi(raw, ["get_weather"], "vllm", "drop")
    assert [c.name for c in got.calls] == ([vllm] if vllm else [])
    assert not got.content
    fixed = parse_kimi(raw, ["get_weather"], "exo-fixed", "content")
    if exo_fixed:
        assert [c.id for c in fixed.calls] == [exo_fixed]
    else:
        assert not fixed.calls and fixed.content and "<|" not in fixed.content
    if vllm is None:
        with pytest.raises(ParseFailure, match=re.escape(header)):
            parse_kimi(raw, ["get_weather"], "exo", "error")


def test_dropped_first_call_keeps_slot() -> None:
    raw = SECTION.format(CALL.format("call_x") + CALL.format("functions.f:1"))
    assert [c.slot for c in parse_kimi(raw, ["f"], "vllm", "drop").calls] == [1]


@pytest.mark.parametrize(
    ("seen", "shape"),
    [
        ("call_4144fac2c5e1f3e0", r"call_[0-9a-f]{16}"),
        ("functions_get_weather_0", r"functions_read_file_4"),
        ("functions.get_weather:0", r"functions\.read_file:4"),
        ("call_abc123:0", r"call_[0-9a-f]{6}:4"),
        ("toolu_01ABCdef", r"toolu_\d\d[A-Z]{3}[a-z]{3}"),
    ],
)
def test_model_imitates_id_shape(seen: str, shape: str) -> None:
    assert re.fullmatch(shape, imitate(seen, "read_file", 4, random.Random(0)))


def test_unknown_profile_is_one_line_error() -> None:
    with pytest.raises(KeyError) as info:
        create_app("nope")
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and "fixed" in str(info.value)
    assert isinstance(info.value, UnknownBehaviour)


def test_profile_names_are_the_contract() -> None:
    assert {
        "vllm-kimi-k2",
        "vllm-kimi-k2-fixed",
        "vllm-kimi-k2-loose-fix",
        "exo-kimi-k2",
        "exo-kimi-k2-fixed",
        "vllm-responses-regen",
        "vllm-gpt-oss",
        "no-tools-leak",
        "fixed",
    } <= set(BEHAVIOURS)
