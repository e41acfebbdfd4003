"""The session loop, driven by a scripted fake server: what it sends back, turn after turn."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

import pytest

from agentfuzz.judge.session import Turn, fake_result, run_session, user_text
from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    Item,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, Observation, ObservedCall, Violation
from agentfuzz.model.plan import Plan, Policy, Step
from agentfuzz.request.policies import rewrite_id
from agentfuzz.request.relations import partner
from agentfuzz.wire.dialects import build_request

WEATHER_TOOL_NAME = "get_weather"
TIME_TOOL_NAME = "get_time"
ARGS = '{"city": "Paris"}'

# A call the fake server returns: (call id, tool name, Responses item id).
Spec = tuple[str, str, str | None]
Reply = Callable[[Case], Observation]


def reply(
    *calls: Spec,
    text: str = "",
    reasoning: str = "",
    status: int | None = 200,
    errors: tuple[tuple[str, str], ...] = (),
    refused: bool = False,
    reasoning_id: str | None = None,
) -> Reply:
    """An answer in the dialect of whatever case asks for it (so api switches just work)."""

    def answer(case: Case) -> Observation:
        path = "/v1/responses" if case.api == "responses" else "/v1/chat/completions"
        exchange = Exchange(url=f"http://x{path}", request={}, stream=case.stream, status=status)
        observed = tuple(
            ObservedCall(k, item_id, name, ARGS, call_id=call_id)
            if case.api == "responses"
            else ObservedCall(k, call_id, name, ARGS)
            for k, (call_id, name, item_id) in enumerate(calls)
        )
        return Observation(
            exchange=exchange,
            text=text,
            reasoning=reasoning,
            tool_calls=observed,
            errors=errors,
            refused=refused,
            reasoning_id=reasoning_id,
        )

    return answer


def call(call_id: str, name: str = WEATHER_TOOL_NAME, item_id: str | None = None) -> Spec:
    return (call_id, name, item_id)


class Server:
    """A scripted fake target: answers in order, and keeps every case it was sent."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.cases: list[Case] = []

    def __call__(self, case: Case) -> Observation:
        self.cases.append(case)
        return self.replies[len(self.cases) - 1](case)


def plan(*steps: Step, api: Api = "chat", stream: bool = False) -> Plan:
    tools = (Tool(name=WEATHER_TOOL_NAME), Tool(name=TIME_TOOL_NAME))
    return Plan(tools=tools, steps=steps, api=api, stream=stream)


def quiet(case: Case, obs: Observation) -> list[Violation]:
    return []


def run(p: Plan, *replies: Reply) -> tuple[list[Turn], Server]:
    server = Server(*replies)
    turns = run_session(p, server, quiet)
    assert [t.case for t in turns] == server.cases
    return turns, server


def items(case: Case) -> tuple[Item, ...]:
    return case.history.items


def calls_in(case: Case) -> list[str]:
    return [c.id for c in case.history.calls]


def results_in(case: Case) -> list[str]:
    return [it.call_id for it in items(case) if isinstance(it, ToolResult)]


def kinds(case: Case) -> list[str]:
    return [it.kind for it in items(case)]


TWO_CALLS = reply(call("call_a.0"), call("functions.get_time:1", TIME_TOOL_NAME))
TEXT = reply(text="It is sunny.")


# --- passthrough: the server's own ids, exactly -------------------------------------------


def test_first_request_is_one_user_message_naming_the_asked_tool() -> None:
    (turn,), _ = run(plan(Step(ask=1)), TEXT)
    assert items(turn.case) == (UserMessage(text="Use get_time."),)
    assert turn.case.options.include_tools is True
    assert turn.case.history.tools == plan().tools
    assert (turn.case.api, turn.case.stream) == ("chat", False)


def test_passthrough_echoes_chat_call_ids_exactly() -> None:
    server_ids = ("chatcmpl-tool-0f3a9c", " weird id:0 ")
    first = reply(call(server_ids[0]), call(server_ids[1], TIME_TOOL_NAME), text="Checking.")
    turns, _ = run(plan(Step(), Step()), first, TEXT)
    second = turns[1].case
    user, assistant, *results = items(second)
    assert isinstance(user, UserMessage)
    assert assistant == AssistantMessage(
        text="Checking.",
        tool_calls=(
            ToolCall(id=server_ids[0], name=WEATHER_TOOL_NAME, arguments=ARGS),
            ToolCall(id=server_ids[1], name=TIME_TOOL_NAME, arguments=ARGS),
        ),
    )
    assert [r.call_id for r in results if isinstance(r, ToolResult)] == list(server_ids)
    assert kinds(second) == ["user", "assistant", "tool_result", "tool_result"]


def test_passthrough_echoes_responses_call_id_and_keeps_the_item_id() -> None:
    first = reply(call("call_951f", item_id="fc_951f"))
    turns, _ = run(plan(Step(), Step(), api="responses"), first, TEXT)
    second = turns[1].case
    (sent,) = second.history.calls
    assert sent == ToolCall(
        id="call_951f", name=WEATHER_TOOL_NAME, arguments=ARGS, item_id="fc_951f"
    )
    assert results_in(second) == ["call_951f"]
    _, body = build_request(second, "m")
    (function_call,) = [i for i in body["input"] if i["type"] == "function_call"]
    assert (function_call["id"], function_call["call_id"]) == ("fc_951f", "call_951f")


def test_a_namespaced_responses_call_keeps_its_namespace_and_renumbers_flat() -> None:
    def namespaced(case: Case) -> Observation:
        exchange = Exchange(url="http://x/v1/responses", request={}, stream=False, status=200)
        observed = ObservedCall(0, "fc_n", "get_time", "{}", call_id="call_n", namespace="weather")
        return Observation(exchange=exchange, tool_calls=(observed,))

    p = plan(Step(), Step(policy="renumber-native"), Step(), api="responses")
    turns, _ = run(p, TEXT, namespaced, TEXT)
    (sent,) = turns[2].case.history.calls
    assert (sent.id, sent.name, sent.namespace) == (
        "functions.weather__get_time:0",
        "get_time",
        "weather",
    )
    assert sent.item_id is None
    assert results_in(turns[2].case) == ["functions.weather__get_time:0"]


def test_reasoning_is_kept_with_the_answer_it_came_with() -> None:
    first = reply(call("call_1"), reasoning="I should look it up.")
    turns, _ = run(plan(Step(), Step()), first, TEXT)
    (assistant,) = [it for it in items(turns[1].case) if isinstance(it, AssistantMessage)]
    assert assistant.reasoning == "I should look it up."
    assert assistant.text is None


# --- each policy's effect on the next request ----------------------------------------------


@pytest.mark.parametrize(
    ("policy", "call_ids", "result_ids"),
    [
        ("passthrough", ["call_a.0", "functions.get_time:1"], ["call_a.0", "functions.get_time:1"]),
        ("sanitize", ["call_a_0", "functions_get_time_1"], ["call_a_0", "functions_get_time_1"]),
        (
            "renumber-native",
            ["functions.get_weather:0", "functions.get_time:1"],
            ["functions.get_weather:0", "functions.get_time:1"],
        ),
        ("drop-call", [], ["call_a.0", "functions.get_time:1"]),
        ("drop-result", ["call_a.0", "functions.get_time:1"], []),
        ("strip-tools", ["call_a.0", "functions.get_time:1"], ["call_a.0", "functions.get_time:1"]),
    ],
)
def test_policy_decides_the_ids_of_the_next_request(
    policy: Policy, call_ids: list[str], result_ids: list[str]
) -> None:
    turns, _ = run(plan(Step(policy=policy), Step()), TWO_CALLS, TEXT)
    second = turns[1].case
    assert calls_in(second) == call_ids
    assert results_in(second) == result_ids


def test_remint_sends_fresh_deterministic_ids_and_pairs_results_with_them() -> None:
    first = reply(call("call_a", item_id="fc_a"), call("call_b", TIME_TOOL_NAME, "fc_b"))
    turns, _ = run(plan(Step(policy="remint"), Step(), api="responses"), first, TEXT)
    second = turns[1].case
    sent = second.history.calls
    assert [c.id for c in sent] == [
        rewrite_id("remint", ToolCall(id="call_a", name=WEATHER_TOOL_NAME), 0),
        rewrite_id("remint", ToolCall(id="call_b", name=TIME_TOOL_NAME), 1),
    ]
    assert [c.item_id for c in sent] == [None, None]
    assert results_in(second) == [c.id for c in sent]
    again, _ = run(plan(Step(policy="remint"), Step(), api="responses"), first, TEXT)
    assert again[1].case == second


def test_renumber_native_counts_calls_over_the_whole_session() -> None:
    turns, _ = run(
        plan(Step(), Step(policy="renumber-native"), Step()),
        TWO_CALLS,
        reply(call("call_z", TIME_TOOL_NAME)),
        TEXT,
    )
    assert calls_in(turns[2].case) == ["call_a.0", "functions.get_time:1", "functions.get_time:2"]


def test_drop_call_leaves_orphaned_results_and_no_user_message() -> None:
    turns, _ = run(plan(Step(policy="drop-call"), Step()), TWO_CALLS, TEXT)
    second = turns[1].case
    assert kinds(second) == ["user", "tool_result", "tool_result"]
    assert second.history.calls == ()


def test_drop_call_keeps_the_text_that_came_with_the_calls() -> None:
    first = reply(call("call_1"), text="Let me check.")
    turns, _ = run(plan(Step(policy="drop-call"), Step()), first, TEXT)
    assert items(turns[1].case)[1] == AssistantMessage(text="Let me check.")
    assert kinds(turns[1].case) == ["user", "assistant", "tool_result"]


def test_drop_result_leaves_calls_unanswered_and_the_user_speaks_next() -> None:
    turns, _ = run(plan(Step(policy="drop-result"), Step(ask=1)), TWO_CALLS, TEXT)
    second = turns[1].case
    assert kinds(second) == ["user", "assistant", "user"]
    assert items(second)[-1] == UserMessage(text="Use get_time.")
    assert calls_in(second) == ["call_a.0", "functions.get_time:1"]


def test_strip_tools_omits_tools_on_the_next_request_only() -> None:
    p = plan(Step(policy="strip-tools"), Step(), Step())
    turns, _ = run(p, TWO_CALLS, TWO_CALLS, TEXT)
    assert [t.case.options.include_tools for t in turns] == [True, False, True]
    assert all(t.case.history.tools == p.tools for t in turns)


# --- failed turns, user messages -----------------------------------------------------------


@pytest.mark.parametrize(
    "failed",
    [
        reply(call("call_1"), status=500, errors=(("status", "HTTP 500"),)),
        reply(status=400, refused=True),
        reply(status=200),
        reply(text=" \n", reasoning="thinking only"),
        reply(call("call_1"), status=200, errors=(("error_frame", "<|tool_call_begin|>"),)),
        reply(call("call_1"), status=None, errors=(("transport", "reset"),)),
    ],
    ids=["5xx", "refused", "empty", "whitespace", "error-frame", "no-status"],
)
def test_a_failed_turn_appends_nothing_and_the_user_asks_again(failed: Reply) -> None:
    turns, _ = run(plan(Step(), Step(ask=1), Step()), TWO_CALLS, failed, TEXT)
    second, third = turns[1].case, turns[2].case
    assert items(third) == (*items(second), UserMessage(text="Use get_weather."))
    assert third.session is not None
    assert third.session.echoed == ()


def test_text_answer_is_appended_and_the_user_speaks_next() -> None:
    turns, _ = run(plan(Step(), Step(ask=None)), TEXT, TEXT)
    assert items(turns[1].case) == (
        UserMessage(text="Use get_weather."),
        AssistantMessage(text="It is sunny."),
        UserMessage(text="Thanks. What else can you tell me?"),
    )


@pytest.mark.parametrize("interject", [False, True])
def test_interject_adds_a_user_message_after_the_results(interject: bool) -> None:
    turns, _ = run(plan(Step(), Step(interject=interject, ask=1)), TWO_CALLS, TEXT)
    expected = ["user", "assistant", "tool_result", "tool_result"]
    assert kinds(turns[1].case) == expected + (["user"] if interject else [])
    if interject:
        assert items(turns[1].case)[-1] == UserMessage(text="Use get_time.")


def test_an_owed_user_message_is_not_doubled_by_interject() -> None:
    turns, _ = run(plan(Step(), Step(interject=True)), TEXT, TEXT)
    assert kinds(turns[1].case) == ["user", "assistant", "user"]


def test_results_come_from_the_step_result_kind() -> None:
    turns, _ = run(plan(Step(result="error"), Step()), TWO_CALLS, TEXT)
    outputs = [it.output for it in items(turns[1].case) if isinstance(it, ToolResult)]
    assert outputs == [
        "Error: get_weather failed: permission denied",
        "Error: get_time failed: permission denied",
    ]


# --- api and stream switches ---------------------------------------------------------------


def test_a_switch_applies_from_its_turn_on() -> None:
    p = plan(
        Step(),
        Step(api="responses"),
        Step(stream=True),
        Step(),
        Step(api="chat", stream=False),
        Step(),
    )
    turns, _ = run(p, *[TEXT] * 6)
    assert [(t.case.api, t.case.stream) for t in turns] == [
        ("chat", False),
        ("responses", False),
        ("responses", True),
        ("responses", True),
        ("chat", False),
        ("chat", False),
    ]


def test_a_responses_answer_echoed_on_chat_keeps_the_call_id() -> None:
    first = reply(call("call_r", item_id="fc_r"))
    turns, _ = run(plan(Step(), Step(api="chat"), api="responses"), first, TEXT)
    second = turns[1].case
    assert second.api == "chat"
    assert calls_in(second) == ["call_r"]
    _, body = build_request(second, "m")
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_r"]


# --- provenance ----------------------------------------------------------------------------


def _untouched(turns: Sequence[Turn]) -> list[bool]:
    return [t.case.session.untouched for t in turns if t.case.session is not None]


@pytest.mark.parametrize("policy", ["passthrough", "strip-tools"])
def test_untouched_holds_while_the_client_only_echoes(policy: Policy) -> None:
    turns, _ = run(plan(*[Step(policy=policy)] * 4), TWO_CALLS, TWO_CALLS, TEXT, TWO_CALLS)
    assert _untouched(turns) == [True, True, True, True]


@pytest.mark.parametrize(
    "policy", ["sanitize", "remint", "renumber-native", "drop-call", "drop-result"]
)
def test_untouched_is_lost_for_good_after_a_rewriting_or_dropping_policy(policy: Policy) -> None:
    p = plan(Step(), Step(policy=policy), Step(), Step())
    turns, _ = run(p, TWO_CALLS, TWO_CALLS, TWO_CALLS, TEXT)
    assert _untouched(turns) == [True, True, False, False]


def test_untouched_survives_a_failed_turn_under_a_rewriting_policy() -> None:
    p = plan(Step(), Step(policy="remint"), Step())
    turns, _ = run(p, TWO_CALLS, reply(status=500, errors=(("status", "500"),)), TEXT)
    assert _untouched(turns) == [True, True, True]


@pytest.mark.parametrize("policy", ["drop-call", "drop-result"])
def test_a_dropping_policy_on_a_text_answer_leaves_the_history_untouched(policy: Policy) -> None:
    turns, _ = run(plan(Step(policy=policy), Step()), TEXT, TEXT)
    assert items(turns[1].case)[1] == AssistantMessage(text="It is sunny.")
    assert _untouched(turns) == [True, True]


def _echoed(turns: Sequence[Turn]) -> list[tuple[str, ...]]:
    return [t.case.session.echoed for t in turns if t.case.session is not None]


def test_echoed_holds_only_the_previous_turns_ids_sent_back_unchanged() -> None:
    third = reply(call("call_c"))
    turns, _ = run(plan(Step(), Step(), Step(), Step()), TWO_CALLS, third, TEXT, TEXT)
    assert _echoed(turns) == [
        (),
        ("call_a.0", "functions.get_time:1"),
        ("call_c",),
        (),
    ]


@pytest.mark.parametrize(
    ("policy", "echoed"),
    [
        ("passthrough", ("call_a.0", "functions.get_time:1")),
        ("strip-tools", ("call_a.0", "functions.get_time:1")),
        ("sanitize", ()),
        ("remint", ()),
        ("renumber-native", ("functions.get_time:1",)),
        ("drop-call", ()),
        ("drop-result", ()),
    ],
)
def test_echoed_leaves_out_ids_the_policy_changed_or_dropped(
    policy: Policy, echoed: tuple[str, ...]
) -> None:
    turns, _ = run(plan(Step(policy=policy), Step()), TWO_CALLS, TEXT)
    assert _echoed(turns) == [(), echoed]


def test_echoed_is_empty_after_a_failed_turn_and_a_text_turn() -> None:
    p = plan(Step(), Step(), Step(), Step())
    failed = reply(status=503, errors=(("status", "503"),))
    turns, _ = run(p, TWO_CALLS, failed, TEXT, TEXT)
    assert _echoed(turns)[1:] == [("call_a.0", "functions.get_time:1"), (), ()]


def test_turns_are_numbered_from_one_in_order() -> None:
    turns, _ = run(plan(Step(), Step(), Step()), TEXT, TWO_CALLS, TEXT)
    assert [t.number for t in turns] == [1, 2, 3]
    assert [t.case.session.turn for t in turns if t.case.session] == [1, 2, 3]


def test_on_turn_sees_each_turn_once_in_order_as_it_happens() -> None:
    server = Server(TEXT, TWO_CALLS, TEXT)
    seen: list[tuple[int, int]] = []

    def on_turn(turn: Turn) -> None:
        seen.append((turn.number, len(server.cases)))

    turns = run_session(plan(Step(), Step(), Step()), server, quiet, on_turn)
    assert seen == [(1, 1), (2, 2), (3, 3)]
    assert len(turns) == 3


def test_violations_from_check_are_kept_on_their_turn() -> None:
    found = Violation(oracle="empty_turn", message="empty", signature="empty_turn")
    checked: list[tuple[int, str]] = []

    def check(case: Case, obs: Observation) -> list[Violation]:
        assert case.session is not None
        checked.append((case.session.turn, obs.text))
        return [found] if case.session.turn == 2 else []

    turns = run_session(plan(Step(), Step()), Server(TEXT, TEXT), check)
    assert checked == [(1, "It is sunny."), (2, "It is sunny.")]
    assert [t.violations for t in turns] == [(), (found,)]


# --- fake tools and user messages ----------------------------------------------------------

CALL = ToolCall(id="call_1", name="get_time", namespace="weather")


def test_fake_json_result_parses_and_names_the_call() -> None:
    assert json.loads(fake_result("json", CALL, 3)) == {
        "ok": True,
        "tool": "weather__get_time",
        "turn": 3,
    }


def test_fake_large_result_is_big_valid_json() -> None:
    large = fake_result("large", CALL, 1)
    assert len(large) > 5000
    assert len(json.loads(large)["rows"]) == 200


def test_fake_empty_text_and_error_results() -> None:
    assert fake_result("empty", CALL, 1) == ""
    assert "weather__get_time" in fake_result("text", CALL, 1)
    assert fake_result("error", CALL, 1).startswith("Error:")


def test_user_text_names_the_asked_tool_modulo_their_number() -> None:
    p = plan(Step())
    assert user_text(Step(ask=0), p) == "Use get_weather."
    assert user_text(Step(ask=3), p) == "Use get_time."
    assert "Use" not in user_text(Step(ask=None), p)
    assert "Use" not in user_text(Step(ask=0), Plan(tools=(), steps=(Step(),)))


def test_an_untouched_responses_request_carries_no_item_id_the_server_never_gave() -> None:
    first = reply(call("call_1", item_id="fc_1"), reasoning="Look it up.")
    turns, _ = run(plan(Step(), Step(), api="responses"), first, TEXT)
    second = turns[1].case
    _, body = build_request(second, "m")
    invented = [i["id"] for i in body["input"] if "id" in i and i["id"] not in ("fc_1",)]
    assert second.session is not None
    assert not (second.session.untouched and invented), invented


def test_a_responses_reasoning_item_goes_back_under_the_servers_own_id() -> None:
    first = reply(call("call_1", item_id="fc_1"), reasoning="Look it up.", reasoning_id="rs_9")
    turns, _ = run(plan(Step(), Step(), api="responses"), first, TEXT)
    second = turns[1].case
    _, body = build_request(second, "m")
    assert [i.get("id") for i in body["input"]] == [None, "rs_9", "fc_1", None]
    assert second.session is not None and second.session.untouched


def test_a_call_without_an_id_goes_back_with_a_made_up_one_so_not_untouched() -> None:
    turns, _ = run(plan(Step(), Step()), reply(call("")), TEXT)
    second = turns[1].case
    assert calls_in(second) == [""]
    assert second.session is not None and not second.session.untouched


# --- the request surface of a turn, and chaining onto a stored answer ----------------------


def answered_as(
    response_id: str | None = None,
    finish: str | None = None,
    calls: tuple[Spec, ...] = (),
    text: str = "",
) -> Reply:
    """``reply(*calls, text=text)``'s answer, with a Responses id and a finish reason."""
    inner = reply(*calls, text=text)

    def answer(case: Case) -> Observation:
        obs = inner(case)
        return dataclasses.replace(obs, response_id=response_id, finish_reason=finish)

    return answer


def test_a_steps_fields_and_forms_go_out_with_its_turn_only() -> None:
    first = Step(fields={"stop": ["}"], "n": 2}, forms=("parts",))
    turns, _ = run(plan(first, Step(ask=None)), TEXT, TEXT)
    assert turns[0].case.options.fields == {"stop": ["}"], "n": 2}
    assert turns[0].case.options.forms == ("parts",)
    assert turns[1].case.options.fields == {}
    assert turns[1].case.options.forms == ()
    _, body = build_request(turns[0].case, "m")
    assert (body["stop"], body["n"]) == (["}"], 2)


def test_a_chained_turn_sends_only_what_is_new_and_names_the_sessions_last_answer() -> None:
    first = answered_as("resp_1", calls=(call("call_a", item_id="fc_a"),))
    p = plan(Step(), Step(chain="own", fields={"previous_response_id": "resp_never"}), Step())
    turns, _ = run(
        p.model_copy(update={"api": "responses"}), first, answered_as("resp_2", text="Done."), TEXT
    )
    chained = turns[1].case
    assert chained.options.fields == {"previous_response_id": "resp_1"}
    # The call is in the stored answer; only its result goes out.
    assert kinds(chained) == ["tool_result"]
    assert results_in(chained) == ["call_a"]
    # The next turn resends the whole history, the answers included.
    assert kinds(turns[2].case) == ["user", "assistant", "tool_result", "assistant", "user"]
    assert turns[2].case.options.fields == {}


def test_chaining_falls_back_to_the_whole_history_while_there_is_nothing_to_name() -> None:
    own = Step(chain="own", fields={"previous_response_id": "resp_never"})
    turns, _ = run(plan(own, api="responses"), TEXT)
    assert turns[0].case.options.fields == {"previous_response_id": "resp_never"}
    assert kinds(turns[0].case) == ["user"]
    # On chat, a chain means nothing.
    chat = run_session(
        plan(Step(), Step(chain="own")), Server(answered_as("resp_1", text="Hi."), TEXT), quiet
    )
    assert chat[1].case.options.fields == {}
    assert kinds(chat[1].case) == ["user", "assistant", "user"]


def test_a_chain_onto_another_sessions_answer_names_the_id_it_was_given() -> None:
    server = Server(TEXT)
    (turn,) = run_session(
        plan(Step(chain="other"), api="responses"), server, quiet, elsewhere="resp_x"
    )
    assert turn.case.options.fields == {"previous_response_id": "resp_x"}
    assert kinds(turn.case) == ["user"]


def test_an_answer_cut_by_its_budget_inside_its_calls_is_not_run() -> None:
    cut = answered_as(finish="length", calls=(call("call_a"),))
    turns, _ = run(plan(Step(fields={"max_tokens": 3}), Step()), cut, TEXT)
    # Nothing of the cut answer goes back: the user asks again.
    assert kinds(turns[1].case) == ["user", "user"]
    # A cut answer of text alone is kept.
    turns, _ = run(plan(Step(), Step(ask=None)), answered_as(finish="length", text="It is"), TEXT)
    assert kinds(turns[1].case) == ["user", "assistant", "user"]


def test_a_refused_turn_goes_again_without_its_fields_under_the_same_number() -> None:
    refused = reply(status=400, refused=True)
    first = answered_as("resp_1", calls=(call("call_a", item_id="fc_a"),))
    p = plan(Step(), Step(chain="own", fields={"previous_response_id": "x"}, forms=("parts",)))
    p = p.model_copy(update={"api": "responses"})
    turns, _ = run(p, first, refused, TEXT)
    assert [t.number for t in turns] == [1, 2, 2]
    asked, again = turns[1].case, turns[2].case
    assert asked.options.fields == {"previous_response_id": "resp_1"}
    # The whole history, no field, no form, the same provenance.
    assert (again.options.fields, again.options.forms) == ({}, ())
    assert kinds(again) == ["user", "assistant", "tool_result"]
    assert again.session == asked.session
    # A 5xx is a fault, not a refusal: nothing is sent again; nor is a plain turn.
    turns, _ = run(plan(Step(fields={"n": 2}), Step()), reply(status=500), TEXT)
    assert [t.number for t in turns] == [1, 2]
    turns, _ = run(plan(Step(), Step()), refused, TEXT)
    assert [t.number for t in turns] == [1, 2]


def test_a_refused_scripted_turn_goes_again_with_its_script() -> None:
    # The puppet's script is what the model writes, not a field the server refused: the turn
    # sent again keeps it, or the model's own output would be judged as the script's.
    script = {"vllm_xargs": {"agentfuzz_puppet": "{}"}}
    refused = reply(status=400, refused=True)
    drawn = Step(fields={**script, "top_logprobs": 5}, surface_api="responses")
    p = plan(drawn).model_copy(update={"api": "responses"})
    turns, _ = run(p, refused, TEXT)
    assert [t.number for t in turns] == [1, 1]
    assert turns[1].case.options.fields == script
    # A turn with the script alone is plain: refused, nothing is sent again.
    turns, _ = run(plan(Step(fields=script), Step()), refused, TEXT)
    assert [t.number for t in turns] == [1, 2]


def test_a_turn_in_another_api_than_its_fields_were_drawn_for_sends_none_of_them() -> None:
    # Shrinking can take away the step that switched to chat: the next step's chat fields
    # (logprobs) would then go to a Responses turn as unknown parameters.
    drawn = Step(fields={"logprobs": True}, forms=("parts",), surface_api="chat")
    p = plan(drawn).model_copy(update={"api": "responses"})
    turns, _ = run(p, TEXT)
    assert (turns[0].case.options.fields, turns[0].case.options.forms) == ({}, ())
    chained = Step(chain="own", fields={"previous_response_id": "x"}, surface_api="chat")
    p = plan(Step(), chained).model_copy(update={"api": "responses"})
    turns, _ = run(p, answered_as("resp_1"), TEXT)
    assert turns[1].case.options.fields == {}
    assert kinds(turns[1].case)[0] == "user"  # the whole history, not leaning on resp_1
    # Drawn for the api it is sent in (or made by hand, no api named): sent as drawn.
    for same in ("chat", None):
        turns, _ = run(plan(Step(fields={"logprobs": True}, surface_api=same)), TEXT)
        assert turns[0].case.options.fields == {"logprobs": True}


# --- the chain relation: a chained turn paired with its conversation sent whole ------------


def stored_as(
    response_id: str, *kinds_given: str, calls: tuple[Spec, ...] = (), text: str = ""
) -> Reply:
    """A Responses answer under ``response_id`` whose output items, as the server listed them
    at the end, are ``kinds_given`` (default: a message for the text, then the calls)."""
    inner = answered_as(response_id, calls=calls, text=text)
    listed = kinds_given or (("message",) if text else ()) + ("function_call",) * len(calls)

    def answer(case: Case) -> Observation:
        return dataclasses.replace(inner(case), output_types=listed)

    return answer


CHAIN = Step(relation="chain")
CALLED = stored_as("resp_1", calls=(call("call_a", item_id="fc_a"),))


def test_a_chain_step_chains_onto_the_sessions_answer_and_vouches_for_what_it_stood_for() -> None:
    turns, _ = run(plan(Step(), CHAIN, api="responses"), CALLED, TEXT)
    chained = turns[1].case
    assert chained.relation == "chain"
    assert chained.options.fields == {"previous_response_id": "resp_1"}
    assert kinds(chained) == ["tool_result"]
    assert chained.session is not None
    assert [i.kind for i in chained.session.context] == ["user", "assistant"]
    whole = partner("chain", chained)
    assert whole is not None and "previous_response_id" not in whole.options.fields
    assert kinds(whole) == ["user", "assistant", "tool_result"]
    assert calls_in(whole) == ["call_a"]


def test_a_chain_onto_a_chained_answer_vouches_for_the_whole_conversation() -> None:
    second = stored_as("resp_2", text="Done.")
    turns, _ = run(plan(Step(), CHAIN, CHAIN, api="responses"), CALLED, second, TEXT)
    third = turns[2].case
    assert third.relation == "chain" and third.options.fields["previous_response_id"] == "resp_2"
    assert third.session is not None
    assert [i.kind for i in third.session.context] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]


@pytest.mark.parametrize(
    "first",
    [
        # The client changed the answer's ids: the stored answer is not the client's copy.
        pytest.param((Step(policy="remint"), CALLED), id="reminted"),
        # Text after the calls: the client writes its copy back in another order.
        pytest.param(
            (
                Step(),
                stored_as(
                    "resp_1", "function_call", "message", calls=(call("c", item_id="f"),), text="Hi"
                ),
            ),
            id="reordered",
        ),
        # A message of blank text the client leaves out.
        pytest.param(
            (
                Step(),
                stored_as("resp_1", "message", "function_call", calls=(call("c"),), text="  "),
            ),
            id="blank",
        ),
        # An item the client does not model.
        pytest.param(
            (Step(), stored_as("resp_1", "message", "web_search_call", text="Hi")), id="other"
        ),
        # The answer's request spelled its messages in another form.
        pytest.param((Step(forms=("parts",)), CALLED), id="forms"),
        # The answer's request went on from another session's answer, whose conversation the
        # server holds and this session does not (a campaign's false pair before this case).
        pytest.param((Step(chain="other"), CALLED), id="chained-elsewhere"),
    ],
)
def test_a_chain_is_not_paired_where_the_session_cannot_vouch_for_the_stored_answer(
    first: tuple[Step, Reply],
) -> None:
    step, answer = first
    server = Server(answer, TEXT)
    turns = run_session(plan(step, CHAIN, api="responses"), server, quiet, elsewhere="resp_x")
    chained = turns[-1].case
    assert chained.options.fields.get("previous_response_id") == "resp_1"
    assert chained.relation is None
    assert chained.session is not None and chained.session.context == ()


def test_a_turns_tool_choice_goes_out_with_that_turn_and_never_without_tools() -> None:
    p = plan(
        Step(choice="named", ask=1),
        Step(choice="required", policy="strip-tools"),
        Step(choice="required"),
        Step(),
    )
    turns, _ = run(p, TWO_CALLS, TWO_CALLS, TEXT, TEXT)
    assert turns[0].case.options.tool_choice == TIME_TOOL_NAME  # the tool the user asks for
    assert turns[1].case.options.tool_choice == "required"
    assert not turns[2].case.options.include_tools and turns[2].case.options.tool_choice is None
    assert turns[3].case.options.tool_choice is None
    _, body = build_request(turns[0].case, "m")
    assert body["tool_choice"] == {"type": "function", "function": {"name": TIME_TOOL_NAME}}
