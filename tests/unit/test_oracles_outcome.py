"""``empty_turn`` and ``error``: does the turn exist, and did the protocol hold."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agentfuzz.model.history import Case, History, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall
from agentfuzz.oracles import check

CASE = Case(history=History(tools=(Tool(name="bash"),), items=(UserMessage(text="ls"),)))
OK = Exchange(url="http://127.0.0.1:8000/v1/chat/completions", request={}, stream=True, status=200)


def _run(oracle: str, obs: Observation) -> list[tuple[str, str, str]]:
    return [(v.signature, v.message, v.evidence) for v in check(CASE, obs, only=[oracle])]


@pytest.mark.parametrize(
    ("text", "reasoning", "what"),
    [("", "", "nothing at all"), ("  \n", "I should call bash.", "reasoning only")],
)
def test_empty_turn_fires_on_no_text_and_no_call(text: str, reasoning: str, what: str) -> None:
    obs = Observation(exchange=OK, text=text, reasoning=reasoning, finish_reason="stop")
    ((signature, message, evidence),) = _run("empty_turn", obs)
    assert signature == "empty_turn"
    assert what in message
    assert "finish='stop'" in evidence


@pytest.mark.parametrize(
    "obs",
    [
        Observation(exchange=OK, text="Done."),
        Observation(exchange=OK, tool_calls=(ObservedCall(0, "call_1", "bash", "{}"),)),
        Observation(exchange=OK, errors=(("error_frame", "boom"),)),
        Observation(exchange=dataclasses.replace(OK, status=400), refused=True),
        Observation(exchange=dataclasses.replace(OK, status=None)),
        Observation(exchange=OK, reasoning="long thought", finish_reason="length"),
    ],
    ids=["text", "call", "error", "refused", "no-status", "token-limit"],
)
def test_empty_turn_stays_silent_when_not_applicable(obs: Observation) -> None:
    assert _run("empty_turn", obs) == []


def test_error_reports_each_distinct_kind_once() -> None:
    markup = "<|tool_calls_section_begin|><|tool_call_begin|>functions_get_weather_0"
    obs = Observation(
        exchange=OK,
        errors=(
            ("error_frame", markup),
            ("error_frame", "second frame"),
            ("no_terminal", "stream ended after 12 events"),
        ),
    )
    found = _run("error", obs)
    assert [s for s, _, _ in found] == ["error:error_frame", "error:no_terminal"]
    assert found[0][2] == markup
    assert "error_frame" in found[0][1] and "2 times" in found[0][1]
    assert "no_terminal" in found[1][1]


def test_error_signature_carries_the_http_status() -> None:
    exchange = dataclasses.replace(OK, stream=False, status=500, body="Internal Server Error")
    obs = Observation(
        exchange=exchange,
        errors=(("http_status", "500"), ("non_json", "Internal Server Error")),
    )
    found = _run("error", obs)
    assert [s for s, _, _ in found] == ["error:http_status:500", "error:non_json"]
    assert found[1][2] == "Internal Server Error"


def test_error_signature_is_the_same_for_two_examples_of_one_bug() -> None:
    one = Observation(exchange=OK, errors=(("error_frame", "functions_a_0 invalid"),))
    two = Observation(exchange=OK, errors=(("error_frame", "functions_b_7 invalid"),))
    assert check(CASE, one, only=["error"])[0].key == check(CASE, two, only=["error"])[0].key


def test_error_is_silent_without_errors() -> None:
    assert _run("error", Observation(exchange=OK, text="hi")) == []


@pytest.mark.parametrize(
    "cut", [{"finish_reason": "length"}, {"status": "incomplete"}], ids=["chat", "responses"]
)
def test_empty_turn_fires_when_the_token_limit_was_reached_and_nothing_shown(
    cut: dict[str, str],
) -> None:
    obs = Observation(exchange=OK, **cut)  # type: ignore[arg-type]
    ((signature, message, _),) = _run("empty_turn", obs)
    assert signature == "empty_turn:truncated"
    assert "token limit" in message


@pytest.mark.parametrize(
    ("payload", "count"),
    [
        ({"usage": {"completion_tokens": 1}}, 1),
        ({"type": "response.completed", "response": {"usage": {"output_tokens": 7}}}, 7),
        ({"usage": None}, None),
    ],
    ids=["chat", "responses", "none"],
)
def test_empty_turn_evidence_names_the_tokens_the_server_counted(
    payload: dict[str, object], count: int | None
) -> None:
    obs = Observation(exchange=OK, finish_reason="stop", payloads=({"choices": []}, payload))
    ((_, _, evidence),) = _run("empty_turn", obs)
    assert ("completion_tokens=" in evidence) is (count is not None)
    if count is not None:
        assert evidence.endswith(f"completion_tokens={count}")


def _status_500(body: str) -> Observation:
    exchange = Exchange(url="http://x/v1/chat/completions", request={}, stream=False, status=500)
    exchange = dataclasses.replace(exchange, body=body)
    return Observation(exchange=exchange, errors=(("http_status", f"500: {body}"),))


def _signature(body: str) -> str:
    (found,) = check(CASE, _status_500(body), only=["error"])
    return found.signature


def test_a_5xx_is_signed_by_the_cause_its_message_names_not_by_what_varies() -> None:
    def litellm(what: str) -> str:
        message = f"litellm.APIConnectionError: OpenAIException - {what}"
        return json.dumps({"error": {"message": message, "code": "500"}})

    untyped = _signature(litellm("Invalid user message at index 0. Please ensure all are valid"))
    again = _signature(litellm("Invalid user message at index 3. Please ensure all are valid"))
    other = _signature(litellm("'int' object is not iterable"))
    assert untyped == again != other
    assert untyped.startswith("error:http_status:500:")
    # A validator's dump of the request, quoted names and ids do not make two findings of one.
    dump = "2 validation errors: {'type': 'literal_error', 'loc': ('body', 'messages', %d)}"
    assert _signature(json.dumps({"detail": dump % 0})) == _signature(
        json.dumps({"detail": dump % 7})
    )
    named = "tool 'get_weather' failed for call_0f3a9c2b7d1e"
    assert _signature(named) == _signature("tool 'run_shell' failed for call_aaaaaaaaaaaa")
    # A body nested past the parser's depth is read as text, never an error of ours.
    assert _signature("[" * 5000).startswith("error:http_status:500")
    # A bare status page names no cause: one signature, as before.
    generic = '{"status": "failure", "message": "Something went wrong"}'  # Portkey's, any cause
    for bare in (
        "Internal Server Error",
        "",
        '{"error": {"message": "Internal Server Error"}}',
        generic,
    ):
        assert _signature(bare) == "error:http_status:500"


@pytest.mark.parametrize("status", [401, 403, 404, 405, 429])
def test_a_plain_text_page_for_a_request_not_served_is_no_error(status: int) -> None:
    # A router's 404 page for a base URL without /v1: the target was not tested, not at fault.
    exchange = dataclasses.replace(OK, stream=False, status=status, body="Not Found")
    obs = Observation(exchange=exchange, errors=(("non_json", f"body ({status}): Not Found"),))
    assert _run("error", obs) == []


def test_a_plain_text_page_for_a_bad_request_is_still_an_error() -> None:
    exchange = dataclasses.replace(OK, stream=False, status=400, body="Bad Request")
    obs = Observation(exchange=exchange, errors=(("non_json", "body (400): Bad Request"),))
    assert [s for s, _, _ in _run("error", obs)] == ["error:non_json"]


def test_a_symptom_alone_is_signed_by_what_the_repro_needs() -> None:
    from agentfuzz.model.history import AssistantMessage, Options, ToolCall, ToolResult
    from agentfuzz.model.observation import Violation
    from agentfuzz.oracles import by_needs, by_symptom

    assert by_symptom("error:http_status:500") and by_symptom("error:transport")
    assert not by_symptom("error:http_status:500:1a2b3c") and not by_symptom("error:non_json")
    bare = Violation("error", "500", signature="error:http_status:500")
    assert by_needs(bare, CASE.model_copy(update={"history": History()})).signature == (
        "error:http_status:500:needs:plain"
    )
    call = ToolCall(id="functions.bash:0", name="bash", arguments="{}")
    items = (
        UserMessage(text="ls"),
        AssistantMessage(tool_calls=(call,)),
        ToolResult(call_id="functions.bash:0", output="x"),
        ToolResult(call_id="c", output=""),
    )
    case = Case(
        history=History(tools=CASE.history.tools, items=items),
        options=Options(fields={"stop": ["\n"]}),
    )
    assert by_needs(bare, case).signature == (
        "error:http_status:500:needs:stop+tools+history:calls+history:orphan_result"
        "+history:results+ids:kimi_native"
    )
    # A signature that names its cause stays as it is.
    named = Violation("error", "500", signature="error:http_status:500:1a2b3c")
    assert by_needs(named, case) is named
