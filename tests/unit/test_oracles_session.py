"""``self_rejection`` and ``id_roundtrip``: judging a session request by its history's origin."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Item,
    Provenance,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, Observation, ObservedCall, Related, Violation
from agentfuzz.oracles import check, names

ECHOED = "chatcmpl-tool-0f3a9c2b7d1e4f5a8b6c9d0e1f2a3b4c"
ASK = UserMessage(text="Use get_weather.")
ANSWER = AssistantMessage(tool_calls=(ToolCall(id=ECHOED, name="get_weather"),))
RESULT = ToolResult(call_id=ECHOED, output='{"ok": true}')
TOOLS = (Tool(name="get_weather"),)
OK = Exchange(url="http://x/v1/chat/completions", request={}, stream=False, status=200)
EMPTY = Observation(exchange=OK, finish_reason="stop")
SPOKE = Observation(exchange=OK, text="It is sunny.", finish_reason="stop")
CALLED = Observation(exchange=OK, tool_calls=(ObservedCall(0, "call_2", "get_weather", "{}"),))


def session_case(
    *items: Item,
    untouched: bool = True,
    echoed: tuple[str, ...] = (ECHOED,),
    turn: int = 2,
) -> Case:
    return Case(
        history=History(tools=TOOLS, items=items),
        session=Provenance(turn=turn, untouched=untouched, echoed=echoed),
    )


def status(
    code: int,
    body: str = '{"error": {"message": "bad"}}',
    errors: tuple[tuple[str, str], ...] = (),
    refused: bool = False,
) -> Observation:
    exchange = dataclasses.replace(OK, status=code, body=body)
    return Observation(exchange=exchange, errors=errors, refused=refused)


ECHO = session_case(ASK, ANSWER, RESULT)


def found(oracle: str, case: Case, obs: Observation) -> list[Violation]:
    return check(case, obs, only=[oracle])


def test_both_oracles_are_registered_after_the_single_turn_ones() -> None:
    # After them come the oracles that judge more than the turn: proxy_fidelity the backend's
    # side, relation and stream_divergence the answers to requests related to it.
    tail = ["self_rejection", "id_roundtrip", "proxy_fidelity", "relation", "stream_divergence"]
    assert names()[-5:] == tail


# --- self_rejection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obs",
    [
        status(400, refused=True),
        status(422, refused=True),
        status(500, body="Internal Server Error", errors=(("status", "HTTP 500"),)),
        status(503, errors=(("status", "HTTP 503"),)),
    ],
    ids=["400", "422", "500", "503"],
)
def test_self_rejection_fires_when_the_server_refuses_its_own_history(obs: Observation) -> None:
    (v,) = found("self_rejection", ECHO, obs)
    code = obs.exchange.status
    assert v.oracle == "self_rejection"
    assert f"HTTP {code}" in v.message
    assert v.signature.startswith(f"self_rejection:{code}:")
    assert ECHOED in v.evidence
    assert f"status={code}" in v.evidence


def test_self_rejection_also_fires_for_a_text_only_history() -> None:
    case = session_case(ASK, AssistantMessage(text="Hello."), ASK, echoed=())
    (v,) = found("self_rejection", case, status(400, refused=True))
    assert v.signature == "self_rejection:400:none"


def test_self_rejection_signature_names_the_status_and_id_families_not_the_ids() -> None:
    other = ECHOED.replace("0f3a", "9999")
    twin = session_case(
        ASK,
        AssistantMessage(tool_calls=(ToolCall(id=other, name="get_weather"),)),
        ToolResult(call_id=other, output="{}"),
    )
    (a,) = found("self_rejection", ECHO, status(400, refused=True))
    (b,) = found("self_rejection", twin, status(400, refused=True))
    (c,) = found("self_rejection", ECHO, status(500))
    assert a.signature == b.signature
    assert a.signature != c.signature


@pytest.mark.parametrize(
    ("case", "obs"),
    [
        (ECHO.model_copy(update={"session": None}), status(400, refused=True)),
        (session_case(ASK, ANSWER, RESULT, untouched=False), status(400, refused=True)),
        (session_case(ASK, ANSWER, RESULT, untouched=False), status(500)),
        (session_case(ASK, turn=1, echoed=()), status(400, refused=True)),
        (session_case(ASK, RESULT, ASK, echoed=()), status(500)),
        (ECHO, SPOKE),
        (ECHO, status(204)),
        (ECHO, dataclasses.replace(EMPTY, exchange=dataclasses.replace(OK, status=None))),
    ],
    ids=[
        "synthetic",
        "touched-4xx",
        "touched-5xx",
        "first-turn",
        "no-assistant-output",
        "2xx",
        "204",
        "no-status",
    ],
)
def test_self_rejection_stays_silent(case: Case, obs: Observation) -> None:
    assert found("self_rejection", case, obs) == []


# --- id_roundtrip ---------------------------------------------------------------------------


def test_id_roundtrip_fires_when_a_touched_history_echoing_an_id_is_rejected() -> None:
    case = session_case(ASK, ANSWER, RESULT, untouched=False)
    (v,) = found("id_roundtrip", case, status(400, refused=True))
    assert "rejected with HTTP 400" in v.message
    assert v.signature.startswith("id_roundtrip:status:400:")
    assert ECHOED in v.evidence


def test_id_roundtrip_fires_on_a_fault_even_for_an_untouched_history() -> None:
    obs = Observation(exchange=OK, errors=(("error_frame", "<|tool_call_begin|>"),))
    (v,) = found("id_roundtrip", ECHO, obs)
    assert "fault (error_frame)" in v.message
    assert v.signature.startswith("id_roundtrip:fault:error_frame:")
    assert "<|tool_call_begin|>" in v.evidence


@pytest.mark.parametrize("untouched", [True, False])
def test_id_roundtrip_fires_on_an_empty_answer_to_the_echoed_results(untouched: bool) -> None:
    case = session_case(ASK, ANSWER, RESULT, untouched=untouched)
    for obs in (EMPTY, dataclasses.replace(EMPTY, text="  \n", reasoning="Thinking.")):
        (v,) = found("id_roundtrip", case, obs)
        assert "empty turn" in v.message
        assert v.signature.startswith("id_roundtrip:empty:")


def test_id_roundtrip_signatures_differ_between_status_fault_and_empty() -> None:
    touched = session_case(ASK, ANSWER, RESULT, untouched=False)
    fault = Observation(exchange=OK, errors=(("no_terminal", "stream ended"),))
    (rejected,) = found("id_roundtrip", touched, status(400, refused=True))
    (faulted,) = found("id_roundtrip", touched, fault)
    (empty,) = found("id_roundtrip", touched, EMPTY)
    signatures = {rejected.signature, faulted.signature, empty.signature}
    assert len(signatures) == 3
    assert all(s.endswith(":" + rejected.signature.rsplit(":", 1)[1]) for s in signatures)


def test_id_roundtrip_signature_leaves_out_the_ids_themselves() -> None:
    other = ECHOED.replace("0f3a", "1234")
    twin = session_case(
        ASK,
        AssistantMessage(tool_calls=(ToolCall(id=other, name="get_weather"),)),
        ToolResult(call_id=other, output="{}"),
        echoed=(other,),
    )
    (a,) = found("id_roundtrip", ECHO, EMPTY)
    (b,) = found("id_roundtrip", twin, EMPTY)
    assert a.signature == b.signature
    assert ECHOED not in a.signature


@pytest.mark.parametrize(
    ("case", "obs"),
    [
        # An untouched history that is rejected is self_rejection's to report.
        (ECHO, status(400, refused=True)),
        (ECHO, status(500, errors=(("status", "HTTP 500"),))),
        # The echoed id is no longer there as both a call and a result.
        (session_case(ASK, RESULT), EMPTY),
        (session_case(ASK, ANSWER, ASK), EMPTY),
        (session_case(ASK, ANSWER, RESULT, echoed=("call_gone",)), EMPTY),
        (session_case(ASK, ANSWER, RESULT, echoed=()), EMPTY),
        # After a new user message, an empty turn is empty_turn's alone.
        (session_case(ASK, ANSWER, RESULT, ASK), EMPTY),
        # Truncated or incomplete: the server ran out of tokens, not ideas.
        (ECHO, dataclasses.replace(EMPTY, finish_reason="length")),
        (ECHO, dataclasses.replace(EMPTY, status="incomplete")),
        # A legitimate answer.
        (ECHO, SPOKE),
        (ECHO, CALLED),
        # Synthetic.
        (ECHO.model_copy(update={"session": None}), EMPTY),
    ],
    ids=[
        "untouched-4xx",
        "untouched-5xx",
        "call-gone",
        "result-gone",
        "not-echoed",
        "nothing-echoed",
        "user-after-results",
        "length",
        "incomplete",
        "text",
        "call",
        "synthetic",
    ],
)
def test_id_roundtrip_stays_silent(case: Case, obs: Observation) -> None:
    assert found("id_roundtrip", case, obs) == []


def test_only_one_of_the_two_reports_a_rejection() -> None:
    for untouched, expected in ((True, {"self_rejection"}), (False, {"id_roundtrip"})):
        case = session_case(ASK, ANSWER, RESULT, untouched=untouched)
        fired = {v.oracle for v in check(case, status(400, refused=True))}
        assert fired & {"self_rejection", "id_roundtrip"} == expected


@pytest.mark.parametrize(
    "says",
    [
        "This model's maximum context length is 2048 tokens. However, you requested 2300 tokens.",
        '{"error": {"code": "context_length_exceeded"}}',
        "Requested tokens (2100) exceed context window of 2048",
        "the messages hold 38193 characters; this model's context holds 32768",
    ],
)
def test_a_session_that_outgrew_the_context_is_refused_rightly(says: str) -> None:
    # Seen through LiteLLM on a 14-item session: the backend's context was full.
    body = json.dumps({"error": {"message": says}})
    too_long = status(400, body=body, refused=True)
    assert found("self_rejection", ECHO, too_long) == []
    touched = session_case(ASK, ANSWER, RESULT, untouched=False)
    assert found("id_roundtrip", touched, too_long) == []
    # The same status for another reason is still the server refusing its own history.
    assert found("self_rejection", ECHO, status(400, refused=True))
    assert found("self_rejection", ECHO, status(500, body=body, errors=(("status", "500"),)))


def _asking(case: Case, **options: object) -> Case:
    return case.model_copy(update={"options": case.options.model_copy(update=options)})


@pytest.mark.parametrize(
    "options",
    [{"fields": {"n": 2}}, {"forms": ("image_part",)}, {"malformed": "truncated"}],
    ids=["field", "form", "malformed"],
)
def test_a_refused_turn_that_asks_for_more_than_its_history_is_no_session_fault(
    options: dict[str, object],
) -> None:
    # The server may refuse ``n`` or an image part on their own: the history is not to blame.
    asking = _asking(ECHO, **options)
    touched = _asking(session_case(ASK, ANSWER, RESULT, untouched=False), **options)
    for obs in (status(400, refused=True), status(500)):
        assert found("self_rejection", asking, obs) == []
        assert found("id_roundtrip", touched, obs) == []
    # A stop string may end the answer to the echoed results before its first word.
    assert found("id_roundtrip", asking, EMPTY) == []
    # The same turns without it are judged as before.
    assert found("self_rejection", ECHO, status(400, refused=True))
    assert found("id_roundtrip", session_case(ASK, ANSWER, RESULT, untouched=False), status(500))


# --- the history_cut control (issue 41 item 0) ------------------------------------------------


def _controlled(obs: Observation, control: Observation) -> Observation:
    """``obs`` with the answer to its control: the request cut back to its first user message."""
    return dataclasses.replace(obs, related=(Related("history_cut", control),))


@pytest.mark.parametrize("refusal", [status(400, refused=True), status(500)], ids=["400", "500"])
def test_a_refusal_the_first_user_message_alone_also_gets_is_not_the_historys(
    refusal: Observation,
) -> None:
    # Seen live: a tool schema the server cannot handle was refused with or without history.
    touched = session_case(ASK, ANSWER, RESULT, untouched=False)
    also_refused = _controlled(refusal, status(400, refused=True))
    assert found("self_rejection", ECHO, also_refused) == []
    assert found("id_roundtrip", touched, also_refused) == []
    # Accepted without the history: the history is what the server refuses.
    accepted = _controlled(refusal, SPOKE)
    assert [v.oracle for v in found("self_rejection", ECHO, accepted)] == ["self_rejection"]
    assert [v.oracle for v in found("id_roundtrip", touched, accepted)] == ["id_roundtrip"]


def test_a_history_without_a_user_message_may_be_refused_rightly() -> None:
    opening = session_case(ANSWER, RESULT)
    assert found("self_rejection", opening, status(400, refused=True)) == []
