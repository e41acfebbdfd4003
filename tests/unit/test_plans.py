"""Session plans: what the profile allows, what the strategy reaches, and what it shrinks to."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis.errors import NoSuchExample

from agentfuzz.model.history import Api, Case, History, Options
from agentfuzz.model.plan import POLICIES, RESULT_KINDS, Plan, Step
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import DIMENSIONS, FORMS, HISTORY_DIMENSIONS, applies, used
from agentfuzz.strategies import plans

CHECK = settings(database=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
# Reachability needs only the first hit, so no shrinking.
FIND = settings(
    database=None,
    max_examples=2000,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
# Derandomized, generate and shrink only: the other phases leave find() short of the minimum.
SHRINK = settings(
    database=None,
    derandomize=True,
    phases=[Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
)
NARROW = Profile(session_turns=3, session_policies=("sanitize", "remint"), switch_modes=False)
MODES: tuple[tuple[Api, bool], ...] = (
    ("chat", False),
    ("chat", True),
    ("responses", False),
    ("responses", True),
)


@CHECK
@given(plans(NARROW, "responses", True, MODES))
def test_a_plan_stays_within_the_profile(p: Plan) -> None:
    assert 1 <= len(p.steps) <= 3
    assert {s.policy for s in p.steps} <= {"sanitize", "remint"}
    assert (p.api, p.stream) == ("responses", True)
    assert 1 <= len(p.tools) <= NARROW.max_tools
    assert all(s.api is None and s.stream is None for s in p.steps)


@CHECK
@given(plans(Profile(), "chat", False, MODES))
def test_asks_index_the_declared_tools_and_switches_name_a_given_mode(p: Plan) -> None:
    assert 1 <= len(p.steps) <= Profile().session_turns
    for step in p.steps:
        assert step.ask is None or 0 <= step.ask < len(p.tools)
        assert step.result in RESULT_KINDS
        # A switch sets both halves of a mode, or neither.
        assert (step.api is None) == (step.stream is None)
        if step.api is not None:
            assert (step.api, step.stream) in MODES


@CHECK
@given(plans(Profile(switch_modes=True), "chat", False, (("chat", False),)))
def test_a_single_mode_never_switches(p: Plan) -> None:
    assert all(s.api is None and s.stream is None for s in p.steps)


@CHECK
@given(plans(Profile(switch_modes=True), "chat", False))
def test_no_modes_given_never_switches(p: Plan) -> None:
    assert all(s.api is None and s.stream is None for s in p.steps)


@pytest.mark.parametrize("turns", [1, 2, 5])
def test_session_turns_bounds_the_number_of_steps(turns: int) -> None:
    longest = find(
        plans(Profile(session_turns=turns), "chat", False),
        lambda p: len(p.steps) == turns,
        settings=FIND,
    )
    assert len(longest.steps) == turns
    assert find(
        plans(Profile(session_turns=turns), "chat", False),
        lambda p: len(p.steps) >= turns,
        settings=FIND,
    )


def _reaches(wanted: Callable[[Step], bool]) -> bool:
    """Whether some plan of the default profile has a step for which ``wanted`` holds
    (``find`` raises ``NoSuchExample`` when none does)."""
    found = find(
        plans(Profile(), "chat", False, MODES),
        lambda p: any(wanted(s) for s in p.steps),
        settings=FIND,
    )
    return any(wanted(s) for s in found.steps)


def test_every_policy_result_kind_and_switch_is_reachable() -> None:
    for policy in POLICIES:
        assert _reaches(lambda s, x=policy: s.policy == x)  # type: ignore[misc]
    for kind in RESULT_KINDS:
        assert _reaches(lambda s, x=kind: s.result == x)  # type: ignore[misc]
    for mode in MODES:
        assert _reaches(lambda s, m=mode: (s.api, s.stream) == m)  # type: ignore[misc]
    assert _reaches(lambda s: s.ask is None)
    assert _reaches(lambda s: s.interject)
    assert _reaches(lambda s: s.ask == 2)


def test_the_minimal_plan_is_one_plain_step() -> None:
    minimal = find(plans(NARROW, "chat", False, MODES), lambda p: True, settings=SHRINK)
    assert minimal.steps == (Step(ask=0, result="json", policy="sanitize"),)
    (tool,) = minimal.tools
    assert (tool.name, tool.namespace) == ("get_weather", None)
    assert list(tool.parameters["properties"]) == ["city"]
    assert "required" not in tool.parameters
    assert (minimal.api, minimal.stream) == ("chat", False)


def test_the_minimal_plan_under_the_default_profile_is_passthrough_without_switch() -> None:
    minimal = find(plans(Profile(), "responses", True, MODES), lambda p: True, settings=SHRINK)
    assert minimal.steps == (Step(),)
    assert minimal.steps[0].policy == "passthrough"
    assert (minimal.api, minimal.stream) == ("responses", True)


# --- the request surface of a session's turns -----------------------------------------------


def _modes_of(p: Plan) -> list[tuple[Api, bool]]:
    """The api and stream mode each step's turn goes out in."""
    mode, out = (p.api, p.stream), []
    for step in p.steps:
        if step.api is not None and step.stream is not None:
            mode = (step.api, step.stream)
        out.append(mode)
    return out


@CHECK
@given(plans(Profile(), "chat", True, MODES))
def test_each_turns_fields_are_drawn_for_the_mode_it_goes_out_in(p: Plan) -> None:
    for step, (api, stream) in zip(p.steps, _modes_of(p), strict=True):
        case = Case(
            history=History(tools=p.tools),
            options=Options(fields=step.fields, forms=step.forms),
            api=api,
            stream=stream,
        )
        for name in used(case):
            if name in DIMENSIONS:
                assert applies(name, api, stream), (name, api, stream)
                assert name not in HISTORY_DIMENSIONS and name != "malformed"
        assert all(f in FORMS[api] for f in step.forms)
        # Only a Responses turn that drew previous_response_id chains.
        assert step.chain is None or "previous_response_id" in step.fields


def test_sessions_reach_the_surface_on_several_turns_and_chain_both_ways() -> None:
    assert _reaches(lambda s: "stop" in s.fields)
    assert _reaches(lambda s: bool(s.forms))
    assert _reaches(lambda s: "tool_choice" in s.fields)
    for chain in ("own", "other"):
        assert _reaches(lambda s, c=chain: s.chain == c)  # type: ignore[misc]
    several = find(
        plans(Profile(), "chat", False, MODES),
        lambda p: sum(bool(s.fields) for s in p.steps) >= 3,
        settings=FIND,
    )
    assert sum(bool(s.fields) for s in several.steps) >= 3


def test_a_session_with_no_surface_in_its_profile_carries_no_field() -> None:
    bare = Profile(surface=())
    with pytest.raises(NoSuchExample):
        find(
            plans(bare, "responses", True, MODES),
            lambda p: any(s.fields for s in p.steps),
            settings=FIND,
        )


def test_a_turn_that_needs_a_field_shrinks_to_one_step_carrying_it_alone() -> None:
    minimal = find(
        plans(Profile(), "chat", False, MODES),
        lambda p: any("stop" in s.fields for s in p.steps),
        settings=SHRINK,
    )
    (step,) = minimal.steps
    assert step.fields == {"stop": "\n"}
    assert (step.forms, step.chain, step.policy, step.api) == ((), None, "passthrough", None)
