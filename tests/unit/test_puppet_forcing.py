"""The puppet processor's pure half: the forcer walks a script and stops rather than force an
impossible token; the batch bookkeeping follows each request through vLLM's batch updates; a
script travels through ``vllm_xargs`` and back; a mimic copies its header from the prompt."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentfuzz.puppet
from agentfuzz.puppet.channel import HEADER, KEY, ChannelError, Mimic, Text, decode, encode
from agentfuzz.puppet.forcing import Forcer, Phase, Slots, text_to_write

END = 2


def _walk(forcer: Forcer, output: list[int], steps: int) -> list[int | None]:
    """What the forcer asks for over ``steps`` steps, each answered by writing that token."""
    asked = []
    for _ in range(steps):
        token = forcer.next_token()
        asked.append(token)
        if token is not None:
            output.append(token)
    return asked


def test_the_script_then_the_end_token_at_every_step_after_it() -> None:
    output: list[int] = []
    forcer = Forcer([7, 8, 9], END, output)
    assert _walk(forcer, output, 5) == [7, 8, 9, END, END]
    assert forcer.phase is Phase.FORCING


def test_no_end_token_frees_the_model_after_the_script() -> None:
    output: list[int] = []
    forcer = Forcer([7], None, output)
    assert _walk(forcer, output, 3) == [7, None, None]
    assert forcer.phase is Phase.RELEASED


def test_a_step_whose_token_is_thrown_away_does_not_move_the_place() -> None:
    """A chunked prefill samples a token vLLM discards: the output did not grow, so the same
    token is asked for again."""
    output: list[int] = []
    forcer = Forcer([7, 8], END, output)
    assert forcer.next_token() == 7
    assert forcer.next_token() == 7
    output.append(7)
    assert forcer.next_token() == 8


def test_an_output_that_left_the_script_is_abandoned() -> None:
    output = [7, 5]  # e.g. a preempted request re-added with what it wrote unforced
    forcer = Forcer([7, 8, 9], END, output)
    assert forcer.next_token() is None
    assert forcer.phase is Phase.ABANDONED
    assert "token 1" in forcer.why


def test_a_forbidden_script_token_abandons_and_a_forbidden_end_releases() -> None:
    output: list[int] = []
    forcer = Forcer([7, 8], END, output)
    assert forcer.next_token() == 7
    forcer.refused(7)
    assert (forcer.phase, forcer.next_token()) == (Phase.ABANDONED, None)
    assert "place 0 of 2" in forcer.why
    output = [7, 8]
    ending = Forcer([7, 8], END, output)
    assert ending.next_token() == END
    ending.refused(END)
    assert (ending.phase, ending.next_token()) == (Phase.RELEASED, None)


def test_an_empty_script_forces_the_end_at_once() -> None:
    output: list[int] = []
    assert _walk(Forcer([], END, output), output, 1) == [END]


# The batch: vLLM's persistent batch as InputBatch keeps it (removed rows are refilled lowest
# first by added requests, the rest condensed by moving the last request into each hole, then
# rows swapped), and the BatchUpdate it hands the processors for each step.


@dataclass
class _Batch:
    rows: list[str] = field(default_factory=list)
    made: int = 0

    def step(self, data: st.DataObject) -> tuple[list[int], list[tuple[int, str]], list[tuple]]:
        gone = data.draw(
            st.sets(st.sampled_from(range(len(self.rows)))) if self.rows else st.just(set())
        )
        holes = sorted(gone)
        rows: list[str | None] = [None if i in gone else r for i, r in enumerate(self.rows)]
        added = []
        for _ in range(data.draw(st.integers(0, 3))):
            name, self.made = f"r{self.made}", self.made + 1
            index = holes.pop(0) if holes else len(rows)
            if index == len(rows):
                rows.append(None)
            rows[index] = name
            added.append((index, name))
        removed, moved = list(holes), []
        while rows and rows[-1] is None:
            rows.pop()
        for hole in sorted(holes):
            if hole < len(rows) and rows[hole] is None:
                last = len(rows) - 1
                rows[hole], rows[last] = rows[last], None
                moved.append((last, hole, False))
                while rows and rows[-1] is None:
                    rows.pop()
        for _ in range(data.draw(st.integers(0, 2)) if len(rows) > 1 else 0):
            a, b = data.draw(st.lists(st.sampled_from(range(len(rows))), min_size=2, max_size=2))
            rows[a], rows[b] = rows[b], rows[a]
            moved.append((a, b, True))
        assert None not in rows
        self.rows = [r for r in rows if r is not None]
        return removed, added, moved


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_slots_follow_each_request_through_removes_adds_moves_and_swaps(
    data: st.DataObject,
) -> None:
    batch, slots = _Batch(), Slots[str]()
    scripted: set[str] = set()
    for _ in range(data.draw(st.integers(1, 12))):
        removed, added, moved = batch.step(data)
        states = []
        for index, name in added:
            if data.draw(st.booleans()):
                scripted.add(name)
            states.append((index, name if name in scripted else None))
        slots.update(removed, states, moved)
        want = {i: name for i, name in enumerate(batch.rows) if name in scripted}
        assert dict(slots.items()) == want


def test_an_added_request_without_a_script_empties_the_row_it_takes() -> None:
    slots = Slots[str]()
    slots.update([], [(0, "scripted")], [])
    slots.update([], [(0, None)], [])  # vLLM refilled row 0 without listing it as removed
    assert len(slots) == 0


def test_a_one_way_move_empties_its_source_and_replaces_its_target() -> None:
    slots = Slots[str]()
    slots.update([], [(0, "a"), (2, "c")], [])
    slots.update([], [], [(2, 0, False)])
    assert dict(slots.items()) == {0: "c"}


# The channel.


@pytest.mark.parametrize(
    "script",
    [
        Text('<tool_call>\n{"name": "f", "arguments": {"q": "é\\"</tool_call>"}}\n</tool_call>'),
        Text("", tag="case-7"),
        Mimic(f"<|tool_call_begin|>{HEADER}<|x|>", r"begin\|>(.+?)<", "functions.f:0", "t"),
    ],
)
def test_a_script_travels_as_one_flat_string_and_back(script: Text | Mimic) -> None:
    xargs = encode(script)
    assert list(xargs) == [KEY] and isinstance(xargs[KEY], str)  # what vllm_xargs admits
    assert decode(json.loads(json.dumps(xargs))) == script


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (7, "JSON string"),
        ("{", "not JSON"),
        ("[]", "JSON object"),
        ('{"v": 2, "text": ""}', "version"),
        ('{"v": 1}', "neither"),
        ('{"v": 1, "text": 3}', "'text' must be a string"),
        ('{"v": 1, "template": "x", "pattern": "(", "default": ""}', "does not compile"),
        ('{"v": 1, "template": "x", "pattern": "a"}', "'default' must be a string"),
    ],
)
def test_an_unreadable_script_is_one_channel_error(value: object, says: str) -> None:
    with pytest.raises(ChannelError, match=says):
        decode({KEY: value})


def test_a_request_without_the_key_carries_no_script() -> None:
    assert decode(None) is None
    assert decode({"other": "x"}) is None


# The mimic: seed 000's model copies the shape of its history's last call id.

_KIMI_PATTERN = r"<\|tool_call_begin\|>(?P<header>.+?)<\|tool_call_argument_begin\|>"


def _kimi_prompt(*ids: str) -> str:
    calls = "".join(
        f"<|tool_call_begin|>{i}<|tool_call_argument_begin|>{{}}<|tool_call_end|>" for i in ids
    )
    section = f"<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>"
    return f"<|im_user|>hi<|im_assistant|>{section}"


def test_a_mimic_copies_the_last_call_header_of_the_prompt() -> None:
    mimic = Mimic(
        f"<|tool_call_begin|>{HEADER}<|tool_call_argument_begin|>{{}}",
        _KIMI_PATTERN,
        "functions.f:0",
    )
    prompt = _kimi_prompt("functions.f:0", "call_abc123")
    assert mimic.text_for(prompt) == "<|tool_call_begin|>call_abc123<|tool_call_argument_begin|>{}"
    assert (
        mimic.text_for("no calls yet")
        == "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
    )


def test_a_mimic_takes_the_named_group_else_the_first_else_the_match() -> None:
    prompt = "id=a1; id=b2"
    assert Mimic(HEADER, r"id=(?P<x>\w)(?P<header>\d)", "").text_for(prompt) == "2"
    assert Mimic(HEADER, r"id=(\w+)", "").text_for(prompt) == "b2"
    assert Mimic(HEADER, r"id=\w+", "").text_for(prompt) == "id=b2"


def test_only_a_mimic_decodes_the_prompt() -> None:
    def prompt() -> str:
        raise AssertionError("a text script must not decode the prompt")

    assert text_to_write(Text("x"), prompt) == "x"
    assert text_to_write(Mimic(HEADER, "(z)", "d"), lambda: "z") == "z"


def test_the_modules_the_server_imports_import_only_the_stdlib_and_each_other() -> None:
    folder = Path(agentfuzz.puppet.__file__).parent
    allowed = {"agentfuzz.puppet.channel", "agentfuzz.puppet.forcing"}
    for name in ("channel.py", "forcing.py"):
        tree = ast.parse((folder / name).read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("agentfuzz")
            ):
                assert node.module in allowed, (name, node.module)
            if isinstance(node, ast.Import | ast.ImportFrom):
                top = (
                    node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                ) or ""
                assert top.split(".")[0] in {"agentfuzz", "__future__", *_STDLIB}, (name, top)


_STDLIB = {"collections", "dataclasses", "enum", "json", "re", "typing"}
