"""The request surface: every dimension is reached, shrinks toward left out, obeys the profile,
goes on the wire as drawn, comes back from a captured body, and reduces field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from agentfuzz.errors import ProfileError
from agentfuzz.model.history import Api, Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.oracles import check
from agentfuzz.oracles._common import Forced, forced
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.request.profiles import Profile, load_profile
from agentfuzz.request.surface import (
    DEFAULT_DIMENSIONS,
    DIMENSIONS,
    HISTORY_DIMENSIONS,
    PLAIN,
    applies,
    used,
    with_the_request,
)
from agentfuzz.strategies import cases
from agentfuzz.strategies._surface import _FORMS, _form
from agentfuzz.wire.dialects import build_request, parse_request

DEFAULT = load_profile("default")
FIND = settings(database=None, max_examples=2000, suppress_health_check=list(HealthCheck))
CHECK = settings(database=None, max_examples=60, deadline=None)


@pytest.mark.parametrize(
    ("name", "api"),
    [
        (n, api)
        for n in DEFAULT_DIMENSIONS
        for api in ("chat", "responses")
        if applies(n, api) and n not in ("malformed", "message_forms", *HISTORY_DIMENSIONS)
    ],
)
def test_every_dimension_is_reached_and_shrinks_to_its_field_alone(name: str, api: Api) -> None:
    found = find(cases(DEFAULT, api, True), lambda c: name in used(c), settings=FIND)
    # Swarm testing leaves every other dimension out of the minimal example.
    assert set(used(found)) == {name}, found.options
    own = set(DIMENSIONS[name].fields)
    assert set(found.options.fields) <= own
    _, body = build_request(found, "m")
    assert set(found.options.fields) <= set(body) and body["stream"] is True


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_broken_body_is_reached_and_shrinks_to_the_plainest_break(api: Api) -> None:
    found = find(cases(DEFAULT, api, False), lambda c: c.options.malformed, settings=FIND)
    assert found.options == Options(malformed="truncated")
    assert used(found) == ("malformed:truncated",) and found.history.size == 1


@pytest.mark.parametrize("api", ["chat", "responses"])
@CHECK
@given(data=st.data())
def test_a_profile_without_the_surface_sends_none_of_it(api: Api, data: st.DataObject) -> None:
    case = data.draw(cases(Profile(surface=["stop", "n"]), api, False))
    assert set(case.options.fields) <= {"stop", "n"}
    assert api == "chat" or not case.options.fields
    assert data.draw(cases(Profile(surface=[]), api, True)).options.fields == {}


def test_stream_options_only_on_streamed_requests() -> None:
    assert applies("stream_options", "chat", True)
    assert not applies("stream_options", "chat", False)
    assert not applies("stream_options", "responses", True)


def test_a_profile_naming_an_unknown_dimension_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dimension 'nope'"):
        Profile(surface=["nope"])
    bad = tmp_path / "bad.toml"
    bad.write_text('surface = ["stop", "stop"]\n')
    with pytest.raises(ProfileError, match=r"bad\.toml: surface: lists a dimension twice$"):
        load_profile(str(bad))


def _case(api: Api = "chat", **fields: object) -> Case:
    history = History(tools=(Tool(name="f"),), items=(UserMessage(text="q"),))
    return Case(history=history, options=Options(fields=dict(fields)), api=api)


def test_used_names_dimensions_and_captured_fields() -> None:
    assert used(_case()) == (PLAIN,)
    assert used(_case(stop="}", max_completion_tokens=3)) == ("budget", "stop")
    assert used(_case("responses", text={"format": {"type": "json_object"}})) == (
        "response_format",
    )
    # A field no dimension names counts under its own name.
    assert used(_case(response_modalities=["text"])) == ("response_modalities",)
    assert used(_case(chat_template_kwargs={"x": 1})) == ("vllm_extensions",)
    assert used(_case(stream=True)) == ("stream",)


def test_fields_go_on_the_wire_after_the_knobs_and_never_touch_stream() -> None:
    case = _case(stop=["\n"], stream=True, max_tokens=5).model_copy(update={"stream": False})
    _, body = build_request(case, "m")
    assert body["stop"] == ["\n"] and body["max_tokens"] == 5 and body["stream"] is False


@pytest.mark.parametrize("api", ["chat", "responses"])
@CHECK
@given(data=st.data())
def test_every_generated_body_comes_back_with_its_fields(api: Api, data: st.DataObject) -> None:
    case = data.draw(cases(DEFAULT, api, data.draw(st.booleans())))
    _, body = build_request(case, "m")
    again = parse_request(body)
    assert set(case.options.fields) <= set(body)
    # Back as it went, a budget under the dialect's own name as the knob, the rest as fields.
    assert build_request(again, "m")[1] == body


def test_reduce_takes_fields_away_one_at_a_time_and_shortens_lists() -> None:
    case = _case(stop=["a", "}", "b"], n=2, user="u", metadata={"k": "v"})

    def fails(c: Case) -> bool:
        stop = c.options.fields.get("stop")
        return isinstance(stop, list) and "}" in stop

    small = reduce_case(case, fails, budget=200)
    assert small.options.fields == {"stop": ["}"]}


def test_with_n_choices_the_turn_is_choice_zero_streamed_or_not() -> None:
    from agentfuzz.model.observation import Exchange, SSEEvent
    from agentfuzz.wire.dialects import assemble

    def chunk(index: int, text: str, finish: str | None = None) -> SSEEvent:
        choice = {"index": index, "delta": {"content": text}, "finish_reason": finish}
        return SSEEvent(event=None, data=json.dumps({"id": "c", "choices": [choice]}))

    events = (chunk(0, "he"), chunk(1, "XX"), chunk(0, "llo", "stop"), chunk(1, "Y", "length"))
    done = SSEEvent(event=None, data="[DONE]")
    streamed = assemble(Exchange(url="u/chat/completions", request={}, stream=True, status=200,
                                 events=(*events, done)))  # fmt: skip
    assert (streamed.text, streamed.finish_reason) == ("hello", "stop")
    choices = [
        {"index": 1, "message": {"content": "XX"}, "finish_reason": "length"},
        {"index": 0, "message": {"content": "hello"}, "finish_reason": "stop"},
    ]
    body = json.dumps({"id": "c", "choices": choices})
    plain = assemble(Exchange(url="u/chat/completions", request={}, stream=False, status=200,
                              body=body))  # fmt: skip
    assert (plain.text, plain.finish_reason) == ("hello", "stop")


WEATHER = Tool(name="get_weather", namespace="weather")
SEARCH = Tool(name="search")


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_every_tool_choice_form_is_read_back_as_what_it_asks(api: Api) -> None:
    """``forced`` reads each form the surface draws: allowed_tools as its mode and names, the
    namespace-native name as the namespaced tool, and the rest as nothing to judge."""
    tools = (WEATHER, SEARCH)
    expected = {
        "allowed_required": Forced("required", allowed=("search",)),
        "allowed_auto": Forced("auto", allowed=("search",)),
        "allowed_all": Forced("required", allowed=("weather__get_weather", "search")),
        "native": Forced("named", "search"),
    }
    for kind in _FORMS[api]:
        case = Case(
            history=History(tools=tools, items=(UserMessage(text="q"),)),
            options=Options(fields=_form(api, kind, SEARCH, tools)),
            api=api,
        )
        assert forced(case) == expected.get(kind), kind
        assert used(case) == ("tool_choice_forms",)
    native = _form("responses", "native", WEATHER, tools)
    case = Case(history=History(tools=tools), options=Options(fields=native), api="responses")
    assert native["tool_choice"]["name"] == "get_weather"
    assert forced(case) == Forced("named", "weather__get_weather")


def test_a_namespace_native_name_two_tools_answer_to_is_not_judged() -> None:
    fields = {"tool_choice": {"type": "function", "name": "get_weather"}}
    for other in (Tool(name="get_weather", namespace="crm"), Tool(name="get_weather")):
        twins = History(tools=(WEATHER, other))
        case = Case(history=twins, options=Options(fields=fields), api="responses")
        assert forced(case) is None


def test_a_captured_tool_choice_the_knob_cannot_hold_stays_a_field() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "tools": [],
        "tool_choice": "required",
    }
    case = parse_request(body)
    assert case.options.fields == {"tools": [], "tool_choice": "required"}
    allowed = {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [{"type": "function", "name": "f"}],
    }
    body = {
        "model": "m",
        "input": "q",
        "tools": [{"type": "function", "name": "f"}],
        "tool_choice": allowed,
    }
    case = parse_request(body)
    assert case.options.tool_choice is None and case.options.fields["tool_choice"] == allowed
    assert build_request(case, "m")[1]["tool_choice"] == allowed


EXTENSIONS = Profile(surface=["sampler_extensions", "vllm_extensions", "llamacpp_extensions"])


@pytest.mark.parametrize(
    ("name", "api"),
    [
        ("vllm_extensions", "chat"),
        ("vllm_extensions", "responses"),
        ("llamacpp_extensions", "chat"),
    ],
)
def test_a_server_extension_is_reached_only_where_a_profile_names_it(name: str, api: Api) -> None:
    assert name not in DEFAULT_DIMENSIONS and DIMENSIONS[name].extension
    found = find(cases(EXTENSIONS, api, False), lambda c: name in used(c), settings=FIND)
    assert set(used(found)) == {name}
    assert set(found.options.fields) <= set(DIMENSIONS[name].fields)


def test_llamacpp_grammar_is_chat_only() -> None:
    assert not applies("llamacpp_extensions", "responses")


@pytest.mark.parametrize(
    "fields",
    [
        {"structured_outputs": {"choice": ["yes", "no"]}},
        {"guided_json": {"type": "object"}},
        {"grammar": 'root ::= "yes"'},
    ],
)
def test_a_structured_output_field_holds_the_answer_so_tool_choice_is_not_judged(
    fields: dict[str, object],
) -> None:
    history = History(tools=(Tool(name="get_weather"),), items=(UserMessage(text="hi"),))
    case = Case(history=history, options=Options(tool_choice="required", fields=fields))
    exchange = Exchange(
        url="http://127.0.0.1:1/v1/chat/completions", request={}, stream=False, status=200
    )
    answer = Observation(exchange=exchange, text="yes", finish_reason="stop")
    assert check(case, answer, only=["tool_choice"]) == []
    plain = case.model_copy(update={"options": Options(tool_choice="required")})
    assert check(plain, answer, only=["tool_choice"]) != []


FIELD_DIMENSIONS = sorted(
    name
    for name in DIMENSIONS
    if name not in {"tool_choice_forms", "message_forms", "malformed", *HISTORY_DIMENSIONS}
)


def test_a_dimension_drawn_with_the_request_says_so_and_every_other_carries_its_values() -> None:
    for name, dimension in DIMENSIONS.items():
        elsewhere = name not in FIELD_DIMENSIONS
        assert (dimension.values is with_the_request) == elsewhere, name


@settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_dimensions_values_send_its_own_fields_and_nothing_else(data: st.DataObject) -> None:
    dimension = DIMENSIONS[data.draw(st.sampled_from(FIELD_DIMENSIONS))]
    api = data.draw(st.sampled_from(dimension.apis))
    fields = data.draw(dimension.values(api, (128,)))
    assert fields and set(fields) <= set(dimension.fields)
