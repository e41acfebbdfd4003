import re

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Item,
    Options,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.reduce.reduction import case_size, reduce_case

MISTRAL = re.compile(r"[A-Za-z0-9]{9}")


def _big_case() -> Case:
    calls = (
        ToolCall(id="call_one", name="get_weather"),
        ToolCall(id="abcDEF123", name="search"),
    )
    items = (
        UserMessage(text="hello"),
        UserMessage(text="Use get_weather and search."),
        ReasoningItem(text="thinking"),
        AssistantMessage(text="sure", reasoning="plan", tool_calls=calls),
        ToolResult(call_id="call_one", output="sunny"),
        ToolResult(call_id="abcDEF123", output="found"),
        ToolResult(call_id="orphan", output="?"),
        AssistantMessage(text="done"),
        UserMessage(text="again"),
    )
    tools = (Tool(name="get_weather"), Tool(name="search"), Tool(name="unused"))
    return Case(
        history=History(tools=tools, items=items),
        options=Options(temperature=0.7, seed=3, max_tokens=16),
        api="responses",
    )


def _mistral_call(case: Case) -> bool:
    return any(MISTRAL.fullmatch(c.id) for c in case.history.calls)


def test_reduces_to_the_smallest_well_formed_history() -> None:
    seen: list[Case] = []

    def fails(case: Case) -> bool:
        seen.append(case)
        return _mistral_call(case)

    small = reduce_case(_big_case(), fails)
    # One user message, the assistant with the one call that matters, and whatever closes the
    # history (its result, or the next user message: a dropped call is also well formed).
    assert len(small.history.items) == 3
    assert isinstance(small.history.items[0], UserMessage)
    assert isinstance(small.history.items[2], UserMessage | ToolResult)
    (call,) = small.history.calls
    assert call.id == "abcDEF123"
    assert [t.name for t in small.history.tools] == ["search"]
    assert small.options == Options()
    assert small.history.items[1] == AssistantMessage(tool_calls=(call,))
    # Every candidate tried was well formed: it opens with the user and ends on user or result.
    for case in seen:
        assert isinstance(case.history.items[0], UserMessage)
        assert isinstance(case.history.items[-1], UserMessage | ToolResult)
        answered = {it.call_id for it in case.history.items if isinstance(it, ToolResult)}
        made = {c.id for c in case.history.calls} | {"orphan"}
        assert answered <= made


def test_a_case_that_stops_failing_is_left_alone() -> None:
    case = _big_case()
    assert reduce_case(case, lambda _: False) == case


def test_budget_bounds_the_calls() -> None:
    calls = 0

    def fails(case: Case) -> bool:
        nonlocal calls
        calls += 1
        return _mistral_call(case)

    reduce_case(_big_case(), fails, budget=3)
    assert calls == 3


def test_size_counts_assistant_text_before_json_length() -> None:
    call = ToolCall(id="x", name="t")
    with_text = AssistantMessage(text="", reasoning="", tool_calls=(call,))
    bare = AssistantMessage(tool_calls=(call,))

    def case(it: AssistantMessage) -> Case:
        return Case(history=History(tools=(Tool(name="t"),), items=(UserMessage(text="u"), it)))

    assert case_size(case(bare)) < case_size(case(with_text))


def test_system_prompts_may_open_a_history_and_are_dropped_like_any_item() -> None:
    call = ToolCall(id="abcDEF123", name="search")
    items = (
        SystemMessage(text="be brief"),
        SystemMessage(text="tools first", role="developer"),
        UserMessage(text="Use search."),
        AssistantMessage(tool_calls=(call,)),
        ToolResult(call_id="abcDEF123", output="found"),
    )
    case = Case(history=History(tools=(Tool(name="search"),), items=items))
    seen: list[Case] = []

    def fails(candidate: Case) -> bool:
        seen.append(candidate)
        return _mistral_call(candidate)

    small = reduce_case(case, fails)
    assert not any(isinstance(it, SystemMessage) for it in small.history.items)
    assert isinstance(small.history.items[0], UserMessage)

    # Needing the developer prompt keeps it, ahead of the user message.
    def needs_developer(candidate: Case) -> bool:
        return any(
            isinstance(it, SystemMessage) and it.role == "developer"
            for it in candidate.history.items
        )

    kept = reduce_case(case, needs_developer).history.items
    # (its text emptied: the failure did not need it)
    assert kept[0] == SystemMessage(text="", role="developer")
    assert isinstance(kept[1], UserMessage)


def _long_session(turns: int) -> Case:
    items: list[Item] = []
    for n in range(turns):
        call = ToolCall(id=f"call_{n:024x}", name="search", arguments='{"q": "x"}')
        items += [
            UserMessage(text=f"turn {n}: use search"),
            AssistantMessage(tool_calls=(call,)),
            ToolResult(call_id=call.id, output=f"result {n}"),
            AssistantMessage(text=f"answer {n}"),
        ]
    items.append(UserMessage(text="and again"))
    return Case(
        history=History(tools=(Tool(name="search"), Tool(name="other")), items=tuple(items))
    )


def test_a_long_session_reduces_in_few_tries_by_cutting_chunks_first() -> None:
    needle = "call_" + f"{17:024x}"
    tries = 0

    def fails(candidate: Case) -> bool:
        nonlocal tries
        tries += 1
        # Fails while the 18th turn's call is in the history and the history ends with the user.
        return any(c.id == needle for c in candidate.history.calls) or any(
            isinstance(c, ToolResult) and c.call_id == needle for c in candidate.history.items
        )

    small = reduce_case(_long_session(40), fails, budget=400)
    assert small.history.size <= 4
    assert tries < 150  # one at a time would need well over 160 tries for 161 items


def test_simplification_plain_ids_and_empty_texts_when_the_failure_allows() -> None:
    small = reduce_case(_long_session(2), lambda c: len(c.history.calls) >= 1)
    (call,) = small.history.calls
    assert call.id == "call_0" and call.arguments == "{}"
    assert all(it.text == "" for it in small.history.items if isinstance(it, UserMessage))


def test_the_budget_returns_the_smallest_failing_case_seen() -> None:
    case = _long_session(10)
    small = reduce_case(case, lambda c: True, budget=3)
    assert case_size(small) < case_size(case)


def _one(options: Options, api: str = "chat", *items: Item) -> Case:
    history = History(tools=(Tool(name="f"),), items=items or (UserMessage(text="hi"),))
    return Case(api=api, history=history, options=options)


def test_a_broken_body_is_reduced_to_the_plainest_break_that_still_fails() -> None:
    # Any broken body fails: the plainest break is JSON cut short.
    reduced = reduce_case(
        _one(Options(malformed="deep_nesting")), lambda c: c.options.malformed is not None
    )
    assert reduced.options.malformed == "truncated"


def test_each_knob_goes_alone_when_the_fault_needs_a_form_beside_it() -> None:
    # Resetting every knob at once drops the form too; each knob alone keeps it.
    options = Options(tool_choice="auto", max_tokens=5, seed=1, temperature=0.5, forms=("parts",))
    reduced = reduce_case(_one(options), lambda c: "parts" in c.options.forms)
    assert reduced.options == Options(forms=("parts",))


def test_a_form_is_swapped_for_a_plainer_one_when_that_still_fails() -> None:
    # Content as a list fails, whichever part makes it one: text parts are the plainer form.
    def fails(case: Case) -> bool:
        return bool({"parts", "image_part"} & set(case.options.forms))

    reduced = reduce_case(_one(Options(forms=("image_part",)), "responses"), fails)
    assert reduced.options.forms == ("parts",)


def test_a_request_chained_onto_a_stored_answer_may_open_with_a_result() -> None:
    chained = Options(fields={"previous_response_id": "resp_1"})
    items = (ToolResult(call_id="c", output="x"), UserMessage(text="and?"))
    reduced = reduce_case(
        _one(chained, "responses", *items), lambda c: "previous_response_id" in c.options.fields
    )
    assert len(reduced.history.items) == 1 and reduced.options == chained
