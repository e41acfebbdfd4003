"""Scripted requests carry the request surface (issue 42, step 3): each field either leaves the
script's truth standing, so ``puppet_truth`` still judges the answer, or is named by
``puppet.surface`` as one that takes the writing from the script or sways its reading."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import find, given, settings

from agentfuzz.model.history import Case
from agentfuzz.puppet.formats import format_named
from agentfuzz.puppet.scripted import FIELD, carried
from agentfuzz.puppet.surface import sways_reading, takes_writing
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import DIMENSIONS
from agentfuzz.strategies import puppet_cases

HERMES = format_named("hermes")
PROFILE = Profile()
BUDGETS = set(DIMENSIONS["budget"].fields)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"text": {"format": {"type": "json_schema", "name": "a", "schema": {}}}}, "text.format"),
        ({"structured_outputs": {"json": {}}}, "structured_outputs"),
        ({"guided_regex": "[a-z]"}, "guided_regex"),
        ({"grammar": 'root ::= "yes"'}, "grammar"),
        ({"logit_bias": {"50256": -100}}, "logit_bias"),
        ({"ignore_eos": True}, "ignore_eos"),
        ({"min_tokens": 4}, "min_tokens"),
        ({"n": 2}, "n"),
        ({"tool_choice": "auto"}, "tool_choice"),
    ],
)
def test_fields_that_take_the_writing_are_named(fields: dict[str, Any], named: str) -> None:
    assert takes_writing(fields) == named


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"response_format": {"type": "text"}},
        {"text": {"format": {"type": "text"}}},
        {"n": 1, "min_tokens": 0, "ignore_eos": False, "logit_bias": {}},
        {"temperature": 1.5, "top_k": 1, "min_p": 0.1, "presence_penalty": 2.0},
        {"logprobs": True, "top_logprobs": 5, "user": "u", "metadata": {"k": "v"}},
    ],
)
def test_fields_that_leave_the_writing_alone(fields: dict[str, Any]) -> None:
    assert takes_writing(fields) is None
    assert sways_reading(fields, 2) is None


def test_fields_that_sway_the_reading_are_named() -> None:
    assert sways_reading({"chat_template_kwargs": {"enable_thinking": False}}, 1) == (
        "chat_template_kwargs"
    )
    assert sways_reading({"chat_template_kwargs": {}}, 1) is None
    assert sways_reading({"reasoning": {"effort": "low"}}, 1) == "reasoning"
    # One call at most, or a cap on calls: only over more calls than that.
    assert sways_reading({"parallel_tool_calls": False}, 2) == "parallel_tool_calls"
    assert sways_reading({"parallel_tool_calls": False}, 1) is None
    assert sways_reading({"max_tool_calls": 1}, 2) == "max_tool_calls"
    assert sways_reading({"max_tool_calls": 2}, 2) is None


def _surface(case: Case) -> set[str]:
    return set(case.options.fields) - {FIELD}


def test_scripted_cases_draw_the_profiles_surface_and_shrink_without_it() -> None:
    cases = puppet_cases(HERMES, "chat", False, PROFILE)
    plenty = settings(max_examples=2000, database=None)
    wide = find(cases, lambda c: len(_surface(c) - {"stop"} - BUDGETS) >= 2, settings=plenty)
    assert carried(wide.options.fields) is not None
    # The plainest case has no field but the script.
    plain = find(cases, lambda c: True)
    assert _surface(plain) == set() and plain.options.forms == ()
    forms = find(cases, lambda c: bool(c.options.forms), settings=plenty)
    assert forms.options.forms


def test_scripted_cases_keep_one_budget_and_their_script() -> None:
    @settings(max_examples=200, derandomize=True, database=None)
    @given(puppet_cases(HERMES, "chat", False, PROFILE))
    def each(case: Case) -> None:
        found = carried(case.options.fields)
        assert found is not None and found[2] == HERMES.write(found[1])
        # A drawn cut is the request's only budget: the surface's budget does not join it.
        budgets = [f for f in case.options.fields if f in BUDGETS]
        budgets += ["max_tokens"] * (case.options.max_tokens is not None)
        assert len(budgets) <= 1, budgets

    each()
