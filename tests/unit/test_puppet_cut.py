"""The ``puppet_cut`` oracle and the script dimensions it judges: a budget or a stop string that
cuts the script, odd tool names, near-miss ids. Each dimension is drawn, shrinks away, and a
faithful answer to it is silent."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import find, given, settings

from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall
from agentfuzz.oracles import check
from agentfuzz.puppet.formats import Call, Script, format_named
from agentfuzz.puppet.scripted import FIELD, carried, carry
from agentfuzz.strategies import puppet_cases
from agentfuzz.strategies._puppet_cuts import Cut, cut_case
from agentfuzz.strategies._scripts import scripts, tools_for

HERMES = format_named("hermes")
KIMI = format_named("kimi_k2")
SCRIPT = Script((Call("get_weather", {"city": "Paris"}), Call("search", {"q": "x"})))
WHOLE = [("get_weather", {"city": "Paris"}), ("search", {"q": "x"})]


BUDGET = Cut("max_tokens", 5)


def _case(script: Script = SCRIPT, cut: Cut | None = BUDGET, api: str = "chat") -> Case:
    history = History(tools=tools_for(HERMES, script), items=(UserMessage(text="Use it."),))
    options = Options(fields={FIELD: carry(HERMES, script)})
    case = Case(history=history, options=options, api=api)  # type: ignore[arg-type]
    return cut_case(case, cut)


def _answer(
    calls: list[tuple[str, Any]], text: str = "", path: str = "chat/completions", **kw: Any
) -> Observation:
    exchange = Exchange(url=f"http://x/v1/{path}", request={}, stream=False, status=200)
    made = tuple(
        ObservedCall(index=i, id=f"call_{i}", name=name, arguments=args)
        for i, (name, args) in enumerate(
            (n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls
        )
    )
    return Observation(exchange=exchange, text=text, tool_calls=made, **kw)


def _cut(case: Case, obs: Observation) -> list[str]:
    return [v.signature for v in check(case, obs, only=("puppet_cut",))]


def test_a_cut_answer_that_says_so_is_silent() -> None:
    assert _cut(_case(), _answer([], "<tool_call>\n{", finish_reason="length")) == []
    # A call written whole before the cut, and one cut inside its arguments (not JSON).
    half = [WHOLE[0], ("search", '{"q": "')]
    assert _cut(_case(), _answer(half, finish_reason="length")) == []
    # A script that fitted in the budget, reported whole.
    assert _cut(_case(), _answer(WHOLE, finish_reason="tool_calls")) == []
    assert _cut(_case(), _answer(WHOLE, finish_reason="stop")) == []


def test_a_cut_answer_reported_complete_is_found() -> None:
    # vLLM's way: the budget cut the second call, and the answer says tool_calls.
    half = [WHOLE[0], ("search", '{"q": "')]
    assert _cut(_case(), _answer(half, finish_reason="tool_calls")) == [
        "puppet_cut:hermes:complete"
    ]
    assert _cut(_case(), _answer([], "<tool_call>", finish_reason="stop")) == [
        "puppet_cut:hermes:complete"
    ]
    responses = _case(api="responses")
    assert _cut(responses, _answer(WHOLE[:1], path="responses", status="completed")) == [
        "puppet_cut:hermes:complete"
    ]
    assert _cut(responses, _answer(WHOLE[:1], path="responses", status="incomplete")) == []
    # Under stop strings a stop may end the turn: its finish_reason says nothing.
    stopped = _case(cut=Cut("stop", "</tool_call>"))
    assert _cut(stopped, _answer([], "", finish_reason="stop")) == []


def test_a_call_the_script_never_wrote_is_found() -> None:
    made_up = [("get_weather", {"city": "Lyon"})]  # no cut of "Paris" reads "Lyon"
    assert _cut(_case(), _answer(made_up, finish_reason="length")) == ["puppet_cut:hermes:invented"]
    stopped = _case(cut=Cut("stop", "is"))
    assert _cut(stopped, _answer(made_up, finish_reason="tool_calls")) == [
        "puppet_cut:hermes:invented"
    ]
    extra_key = [("get_weather", {"city": "Paris", "units": "C"})]
    assert _cut(_case(), _answer(extra_key, finish_reason="length")) == [
        "puppet_cut:hermes:invented"
    ]
    other = [("delete_everything", {})]
    assert _cut(_case(), _answer(other, finish_reason="length")) == ["puppet_cut:hermes:invented"]
    # A name cut short is not judged.
    assert _cut(_case(), _answer([("get_wea", {})], finish_reason="length")) == []


def test_what_a_cut_leaves_of_a_call_is_not_invented() -> None:
    """An XML parameter read to the end of the cut text, or a healed JSON prefix: the answer
    says it was cut, and the value is a prefix of the written one."""
    for left in ({"city": "Par"}, {"city": " Pa"}, {}):
        answer = _answer([("get_weather", left)], finish_reason="length")
        assert _cut(_case(), answer) == [], left
        stopped = _case(cut=Cut("stop", "is"))
        assert _cut(stopped, _answer([("get_weather", left)], finish_reason="stop")) == []


def test_not_judged_without_a_cut_or_with_a_forced_choice() -> None:
    assert _cut(_case(cut=None), _answer([], finish_reason="stop")) == []
    forced = _case().model_copy(
        update={"options": _case().options.model_copy(update={"tool_choice": "required"})}
    )
    assert _cut(forced, _answer([], finish_reason="stop")) == []
    # puppet_truth leaves every cut request to puppet_cut.
    assert check(_case(), _answer([], finish_reason="stop"), only=("puppet_truth",)) == []


def test_a_near_miss_id_is_written_and_not_judged() -> None:
    near = Script((Call("get_weather", {}, "call_0123456789abcdef"),))
    assert KIMI.unwritable(near) is None and KIMI.doubt(near) is not None
    assert "call_0123456789abcdef<|tool_call_argument_begin|>" in KIMI.write(near)
    sanitised = Script((Call("get_weather", {}, "functions_get_weather_0"),))
    assert KIMI.doubt(sanitised) is not None
    # An id that reads as NAME:N must still name its own call.
    assert KIMI.unwritable(Script((Call("get_weather", {}, "functions.search:0"),))) is not None
    history = History(tools=tools_for(KIMI, near), items=(UserMessage(text="Use it."),))
    case = Case(history=history, options=Options(fields={FIELD: carry(KIMI, near)}))
    dropped = _answer([], KIMI.write(near))
    assert check(case, dropped, only=("puppet_truth", "puppet_cut")) == []


def _dimensions(case: Case) -> set[str]:
    found = carried(case.options.fields)
    assert found is not None
    fmt, script, _ = found
    fields = set(case.options.fields) - {FIELD}
    seen = fields | ({"max_tokens"} if case.options.max_tokens is not None else set())
    declared = {t.name for t in case.history.tools}
    seen |= {"undeclared" for c in script.calls if c.name not in declared}
    seen |= {"dotted" for c in script.calls if "." in c.name}
    return seen | ({"near_miss"} if fmt.doubt(script) is not None else set())


def test_each_dimension_is_drawn() -> None:
    seen: set[str] = set()

    @settings(max_examples=300, database=None, derandomize=True)
    @given(puppet_cases(HERMES, "chat", False) | puppet_cases(KIMI, "chat", True))
    def each(case: Case) -> None:
        seen.update(_dimensions(case))

    each()
    wanted = {"max_tokens", "max_completion_tokens", "stop", "undeclared", "dotted", "near_miss"}
    assert wanted <= seen


def test_each_dimension_shrinks_to_the_plainest_script() -> None:
    plain = settings(max_examples=300, database=None, derandomize=True)
    stopped = find(
        puppet_cases(HERMES, "chat", False), lambda c: "stop" in c.options.fields, settings=plain
    )
    assert carried(stopped.options.fields)[1] == Script((Call("get_weather"),))  # type: ignore[index]
    assert stopped.options.fields["stop"] == "<tool_call>"  # the first marker written
    near = find(
        scripts(KIMI, ("get_weather",)),
        lambda s: KIMI.doubt(s) is not None and not s.unclosed,
        settings=plain,
    )
    assert near == Script((Call("get_weather", {}, "functions.get_weather"),))
    unclosed = find(scripts(KIMI, ("get_weather",)), lambda s: s.unclosed, settings=plain)
    assert unclosed == Script((Call("get_weather"),), unclosed=True)


def test_the_plainest_case_has_no_cut() -> None:
    plainest = find(puppet_cases(HERMES, "responses", True), lambda c: True)
    assert plainest.options.max_tokens is None and set(plainest.options.fields) == {FIELD}


@settings(max_examples=60, database=None, derandomize=True)
@given(puppet_cases(KIMI, "chat", False))
def test_drawn_scripts_never_repeat_an_id(case: Case) -> None:
    found = carried(case.options.fields)
    assert found is not None
    fmt, script, _ = found
    ids = [fmt.written_id(call, i) for i, call in enumerate(script.calls)]
    assert len(set(ids)) == len(ids)
