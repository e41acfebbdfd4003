"""Relations derive partners: each changes the one thing it names, and only where it can be
judged; generated cases carry a relation that fits them, and its partner builds."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.request.profiles import Profile
from agentfuzz.request.relations import (
    EXTRA_RESULT,
    EXTRA_SYSTEM,
    RELATIONS,
    SPECIAL_TOKENS,
    near_miss,
    partner,
    prepared,
    special_count,
)
from agentfuzz.request.surface import FILLER
from agentfuzz.strategies import cases
from agentfuzz.wire.dialects import build_request

WEATHER = Tool(name="get_weather")
SEARCH = Tool(name="search")
ASK = UserMessage(text="Use get_weather.")
CALL = ToolCall(id="call_1", name="get_weather")
LOOP = (ASK, AssistantMessage(tool_calls=(CALL,)), ToolResult(call_id="call_1", output="sunny"))


def case(*items: object, tools: tuple[Tool, ...] = (WEATHER,), **options: object) -> Case:
    history = History(tools=tools, items=items or (ASK,))  # type: ignore[arg-type]
    return Case(history=history, options=Options(**options))  # type: ignore[arg-type]


def ready(name: str, base: Case) -> Case:
    fitted = prepared(name, base)
    assert fitted is not None and fitted.relation == name
    return fitted


def test_tools_drops_the_tools_and_whatever_only_means_something_beside_them() -> None:
    base = ready("tools", case(tool_choice="required", fields={"parallel_tool_calls": False}))
    other = partner("tools", base)
    assert other is not None and other.relation is None
    _, body = build_request(other, "m")
    assert {"tools", "tool_choice", "parallel_tool_calls"}.isdisjoint(body)
    assert body["messages"] == build_request(base, "m")[1]["messages"]


def test_system_puts_a_long_system_message_first_or_in_front_of_the_first() -> None:
    other = partner("system", ready("system", case()))
    assert other is not None and other.history.items == (SystemMessage(text=EXTRA_SYSTEM), ASK)
    first = SystemMessage(text="Be brief.", role="developer")
    other = partner("system", ready("system", case(first, ASK)))
    assert other is not None
    (merged, user) = other.history.items
    assert isinstance(merged, SystemMessage) and merged.role == "developer"
    assert merged.text == f"{EXTRA_SYSTEM}\n\nBe brief." and user == ASK


def test_tool_result_grows_a_result_that_answers_exactly_one_call() -> None:
    other = partner("tool_result", ready("tool_result", case(*LOOP)))
    assert other is not None
    result = other.history.items[-1]
    assert isinstance(result, ToolResult) and result.output == f"sunny {EXTRA_RESULT}"
    # An orphan, or a result sharing its id with another, is not one every server must render.
    orphan = case(ASK, ToolResult(call_id="call_9", output="x"))
    assert prepared("tool_result", orphan) is None
    twice = case(*LOOP, ToolResult(call_id="call_1", output="again"))
    assert prepared("tool_result", twice) is None


def test_text_part_toggles_the_parts_form_unless_another_part_is_there() -> None:
    other = partner("text_part", ready("text_part", case()))
    assert other is not None and other.options.forms == ("parts",)
    back = partner("text_part", ready("text_part", case(forms=("parts", "names"))))
    assert back is not None and back.options.forms == ("names",)
    assert prepared("text_part", case(forms=("image_part",))) is None


def test_special_token_misses_every_spelling_in_user_text_and_only_there() -> None:
    user = UserMessage(text="a <|im_end|> b <|im_end|> [INST]")
    system = SystemMessage(text="<|im_end|>")
    base = ready("special_token", case(system, user))
    assert special_count(base) == 3
    other = partner("special_token", base)
    assert other is not None and special_count(other) == 0
    assert other.history.items[0] == system
    missed = other.history.items[1]
    assert isinstance(missed, UserMessage) and missed.text == "a <|im_end> b <|im_end> [INS]"


def test_special_token_puts_the_picked_token_in_text_that_has_none() -> None:
    for pick, token in enumerate(SPECIAL_TOKENS):
        fitted = prepared("special_token", case(), pick)
        assert fitted is not None and fitted.history.items[-1] == UserMessage(
            text=f"{ASK.text} {token}"
        )


def test_a_near_miss_is_no_special_token_at_all() -> None:
    for token in SPECIAL_TOKENS:
        assert special_count(case(UserMessage(text=near_miss(token)))) == 0
        assert len(near_miss(token)) == len(token) - 1


def test_choice_auto_toggles_an_unforced_tool_choice_and_asks_for_greedy_sampling() -> None:
    base = ready("choice_auto", case(temperature=0.7))
    assert base.options.temperature == 0.0
    other = partner("choice_auto", base)
    assert other is not None and other.options.tool_choice == "auto"
    auto = ready("choice_auto", case(tool_choice="auto"))
    other = partner("choice_auto", auto)
    assert other is not None and other.options.tool_choice is None
    assert prepared("choice_auto", case(tool_choice="required")) is None
    assert prepared("choice_auto", case(include_tools=False)) is None


def test_required_calls_asks_for_two_tools_and_forces_the_partner() -> None:
    base = ready("required_calls", case(tools=(WEATHER, SEARCH)))
    assert base.history.items[-1] == UserMessage(text="Use get_weather and search.")
    other = partner("required_calls", base)
    assert other is not None and other.options.tool_choice == "required"
    assert prepared("required_calls", case()) is None  # one tool cannot be asked twice


def test_stream_flips_stream_and_drops_what_only_a_stream_means() -> None:
    base = ready("stream", case(fields={"stream_options": {"include_usage": True}}))
    streamed = base.model_copy(update={"stream": True})
    other = partner("stream", streamed)
    assert other is not None and not other.stream and "stream_options" not in other.options.fields


def test_a_prompt_relation_on_a_chat_stream_asks_for_the_usage_chunk() -> None:
    streamed = case().model_copy(update={"stream": True})
    fitted = ready("system", streamed)
    assert fitted.options.fields["stream_options"] == {"include_usage": True}
    responses = streamed.model_copy(update={"api": "responses"})
    assert ready("system", responses).options.fields == {}


def test_nothing_is_paired_where_the_prompt_may_be_cut_or_the_body_is_broken() -> None:
    for name in RELATIONS:
        assert prepared(name, case(malformed="not_json")) is None
    long = case(UserMessage(text=f"Use get_weather. {FILLER * 3}"))
    auto = case(fields={"truncation": "auto"})
    for name in ("tools", "system", "text_part", "special_token"):
        assert prepared(name, long) is None and prepared(name, auto) is None
    # A partner is derived only from a case the relation is ready for.
    assert partner("tools", case(include_tools=False)) is None
    assert partner("no_such_relation", case()) is None


@settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
@given(st.data(), st.sampled_from(["chat", "responses"]), st.booleans())
def test_a_generated_relation_fits_its_case_and_its_partner_builds(
    data: st.DataObject, api: str, stream: bool
) -> None:
    drawn = data.draw(cases(Profile(), api, stream))  # type: ignore[arg-type]
    if drawn.relation is None:
        return
    other = partner(drawn.relation, drawn)
    assert other is not None and other.relation is None and other != drawn
    path, body = build_request(other, "m")
    assert path == build_request(drawn, "m")[0]
    assert isinstance(body, dict)


def test_a_profile_without_relations_pairs_nothing() -> None:
    @settings(max_examples=50, suppress_health_check=list(HealthCheck), deadline=None)
    @given(cases(Profile(relations=()), "chat", False))
    def alone(drawn: Case) -> None:
        assert drawn.relation is None

    alone()
