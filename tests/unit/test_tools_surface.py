"""Tools beyond the tidy ones: names no convention allows, names that collide once flattened,
and schemas with odd property names, enums, const, nesting, $ref and anyOf; the arguments a
history carries are still valid for them."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentfuzz.model.history import Api, Tool
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies import tools
from agentfuzz.strategies._tools import _ODD_SETS, ODD_NAMES, _parameters, render_arguments

FIND = settings(
    database=None, derandomize=True, max_examples=3000, suppress_health_check=list(HealthCheck)
)
CHECK = settings(database=None, max_examples=80, deadline=None)
ODD_SCHEMAS = range(8, 8 + len(_ODD_SETS) + 1)


@pytest.mark.parametrize("name", ODD_NAMES)
def test_every_odd_name_is_reached(name: str) -> None:
    found = find(
        tools(Profile(), "chat"), lambda ts: any(t.name == name for t in ts), settings=FIND
    )
    assert [t.name for t in found] == [name]


@pytest.mark.parametrize("index", ODD_SCHEMAS)
def test_valid_arguments_stay_valid_for_every_odd_schema(index: int) -> None:
    parameters = _parameters(index)
    Draft202012Validator.check_schema(parameters)
    tool = Tool(name="f", parameters=parameters)
    validator = Draft202012Validator(parameters)
    for seed in range(64):
        for kind in ("required", "full"):
            value = json.loads(render_arguments(tool, kind, seed))
            assert validator.is_valid(value), (kind, seed, value)
        broken = json.loads(render_arguments(tool, "missing_required", seed))
        assert parameters == {} or not validator.is_valid(broken) or not parameters.get("required")


def test_names_collide_once_flattened_only_on_responses() -> None:
    def clash(ts: tuple[Tool, ...]) -> bool:
        flat = [t.flat_name for t in ts]
        return len(set(flat)) < len(flat)

    found = find(tools(Profile(), "responses"), clash, settings=FIND)
    assert len(found) == 2 and {t.namespace is None for t in found} == {True, False}


@pytest.mark.parametrize("api", ["chat", "responses"])
@CHECK
@given(data=st.data())
def test_a_profile_without_them_keeps_its_tools_tidy(api: Api, data: st.DataObject) -> None:
    tidy = Profile(adversarial_names=False, adversarial_schemas=False, colliding_names=False)
    declared = data.draw(tools(tidy, api))
    assert not any(t.name in ODD_NAMES for t in declared)
    assert all(
        t.parameters.get("type") == "object" and "$defs" not in t.parameters for t in declared
    )
    assert len({t.flat_name for t in declared}) == len(declared)
