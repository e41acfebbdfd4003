"""Client ID policies: what each one does to the server's call ids (and item ids)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfuzz.model.history import ToolCall
from agentfuzz.model.plan import POLICIES, Policy
from agentfuzz.request.policies import rewrite_calls, rewrite_id, sanitize_id

WEATHER = ToolCall(id="call_7f3a", name="get_weather", arguments='{"city": "Paris"}')
NAMESPACED = ToolCall(id="call_91b0", name="get_time", namespace="weather", item_id="fc_91b0")
RESPONSES = ToolCall(id="call_5d2e", name="get_weather", item_id="fc_5d2e")
REMINTED = re.compile(r"call_[0-9a-f]{32}")
# Policies that leave every id alone; they act on the history around the calls instead.
KEEPING: tuple[Policy, ...] = ("passthrough", "drop-call", "drop-result", "strip-tools")


def test_every_policy_is_covered_here() -> None:
    assert set(POLICIES) == {"sanitize", "remint", "renumber-native", *KEEPING}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("functions.get_weather:0", "functions_get_weather_0"),
        ("call_Ab3-dE5_fG7", "call_Ab3-dE5_fG7"),
        ("call 1\t2", "call_1_2"),
        ("   ", "___"),
        ("café_☕", "caf___"),
        ("中文", "__"),
        ("call_😀", "call__"),
        ("a/b.c:d", "a_b_c_d"),
        ("", ""),
    ],
)
def test_sanitize_replaces_each_unsafe_character(raw: str, expected: str) -> None:
    assert sanitize_id(raw) == expected


@settings(max_examples=200, database=None)
@given(st.text())
def test_sanitize_keeps_length_and_yields_only_safe_characters(raw: str) -> None:
    clean = sanitize_id(raw)
    assert re.fullmatch(r"[A-Za-z0-9_-]*", clean)
    assert len(clean) == len(raw)
    assert sanitize_id(clean) == clean


def test_sanitize_policy_rewrites_the_id_and_drops_the_item_id() -> None:
    call = RESPONSES.model_copy(update={"id": "functions.get_weather:0"})
    (out,) = rewrite_calls("sanitize", (call,), 0)
    assert out.id == "functions_get_weather_0"
    assert out.item_id is None
    assert (out.name, out.arguments) == (call.name, call.arguments)


def test_sanitize_policy_leaves_an_already_safe_call_as_it_was() -> None:
    (out,) = rewrite_calls("sanitize", (RESPONSES,), 0)
    assert out == RESPONSES


def test_remint_is_deterministic_and_shaped_like_a_uuid_call_id() -> None:
    first = rewrite_id("remint", WEATHER, 3)
    assert REMINTED.fullmatch(first)
    assert rewrite_id("remint", WEATHER, 3) == first
    assert first != WEATHER.id


def test_remint_gives_distinct_ids_per_index_and_per_original_id() -> None:
    by_index = {rewrite_id("remint", WEATHER, i) for i in range(50)}
    assert len(by_index) == 50
    other = WEATHER.model_copy(update={"id": "call_other"})
    assert rewrite_id("remint", other, 0) != rewrite_id("remint", WEATHER, 0)


def test_remint_of_a_duplicated_id_still_gives_distinct_ids() -> None:
    twin = WEATHER.model_copy(update={"name": "get_time"})
    a, b = rewrite_calls("remint", (WEATHER, twin), 0)
    assert a.id != b.id
    assert REMINTED.fullmatch(a.id) and REMINTED.fullmatch(b.id)


def test_remint_drops_the_item_id_and_keeps_the_rest() -> None:
    (out,) = rewrite_calls("remint", (RESPONSES,), 7)
    assert out.item_id is None
    assert out.id == rewrite_id("remint", RESPONSES, 7)
    assert (out.name, out.namespace, out.arguments) == ("get_weather", None, "{}")


def test_renumber_native_uses_the_name_and_the_given_index() -> None:
    assert rewrite_id("renumber-native", WEATHER, 4) == "functions.get_weather:4"


def test_renumber_native_flattens_a_namespaced_tool() -> None:
    assert rewrite_id("renumber-native", NAMESPACED, 0) == "functions.weather__get_time:0"


def test_renumber_native_numbers_calls_from_first_index() -> None:
    out = rewrite_calls("renumber-native", (WEATHER, NAMESPACED, RESPONSES), 5)
    assert [c.id for c in out] == [
        "functions.get_weather:5",
        "functions.weather__get_time:6",
        "functions.get_weather:7",
    ]
    assert [c.item_id for c in out] == [None, None, None]
    assert out[1].namespace == "weather"


def test_renumber_native_leaves_an_id_that_is_already_the_native_one() -> None:
    native = RESPONSES.model_copy(update={"id": "functions.get_weather:2"})
    (out,) = rewrite_calls("renumber-native", (native,), 2)
    assert out == native


@pytest.mark.parametrize("policy", KEEPING)
def test_id_keeping_policies_change_nothing(policy: Policy) -> None:
    calls = (WEATHER, NAMESPACED, RESPONSES)
    assert rewrite_calls(policy, calls, 9) == calls
    assert [rewrite_id(policy, c, 0) for c in calls] == [c.id for c in calls]
    assert [c.item_id for c in rewrite_calls(policy, calls, 0)] == [None, "fc_91b0", "fc_5d2e"]


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_keeps_the_number_and_order_of_calls(policy: Policy) -> None:
    calls = (WEATHER, NAMESPACED, RESPONSES)
    out = rewrite_calls(policy, calls, 0)
    assert [(c.name, c.namespace) for c in out] == [(c.name, c.namespace) for c in calls]
    assert rewrite_calls(policy, (), 0) == ()
