"""The ``puppet_truth`` oracle holds a scripted answer to the script (issue 42, step 4): the calls
and prose the model was made to write, nothing else, and only where that truth is settled."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall
from agentfuzz.oracles import check
from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import Call, Script, format_named
from agentfuzz.puppet.scripted import FIELD, carried, carry
from agentfuzz.strategies import puppet_cases
from agentfuzz.strategies._scripts import tools_for

HERMES = format_named("hermes")
SCRIPT = Script(
    (Call("get_weather", {"city": 'Par"is </tool_call>'}), Call("search", {"q": "x"})),
    text_before="Let me look.",
)


def _case(script: Script = SCRIPT, **options: Any) -> Case:
    fields = {FIELD: carry(HERMES, script), **options.pop("fields", {})}
    history = History(tools=tools_for(HERMES, script), items=(UserMessage(text="Use it."),))
    return Case(history=history, options=Options(fields=fields, **options))


def _answer(text: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any) -> Observation:
    exchange = Exchange(url="http://x/v1/chat/completions", request={}, stream=False, status=200)
    made = tuple(
        ObservedCall(index=i, id=f"call_{i}", name=name, arguments=json.dumps(args))
        for i, (name, args) in enumerate(calls)
    )
    return Observation(exchange=exchange, text=text, tool_calls=made, **kw)


FAITHFUL = [("get_weather", {"city": 'Par"is </tool_call>'}), ("search", {"q": "x"})]


def _truth(case: Case, obs: Observation) -> list[str]:
    return [v.signature for v in check(case, obs, only=("puppet_truth",))]


def test_the_script_travels_in_the_request_and_reads_back() -> None:
    xargs = carry(HERMES, SCRIPT)
    # The processor reads the text alone; the other keys are agentfuzz's.
    read = channel.decode(xargs)
    assert isinstance(read, channel.Text) and read.text == HERMES.write(SCRIPT)
    assert carried({FIELD: xargs}) == (HERMES, SCRIPT, HERMES.write(SCRIPT))
    assert carried({FIELD: {"agentfuzz_puppet": "{}"}}) is None
    assert carried({}) is None


def test_a_faithful_answer_is_silent() -> None:
    assert _truth(_case(), _answer("Let me look.\n", FAITHFUL)) == []


@pytest.mark.parametrize(
    ("text", "calls", "signature"),
    [
        ("Let me look.", FAITHFUL[:1], "puppet_truth:hermes:calls:count"),
        ("Let me look.", [FAITHFUL[1], FAITHFUL[0]], "puppet_truth:hermes:calls:name"),
        ("Let me look.", [("get_weather", {"city": 'Par"is '}), FAITHFUL[1]],
         "puppet_truth:hermes:calls:arguments"),
        ("", FAITHFUL, "puppet_truth:hermes:content"),
        ("Let me look. <tool_call>", FAITHFUL, "puppet_truth:hermes:content"),
    ],
)  # fmt: skip
def test_what_the_server_changed_is_named(
    text: str, calls: list[tuple[str, dict[str, Any]]], signature: str
) -> None:
    assert _truth(_case(), _answer(text, calls)) == [signature]


@pytest.mark.parametrize(
    "options",
    [
        {"tool_choice": "none"},
        {"tool_choice": "required"},
        {"include_tools": False},
        {"max_tokens": 5},
        {"fields": {"stop": ["x"]}},
        {"fields": {"n": 2}},
        {"fields": {"tool_choice": {"type": "function", "function": {"name": "search"}}}},
        # The request surface's fields that take the writing from the script, or tell the
        # server to read it by a rule of its own (puppet.surface).
        {"fields": {"response_format": {"type": "json_object"}}},
        {"fields": {"structured_outputs": {"regex": "[a-z]{1,8}"}}},
        {"fields": {"guided_choice": ["yes", "no"]}},
        {"fields": {"chat_template_kwargs": {"enable_thinking": False}}},
        {"fields": {"reasoning_effort": "low"}},
        {"fields": {"parallel_tool_calls": False}},
    ],
)
def test_not_judged_where_the_truth_is_not_settled(options: dict[str, Any]) -> None:
    assert _truth(_case(**options), _answer("", [])) == []


def test_not_judged_on_a_cut_refused_or_unscripted_answer() -> None:
    assert _truth(_case(), _answer("", [], finish_reason="length")) == []
    assert _truth(_case(), _answer("", [], refused=True)) == []
    plain = Case(history=History(items=(UserMessage(text="hi"),)))
    assert _truth(plain, _answer("", [])) == []


def test_puppet_cases_carry_a_script_their_tools_declare() -> None:
    from hypothesis import given, settings

    @settings(max_examples=30, derandomize=True, database=None)
    @given(puppet_cases(HERMES, "chat", True))
    def each(case: Case) -> None:
        found = carried(case.options.fields)
        assert found is not None
        fmt, script, written = found
        assert fmt is HERMES and written == HERMES.write(script)
        declared = {t.flat_name for t in case.history.tools}
        # The first call is declared unless nameless; a later one may be left undeclared on
        # purpose. A request always declares tools.
        assert script.calls[0].name in declared or script.calls[0].name == ""
        assert declared
        assert case.stream and case.options.tool_choice is None

    each()


def test_a_scripted_bundle_says_how_to_start_the_server_and_what_the_model_wrote() -> None:
    from agentfuzz.output.reports.bundle import report_text

    request = {"model": "m", "messages": [{"role": "user", "content": "Use it."}]}
    request[FIELD] = carry(HERMES, SCRIPT)
    doc = {"oracle": "puppet_truth", "message": "m", "request": request}
    text = report_text(doc, "out/b")
    assert "## The puppet model" in text
    assert "agentfuzz puppet vllm-args --format args --parser hermes" in text
    assert HERMES.write(SCRIPT) in text
    plain = {"oracle": "error", "message": "m", "request": {"model": "m", "messages": []}}
    assert "## The puppet model" not in report_text(plain, "out/b")


def test_not_judged_when_the_text_sent_is_not_the_scripts_own_writing() -> None:
    import json as _json

    xargs = carry(HERMES, SCRIPT)
    value = _json.loads(xargs["agentfuzz_puppet"])
    value["text"] = "<tool_call>edited by hand</tool_call>"
    edited = {"agentfuzz_puppet": _json.dumps(value)}
    case = _case().model_copy(update={"options": Options(fields={FIELD: edited})})
    assert _truth(case, _answer("", [])) == []


def test_an_unclosed_script_travels_and_is_left_to_the_other_oracles() -> None:
    unclosed = Script(SCRIPT.calls, SCRIPT.text_before, unclosed=True)
    found = carried({FIELD: carry(HERMES, unclosed)})
    assert found is not None and found[1] == unclosed
    assert found[2] == HERMES.write(SCRIPT).removesuffix("</tool_call>")
    # A script without the near miss travels as it always did: no key for it.
    assert "unclosed" not in carry(HERMES, SCRIPT)["agentfuzz_puppet"]
    # Not judged: a parser may read the call, drop it or leave it as text.
    assert _truth(_case(unclosed), _answer(HERMES.write(unclosed), [])) == []


def test_streamed_and_plain_answers_to_one_script_must_agree() -> None:
    import dataclasses

    from agentfuzz.model.observation import Related

    def pair(case: Case, streamed_calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        plain = _answer("Let me look.", FAITHFUL)
        url = "http://x/v1/chat/completions"
        streamed = dataclasses.replace(
            _answer("Let me look.", streamed_calls),
            exchange=Exchange(url=url, request={}, stream=True, status=200),
        )
        obs = dataclasses.replace(plain, related=(Related("stream", streamed),))
        return [v.signature for v in check(case, obs, only=("stream_divergence",))]

    # The processor writes every token, so no temperature is needed for the two to agree.
    assert pair(_case(), FAITHFUL) == []
    assert pair(_case(), FAITHFUL[:1]) == ["stream_divergence:calls"]
    # Under a forced choice the server's grammar may take over from the script: not judged.
    assert pair(_case(tool_choice="required"), FAITHFUL[:1]) == []


def test_a_name_the_script_wrote_is_no_unknown_tool_unless_no_tools_were_sent() -> None:
    script = Script((Call("get_weather"), Call("undeclared_tool")))
    fields = {FIELD: carry(HERMES, script)}
    history = History(
        tools=tools_for(HERMES, script, ("get_weather",)), items=(UserMessage(text="Use it."),)
    )
    answer = _answer("", [("get_weather", {}), ("undeclared_tool", {})])

    def unknown(options: Options) -> list[str]:
        case = Case(history=history, options=options)
        return [v.signature for v in check(case, answer, only=("unknown_tool",))]

    # What the server does with a call the model wrote to another tool is an open question.
    assert unknown(Options(fields=fields)) == []
    # Without tools no parser was to take a call out at all.
    assert (
        unknown(Options(fields=fields, include_tools=False)) == ["unknown_tool:no_tools_sent"] * 2
    )
