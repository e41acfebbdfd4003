"""``bad_arguments``, ``unknown_tool`` and ``tool_choice``: the calls themselves."""

from __future__ import annotations

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall, Violation
from agentfuzz.oracles import check

WEATHER = Tool(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
DOTTED = Tool(name="github.repos.list")
SHELL = Tool(name="exec", namespace="shell")


def _case(tool_choice: str | None = None, include_tools: bool = True) -> Case:
    return Case(
        history=History(tools=(WEATHER, DOTTED, SHELL), items=(UserMessage(text="hi"),)),
        options=Options(tool_choice=tool_choice, include_tools=include_tools),
    )


def _obs(*calls: ObservedCall, api: str = "chat", **extra: object) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(url=f"http://127.0.0.1:8000{path}", request={}, stream=False, status=200)
    return Observation(exchange=exchange, tool_calls=calls, **extra)  # type: ignore[arg-type]


def _call(name: str, arguments: str = '{"city": "Paris"}', **extra: str) -> ObservedCall:
    return ObservedCall(0, "call_1", name, arguments, **extra)


def _run(oracle: str, obs: Observation, case: Case | None = None) -> list[Violation]:
    return check(case or _case(), obs, only=[oracle])


@pytest.mark.parametrize(
    ("arguments", "signature"),
    [
        ("{", "bad_arguments:not_json"),
        ("", "bad_arguments:not_json"),
        ('{"city": NaN}', "bad_arguments:not_json"),
        ('["Paris"]', "bad_arguments:not_object"),
        ('"Paris"', "bad_arguments:not_object"),
        ('"{\\"city\\": \\"Paris\\"}"', "bad_arguments:double_encoded"),
        ('"[1]"', "bad_arguments:not_object"),
        ("{}", "bad_arguments:schema:required"),
        ('{"city": 7}', "bad_arguments:schema:type"),
        ('{"city": "Paris", "days": 0}', "bad_arguments:schema:minimum"),
        ('{"city": "Paris", "unit": "C"}', "bad_arguments:schema:additionalProperties"),
    ],
)
def test_bad_arguments_fires_with_the_kind_of_fault(arguments: str, signature: str) -> None:
    (found,) = _run("bad_arguments", _obs(_call("get_weather", arguments)))
    assert found.signature == signature
    assert repr(arguments) in found.evidence


def test_bad_arguments_is_silent_on_valid_calls() -> None:
    calls = (
        _call("get_weather", '{"city": "Paris", "days": 3}'),
        _call("github.repos.list", "{}"),
        _call("exec", '{"cmd": "ls"}', namespace="shell"),
    )
    assert _run("bad_arguments", _obs(*calls, api="responses")) == []


def test_undeclared_tools_only_need_a_json_object() -> None:
    assert _run("bad_arguments", _obs(_call("nope", '{"anything": [1]}'))) == []
    (found,) = _run("bad_arguments", _obs(_call("nope", "[1]")))
    assert found.signature == "bad_arguments:not_object"


def test_a_call_to_a_strict_tool_is_signed_apart_where_the_server_promised_the_schema() -> None:
    strict = WEATHER.model_copy(update={"strict": True})
    case = Case(history=History(tools=(strict,), items=(UserMessage(text="hi"),)))
    kinds = [
        v.signature
        for arguments in ("{}", '"Paris"')
        for v in _run("bad_arguments", _obs(_call("get_weather", arguments)), case)
    ]
    assert kinds == ["bad_arguments:strict:schema:required", "bad_arguments:strict:not_object"]
    # So a profile that leaves the model's own misses out ("bad_arguments:schema") keeps these.
    model_own = ("bad_arguments:schema", "bad_arguments:not_object")
    assert not any(k.startswith(model_own) for k in kinds)


def test_bad_arguments_skips_turns_cut_by_the_token_limit() -> None:
    assert _run("bad_arguments", _obs(_call("get_weather", "{"), finish_reason="length")) == []


def test_an_invalid_client_schema_does_not_blame_the_server() -> None:
    odd = Tool(name="odd", parameters={"type": "object", "properties": {"a": {"type": 12}}})
    case = Case(history=History(tools=(odd,)))
    assert check(case, _obs(_call("odd", '{"a": 1}')), only=["bad_arguments"]) == []


def test_dotted_name_truncated_to_its_last_segment_is_unknown() -> None:
    (found,) = _run("unknown_tool", _obs(_call("list", "{}")))
    assert found.signature == "unknown_tool:truncated"
    assert "'list'" in found.evidence and "github.repos.list" in found.evidence


@pytest.mark.parametrize(
    ("call", "api", "signature"),
    [
        (_call("get_wether"), "chat", "unknown_tool:undeclared"),
        (_call(""), "chat", "unknown_tool:empty_name"),
        (_call("exec"), "chat", "unknown_tool:namespace_mismatch"),
        (_call("exec", namespace="other"), "responses", "unknown_tool:namespace_mismatch"),
    ],
)
def test_unknown_tool_names_the_shape(call: ObservedCall, api: str, signature: str) -> None:
    (found,) = _run("unknown_tool", _obs(call, api=api))
    assert found.signature == signature


def test_calls_when_no_tools_were_sent_are_unknown() -> None:
    found = _run("unknown_tool", _obs(_call("get_weather")), _case(include_tools=False))
    assert [v.signature for v in found] == ["unknown_tool:no_tools_sent"]


def test_declared_names_are_accepted_by_each_dialects_rule() -> None:
    chat = _obs(_call("get_weather"), _call("github.repos.list"), _call("shell__exec"))
    assert _run("unknown_tool", chat) == []
    native = _obs(_call("exec", namespace="shell"), _call("shell__exec"), api="responses")
    assert _run("unknown_tool", native) == []


def test_tool_choice_none_with_a_call() -> None:
    (found,) = _run("tool_choice", _obs(_call("get_weather")), _case("none"))
    assert found.signature == "tool_choice:none"
    assert "get_weather" in found.evidence


def test_tool_choice_required_without_a_call() -> None:
    (found,) = _run("tool_choice", _obs(text="Sunny."), _case("required"))
    assert found.signature == "tool_choice:required"
    assert "Sunny." in found.evidence


def test_named_tool_choice() -> None:
    case = _case("get_weather")
    (missing,) = _run("tool_choice", _obs(text="Sunny."), case)
    assert missing.signature == "tool_choice:named:no_call"
    (other,) = _run("tool_choice", _obs(_call("github.repos.list")), case)
    assert other.signature == "tool_choice:named:other_name"
    # OpenAI ends a forced named call with finish_reason "stop": that is fine.
    assert _run("tool_choice", _obs(_call("get_weather"), finish_reason="stop"), case) == []


@pytest.mark.parametrize(
    ("choice", "obs"),
    [
        ("none", _obs(text="Sunny.")),
        ("required", _obs(_call("get_weather"))),
        ("auto", _obs(text="Sunny.")),
        ("shell__exec", _obs(_call("exec", namespace="shell"), api="responses")),
        ("required", _obs(errors=(("http_status", "500"),))),
    ],
)
def test_tool_choice_is_silent_when_honoured(choice: str, obs: Observation) -> None:
    assert _run("tool_choice", obs, _case(choice)) == []


def test_tool_choice_is_not_judged_when_tools_were_left_out() -> None:
    case = _case("none", include_tools=False)
    assert _run("tool_choice", _obs(_call("get_weather")), case) == []


def test_namespaced_call_is_judged_by_its_own_tool_not_a_same_named_plain_one() -> None:
    # A plain ``get_weather`` and a ``weather`` namespace holding a different ``get_weather``.
    inner = Tool(
        name="get_weather",
        namespace="weather",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    )
    case = Case(history=History(tools=(WEATHER, inner), items=(UserMessage(text="hi"),)))
    namespaced = _call("get_weather", '{"query": "Paris"}', namespace="weather")
    assert _run("bad_arguments", _obs(namespaced, api="responses"), case) == []
    assert _run("unknown_tool", _obs(namespaced, api="responses"), case) == []
    plain = _call("get_weather", '{"query": "Paris"}')
    (found,) = _run("bad_arguments", _obs(plain, api="responses"), case)
    assert found.signature == "bad_arguments:schema:required"


@pytest.mark.parametrize(
    ("choice", "cut"),
    [
        ("required", {"finish_reason": "length"}),
        ("get_weather", {"finish_reason": "length"}),
        ("required", {"status": "incomplete"}),
    ],
)
def test_tool_choice_is_not_judged_on_a_turn_cut_by_the_token_limit(
    choice: str, cut: dict[str, str]
) -> None:
    obs = _obs(text='<tool_call>\n{"name": "get_weather", "arguments": {"ci', **cut)
    assert _run("tool_choice", obs, _case(choice)) == []
    # The same answer with the call finished and still no call parsed is judged.
    assert _run("tool_choice", _obs(text="<tool_call>"), _case(choice)) != []


def test_allowed_tools_required_is_held_to_its_names_and_auto_is_not_judged() -> None:
    tools = (Tool(name="get_weather"), Tool(name="search"))
    allowed = {"mode": "required", "tools": [{"type": "function", "function": {"name": "search"}}]}
    fields = {"tool_choice": {"type": "allowed_tools", "allowed_tools": allowed}}
    case = Case(
        history=History(tools=tools, items=(UserMessage(text="q"),)), options=Options(fields=fields)
    )
    seen = [
        [v.signature for v in _run("tool_choice", obs, case)]
        for obs in (_obs(_call("get_weather")), _obs(_call("search")), _obs(text="hello"))
    ]
    assert seen == [["tool_choice:allowed:other_name"], [], ["tool_choice:allowed:no_call"]]
    auto = {"tool_choice": {"type": "allowed_tools", "allowed_tools": allowed | {"mode": "auto"}}}
    loose = case.model_copy(update={"options": Options(fields=auto)})
    assert _run("tool_choice", _obs(_call("get_weather")), loose) == []
    # A function never declared is not an ask any answer honours: the server should refuse it.
    undeclared = {"tool_choice": {"type": "function", "function": {"name": "nope"}}}
    odd = case.model_copy(update={"options": Options(fields=undeclared)})
    assert _run("tool_choice", _obs(text="hello"), odd) == []
