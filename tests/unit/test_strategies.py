"""The case strategies reach every feature a profile allows, and never one it forbids."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    ForeignItem,
    History,
    Options,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.request.ids import ADVERSARIAL, FAMILIES, REPEATING, TIES, recognize
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies import cases, histories

DEFAULT = Profile()
QUIET = Profile(markup_texts=False, system_messages=False, adversarial_names=False)
# Reachability needs only the first hit; shrinking and the explain phase would cost minutes.
FIND = settings(
    database=None,
    max_examples=3000,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
# Derandomized: how far the shrinker gets is a property of one search, so pin the search.
SHRINK = settings(
    database=None,
    derandomize=True,
    phases=[Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
)
CHECK = settings(
    database=None, max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
PLAIN = Profile(
    name="plain",
    id_families=[f for f in FAMILIES if f not in REPEATING],
    adversarial_ids=False,
    mix_families=False,
    namespaced_tools=False,
    namespace_tools=False,
    reasoning=False,
    malformed_arguments=False,
    schema_violating_arguments=False,
    dropped_calls=False,
    orphan_results=False,
    duplicate_ids=False,
    tool_choices=[],
    omit_tools_last=False,
    temperatures=[],
    seeds=[],
    max_tokens=[],
    surface=[],
    adversarial_names=False,
    colliding_names=False,
    adversarial_schemas=False,
    system_messages=False,
    markup_texts=False,
)


def calls(case: Case) -> tuple[ToolCall, ...]:
    return case.history.calls


def results(case: Case) -> list[ToolResult]:
    return [it for it in case.history.items if isinstance(it, ToolResult)]


def assistants(case: Case) -> list[AssistantMessage]:
    return [it for it in case.history.items if isinstance(it, AssistantMessage)]


def tool_of(case: Case, call: ToolCall) -> Tool:
    return next(t for t in case.history.tools if t.flat_name == call.flat_name)


def arguments_of(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments)
    except json.JSONDecodeError:
        return None


def is_malformed(call: ToolCall) -> bool:
    return not isinstance(arguments_of(call), dict)


def violates_schema(case: Case, call: ToolCall) -> bool:
    args = arguments_of(call)
    if not isinstance(args, dict):
        return False
    try:
        jsonschema.validate(args, tool_of(case, call).parameters)
    except jsonschema.ValidationError:
        return True
    return False


def dropped(case: Case) -> bool:
    answered = {r.call_id for r in results(case)}
    return any(c.id not in answered for c in calls(case))


def orphaned(case: Case) -> bool:
    made = {c.id for c in calls(case)}
    return any(r.call_id not in made for r in results(case))


def duplicate_in_turn(case: Case) -> bool:
    return any(len({c.id for c in a.tool_calls}) < len(a.tool_calls) for a in assistants(case))


def duplicate_across_turns(case: Case) -> bool:
    seen: set[str] = set()
    for message in assistants(case):
        mine = {c.id for c in message.tool_calls}
        if mine & seen:
            return True
        seen |= mine
    return False


def parallel(case: Case) -> bool:
    return any(len(a.tool_calls) >= 2 for a in assistants(case))


def named_like(marker: str) -> Callable[[Case], bool]:
    return lambda case: any(marker in t.name for t in case.history.tools)


FEATURES: dict[str, tuple[str, Callable[[Case], bool]]] = {
    "parallel calls": ("chat", parallel),
    "dropped call": ("chat", dropped),
    "orphan result": ("chat", orphaned),
    "duplicate id in a turn": ("chat", duplicate_in_turn),
    "duplicate id across turns": ("chat", duplicate_across_turns),
    "mcp tool name": ("chat", named_like("mcp__")),
    "dotted tool name": ("chat", named_like(".")),
    "slashed tool name": ("chat", named_like("/")),
    "flattened tool name": (
        "chat",
        lambda c: any("__" in t.name and "mcp" not in t.name for t in c.history.tools),
    ),
    "namespace tool": ("responses", lambda c: any(t.namespace for t in c.history.tools)),
    "call into a namespace": ("responses", lambda c: any(x.namespace for x in calls(c))),
    "assistant reasoning": ("chat", lambda c: any(a.reasoning is not None for a in assistants(c))),
    "reasoning item": (
        "responses",
        lambda c: any(isinstance(i, ReasoningItem) for i in c.history.items),
    ),
    "malformed arguments": ("chat", lambda c: any(is_malformed(x) for x in calls(c))),
    "schema violation": ("chat", lambda c: any(violates_schema(c, x) for x in calls(c))),
    "tools omitted": ("chat", lambda c: not c.options.include_tools),
    "tool_choice auto": ("chat", lambda c: c.options.tool_choice == "auto"),
    "tool_choice none": ("chat", lambda c: c.options.tool_choice == "none"),
    "tool_choice required": ("chat", lambda c: c.options.tool_choice == "required"),
    "tool_choice named": (
        "chat",
        lambda c: c.options.tool_choice in {t.flat_name for t in c.history.tools},
    ),
    "ends on a tool result": ("chat", lambda c: isinstance(c.history.items[-1], ToolResult)),
    "several turns with calls": (
        "chat",
        lambda c: sum(1 for a in assistants(c) if a.tool_calls) >= 2,
    ),
    "seed, temperature and max_tokens": (
        "chat",
        lambda c: None not in (c.options.seed, c.options.temperature, c.options.max_tokens),
    ),
}


def family_seen(family: str) -> Callable[[Case], bool]:
    accepted = {family} | TIES.get(family, frozenset())
    return lambda case: any(recognize(c.id) in accepted for c in calls(case))


for _family in FAMILIES + ADVERSARIAL:
    FEATURES[f"id family {_family}"] = ("chat", family_seen(_family))


@functools.cache
def reached(api: str) -> frozenset[str]:
    """Features seen in one run of generated cases, stopping once all of them were seen."""
    wanted = {name for name, (where, _) in FEATURES.items() if where == api}
    seen: set[str] = set()

    def record(case: Case) -> bool:
        seen.update(name for name in wanted - seen if FEATURES[name][1](case))
        return seen == wanted

    with contextlib.suppress(NoSuchExample):
        find(cases(DEFAULT, api, False), record, settings=FIND)  # type: ignore[arg-type]
    return frozenset(seen)


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_reaches_feature(feature: str) -> None:
    assert feature in reached(FEATURES[feature][0])


@pytest.mark.parametrize(("api", "stream"), [("chat", False), ("responses", True)])
def test_minimal_case_is_one_user_message(api: str, stream: bool) -> None:
    found = find(cases(DEFAULT, api, stream), lambda c: True, settings=SHRINK)  # type: ignore[arg-type]
    assert found.history.items == (UserMessage(text="Use get_weather."),)
    assert [t.name for t in found.history.tools] == ["get_weather"]
    assert found.options == Options()
    assert (found.api, found.stream) == (api, stream)


def test_failure_shrinks_to_one_call_turn() -> None:
    """One plain call and its result: ended where the server speaks, or by the user's next ask
    (the agent loop's skeleton is as few choices), which the structural reduction that follows
    in a run then drops when the failure does not need it."""
    found = find(cases(DEFAULT, "chat", False), lambda c: len(calls(c)) > 0, settings=SHRINK)
    items = found.history.items
    assert [type(i) for i in items[:3]] == [UserMessage, AssistantMessage, ToolResult]
    assert items[3:] in ((), (UserMessage(text="Use get_weather."),))
    (call,) = calls(found)
    assert call.id == "call_" + "a" * 24
    assert call.arguments == json.dumps({})
    reduced = reduce_case(found, lambda c: len(calls(c)) > 0)
    assert len(reduced.history.items) == 3 and reduced.history.size == 4


@pytest.mark.parametrize("api", ["chat", "responses"])
@CHECK
@given(data=st.data())
def test_generated_cases_are_well_formed(api: str, data: st.DataObject) -> None:
    case = data.draw(cases(DEFAULT, api, False))  # type: ignore[arg-type]
    assert Case.model_validate(case.model_dump()) == case
    assert Case.model_validate_json(case.model_dump_json()) == case
    history = case.history
    assert 1 <= len(history.tools) <= DEFAULT.max_tools
    # Flat names are distinct, but on Responses under colliding_names, where a plain tool may be
    # named what a namespaced one flattens to (``tools``' docstring): there only pairs differ.
    colliding = api == "responses" and DEFAULT.namespace_tools and DEFAULT.colliding_names
    key = (lambda t: (t.namespace, t.name)) if colliding else (lambda t: t.flat_name)
    assert len({key(t) for t in history.tools}) == len(history.tools)
    assert isinstance(history.items[-1], UserMessage | ToolResult | ForeignItem)
    assert isinstance(history.items[0], UserMessage | SystemMessage)
    # required_calls asks for two tools anew after tool results: one turn past the profile's.
    asked = 1 if case.relation == "required_calls" else 0
    assert sum(isinstance(i, UserMessage) for i in history.items) <= DEFAULT.max_turns + asked
    assert all(len(a.tool_calls) <= DEFAULT.max_parallel_calls for a in assistants(case))
    declared = {(t.name, t.namespace) for t in history.tools}
    assert all((c.name, c.namespace) in declared for c in calls(case))
    if api == "chat":
        assert not any(t.namespace for t in history.tools)
        assert not any(isinstance(i, ReasoningItem) for i in history.items)
    if case.options.tool_choice not in (None, "auto", "none", "required"):
        assert case.options.tool_choice in {t.flat_name for t in history.tools}
    # Markup only where a profile asks for it: free text never holds any by chance.
    case = data.draw(cases(QUIET, api, False))  # type: ignore[arg-type]
    history = case.history
    assert not any(isinstance(i, SystemMessage) for i in history.items)
    texts = [i.text for i in history.items if isinstance(i, UserMessage | ReasoningItem)]
    texts += [a.text or "" for a in assistants(case)] + [
        a.reasoning or "" for a in assistants(case)
    ]
    texts += [r.output for r in results(case)]
    assert not any(
        marker in t for t in texts for marker in ("<|", "|>", "<tool_call>", "[TOOL_CALLS]")
    )


@pytest.mark.parametrize("api", ["chat", "responses"])
@CHECK
@given(data=st.data())
def test_features_turned_off_never_appear(api: str, data: st.DataObject) -> None:
    case = data.draw(cases(PLAIN, api, True))  # type: ignore[arg-type]
    assert case.options == Options()
    assert not dropped(case) and not orphaned(case)
    ids = [c.id for c in calls(case)]
    assert len(set(ids)) == len(ids)
    assert all(t.namespace is None and t.name.isidentifier() for t in case.history.tools)
    assert not any(isinstance(i, ReasoningItem) for i in case.history.items)
    assert all(a.reasoning is None for a in assistants(case))
    for call in calls(case):
        assert not is_malformed(call) and not violates_schema(case, call)
    families = {recognize(i) for i in ids}
    assert len(families) <= 1
    assert families <= set(PLAIN.id_families)


@CHECK
@given(data=st.data())
def test_single_family_profile_and_no_calls(data: st.DataObject) -> None:
    kimi = Profile(
        id_families=["kimi_native"],
        adversarial_ids=False,
        duplicate_ids=False,
        adversarial_names=False,
    )
    case = data.draw(cases(kimi, "chat", False))
    assert all(recognize(c.id) == "kimi_native" for c in calls(case))
    indexes = [int(c.id.rsplit(":", 1)[1]) for c in calls(case)]
    assert indexes == sorted(indexes) and len(set(indexes)) == len(indexes)
    quiet = Profile(max_parallel_calls=0, max_turns=2)
    history: History = data.draw(histories(quiet, "chat"))
    assert history.calls == ()
    assert sum(isinstance(i, UserMessage) for i in history.items) <= 2


def test_the_stream_relation_stays_within_the_run_modes() -> None:
    """Issue 41 item 7: under ``--no-stream`` no case is paired with its streamed twin."""
    from agentfuzz.strategies._relations import allowed

    profile = Profile()
    assert "stream" in allowed(profile, "chat", False)
    assert "stream" not in allowed(profile, "chat", False, (("chat", False),))
    assert "stream" not in allowed(profile, "responses", True, (("responses", True),))
    assert "stream" in allowed(profile, "chat", True, (("chat", True), ("chat", False)))


def test_every_id_shape_is_drawn_as_often_as_any_other() -> None:
    """The few shapes that carry an index are not outnumbered by the many random ones."""
    strata = Profile().family_strata
    assert strata[0][0] == FAMILIES[0]
    assert sorted(f for s in strata for f in s) == sorted(FAMILIES)
    assert ("kimi_native",) in strata and ("kimi_bare",) in strata
    narrow = Profile(id_families=("kimi_native", "openai_chat"), id_weights={"kimi_native": 3})
    assert narrow.family_strata == (("kimi_native",) * 3, ("openai_chat",))
