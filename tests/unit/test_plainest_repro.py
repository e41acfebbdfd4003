"""What keeps a finding's repro at its plainest: a smaller number in a surface field is a
smaller repro (the store then keeps the ``n: 2`` Hypothesis shrank to, not an earlier
``n: 3`` of the same length), and a call to an undeclared tool names the cause of the
tool_choice complaint it brings (the fold then heads the finding with the repro that needs
no tool_choice)."""

from __future__ import annotations

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.oracles import implies
from agentfuzz.reduce.reduction import case_size


def _with(fields: dict[str, object]) -> Case:
    history = History(tools=(Tool(name="get_weather"),), items=(UserMessage(text="Use it."),))
    return Case(history=history, options=Options(fields=fields), api="chat", stream=False)


@pytest.mark.parametrize(
    ("plainer", "other"),
    [({"n": 2}, {"n": 3}), ({"max_tokens": 1}, {"max_tokens": 5}), ({"n": 1}, {"n": 2})],
)
def test_a_smaller_number_in_a_field_is_a_smaller_repro(
    plainer: dict[str, object], other: dict[str, object]
) -> None:
    assert case_size(_with(plainer)) < case_size(_with(other))


def test_a_flag_counts_as_no_number() -> None:
    assert case_size(_with({"logprobs": True})) == case_size(_with({"logprobs": True}))
    assert case_size(_with({"logprobs": True}))[-1] == 0


@pytest.mark.parametrize("kind", ["truncated", "undeclared", "namespace_mismatch", "empty_name"])
@pytest.mark.parametrize("choice", ["named:other_name", "allowed:other_name"])
def test_an_undeclared_call_implies_the_other_tool_complaint(kind: str, choice: str) -> None:
    undeclared = ("unknown_tool", f"unknown_tool:{kind}")
    other = ("tool_choice", f"tool_choice:{choice}")
    assert implies(undeclared, other)
    assert not implies(other, undeclared)


def test_an_undeclared_call_implies_no_other_tool_choice_complaint() -> None:
    undeclared = ("unknown_tool", "unknown_tool:truncated")
    for signature in ("tool_choice:none", "tool_choice:required", "tool_choice:named:no_call"):
        assert not implies(undeclared, ("tool_choice", signature))
