"""Repros repaired toward valid conversations, keeping only the flaws the fault needs."""

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.reduce.validity import NEEDS, RESULT_TEXT, USER_TEXT, flaws, repair

TOOLS = (Tool(name="get_weather"),)


def _case(*items: object, api: str = "chat") -> Case:
    return Case(history=History(tools=TOOLS, items=tuple(items)), api=api)  # type: ignore[arg-type]


def _call(id: str) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(id=id, name="get_weather"),))


def test_the_shrunk_seed_000_shape_breaks_three_rules() -> None:
    # What the shrinker used to hand out: empty user turn, a call with no result, user again.
    case = _case(UserMessage(text=""), _call("call_0"), UserMessage(text=""))
    assert flaws(case) == ("empty_user_text", "call_without_result")


def test_a_valid_conversation_has_no_flaw_on_either_api() -> None:
    items = (UserMessage(text="hi"), _call("a"), ToolResult(call_id="a", output="x"))
    assert flaws(_case(*items)) == () and flaws(_case(*items, api="responses")) == ()


def test_results_out_of_place_break_chat_only() -> None:
    items = (
        UserMessage(text="hi"),
        _call("a"),
        UserMessage(text="and?"),
        ToolResult(call_id="a", output="x"),
    )
    assert flaws(_case(*items)) == ("result_not_next",)
    assert flaws(_case(*items, api="responses")) == ()


def test_orphans_blank_and_shared_ids() -> None:
    case = _case(
        UserMessage(text="hi"),
        AssistantMessage(
            tool_calls=(ToolCall(id="", name="get_weather"), ToolCall(id="", name="get_weather"))
        ),
        ToolResult(call_id="", output="x"),
        ToolResult(call_id="gone", output="y"),
    )
    assert {"blank_call_id", "shared_call_id", "result_without_call"} <= set(flaws(case))


def test_a_responses_turn_chained_onto_a_stored_answer_answers_its_calls() -> None:
    """With ``previous_response_id`` the call lives in the stored answer: no orphan there."""
    result = ToolResult(call_id="functions.get_weather:0", output="x")
    chained = _case(result, api="responses")
    chained = chained.model_copy(
        update={"options": Options(fields={"previous_response_id": "resp_1"})}
    )
    assert flaws(chained) == ()
    assert flaws(_case(result, api="responses")) == ("result_without_call",)


def test_a_malformed_body_is_never_judged() -> None:
    case = _case(UserMessage(text=""), _call("a"))
    broken = case.model_copy(update={"options": Options(malformed="not_json")})
    assert flaws(broken) == ()


def test_repair_makes_it_valid_when_the_fault_does_not_care() -> None:
    case = _case(UserMessage(text=""), _call("call_0"), UserMessage(text=""))
    tried: list[Case] = []

    def fails(candidate: Case) -> bool:
        tried.append(candidate)
        return True

    fixed, needs = repair(case, fails)
    assert needs == () and flaws(fixed) == ()
    assert len(tried) == 1, "all repairs at once cost one try"
    items = fixed.history.items
    assert isinstance(items[0], UserMessage) and items[0].text == USER_TEXT
    assert items[2] == ToolResult(call_id="call_0", output=RESULT_TEXT)


def test_repair_keeps_the_flaw_the_fault_needs_and_fixes_the_rest() -> None:
    case = _case(UserMessage(text=""), _call("call_0"), UserMessage(text="go on"))

    def needs_no_result(candidate: Case) -> bool:
        return not any(isinstance(it, ToolResult) for it in candidate.history.items)

    fixed, needs = repair(case, needs_no_result)
    assert needs == ("call_without_result",)
    assert fixed.history.items[0] == UserMessage(text=USER_TEXT)
    assert all(code in NEEDS for code in needs)


def test_repair_leaves_a_case_that_never_fails_as_it_was() -> None:
    case = _case(UserMessage(text=""), _call("call_0"), UserMessage(text=""))
    assert repair(case, lambda _: False) == (case, flaws(case))
