"""proxy_fidelity over hand-built observations: each kind it reports, each change it tolerates."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agentfuzz import oracles
from agentfuzz.model.history import Case, History
from agentfuzz.model.observation import BackendRequest, Exchange, Observation
from agentfuzz.wire.dialects import proxied

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
CASE = Case(history=History())  # the oracle reads the exchange, not the case


def _tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Call {name}.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }


def _call(call_id: str, name: str = "get_weather", args: str = '{"city": "Paris"}') -> Any:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _chat_body() -> dict[str, Any]:
    """Two turns, two calls each with its result, two tools, a named tool_choice."""
    return {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    _call("call_a"),
                    _call("call_b", args='{"city": "Rome"}'),
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_b", "content": "rain"},
            {"role": "assistant", "content": "Paris is sunny, Rome rainy."},
            {"role": "user", "content": "And the time?"},
        ],
        "tools": [_tool("get_weather"), _tool("get_time")],
        "tool_choice": {"type": "function", "function": {"name": "get_time"}},
        "stream": False,
    }


def _check(
    sent: dict[str, Any],
    *got: dict[str, Any],
    sent_path: str = CHAT,
    got_path: str = CHAT,
    status: int = 200,
) -> list[tuple[str, str]]:
    exchange = Exchange(url=f"http://proxy{sent_path}", request=sent, stream=False, status=status)
    backend = tuple(BackendRequest(got_path, body) for body in got)
    # Read as the pipeline reads them (the target live, the replay from a cassette).
    obs = proxied(Observation(exchange=exchange), backend)
    return [(v.signature, v.message) for v in oracles.check(CASE, obs, only=["proxy_fidelity"])]


def _kinds(found: list[tuple[str, str]]) -> set[str]:
    return {signature.removeprefix("proxy_fidelity:") for signature, _ in found}


def test_registered_under_its_contract_name() -> None:
    assert "proxy_fidelity" in oracles.names()


def test_silent_outside_middleman_mode() -> None:
    exchange = Exchange(url="http://x/v1/chat/completions", request=_chat_body(), stream=False)
    assert oracles.check(CASE, Observation(exchange=exchange), only=["proxy_fidelity"]) == []


def test_silent_when_the_backend_got_the_same_body() -> None:
    assert _check(_chat_body(), _chat_body()) == []


def _normalised(body: dict[str, Any]) -> dict[str, Any]:
    """What a well-behaved proxy may do to a chat body on its way through."""
    got = copy.deepcopy(body)
    got["stream_options"] = {"include_usage": True}
    got["temperature"] = 1.0
    got["model"] = "backend-model"
    messages = got["messages"]
    messages[0]["role"] = "developer"
    messages[1]["content"] = [{"type": "text", "text": "Weather   in Paris\nand Rome? "}]
    messages[2]["tool_calls"][0]["function"]["arguments"] = '{ "city":"Paris" }'
    messages[2]["reasoning_content"] = "thinking"
    messages[3]["content"] = [{"type": "text", "text": "sunny"}]
    for tool in got["tools"]:
        tool["function"]["strict"] = False
    return got


def test_tolerates_normalisation() -> None:
    assert _check(_chat_body(), _normalised(_chat_body())) == []


def test_tolerates_a_retry() -> None:
    assert _check(_chat_body(), _chat_body(), _chat_body()) == []


def test_tolerates_a_consistent_rename() -> None:
    got = _chat_body()
    got["tools"][1]["function"]["name"] = "get_time_v2"
    got["tool_choice"]["function"]["name"] = "get_time_v2"
    assert _check(_chat_body(), got) == []


def _responses_body() -> dict[str, Any]:
    return {
        "model": "m",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "user", "content": "Weather in Paris?"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "h"}]},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_a",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Call get_weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "stream": True,
    }


def _as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The Responses body as a translating proxy forwards it to chat completions."""
    return {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "assistant", "content": "", "tool_calls": [_call("call_a")]},
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        ],
        "tools": [_tool("get_weather")],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_tolerates_responses_translated_to_chat() -> None:
    body = _responses_body()
    assert _check(body, _as_chat(body), sent_path=RESPONSES) == []


def test_translation_that_rewrites_an_id_is_found() -> None:
    body = _responses_body()
    got = _as_chat(body)
    got["messages"][2]["tool_calls"][0]["id"] = "fc_1"
    got["messages"][3]["tool_call_id"] = "fc_1"
    assert _kinds(_check(body, got, sent_path=RESPONSES)) == {"id_rewritten"}


def _mutated(change: str) -> dict[str, Any]:
    got = _chat_body()
    messages, tools = got["messages"], got["tools"]
    calls = messages[2]["tool_calls"]
    if change == "id_rewritten":
        calls[0]["id"], messages[3]["tool_call_id"] = "call_0", "call_0"
    elif change == "id_collapsed":
        calls[1]["id"], messages[4]["tool_call_id"] = "call_a", "call_a"
    elif change == "id_dropped":
        del calls[0]["id"]
    elif change == "result_id_rewritten":
        messages[3]["tool_call_id"] = "call_a_0"
    elif change == "result_id_dropped":
        messages[3]["tool_call_id"] = ""
    elif change == "repaired":
        messages[3]["tool_call_id"], messages[4]["tool_call_id"] = "call_b", "call_a"
    elif change == "result_lost":
        del messages[4]
    elif change == "call_lost":
        del calls[1]
    elif change == "message_lost":
        del messages[5]
    elif change == "tool_lost":
        del tools[0]
    elif change == "injected":
        messages.insert(6, {"role": "assistant", "content": None, "tool_calls": [_call("c9")]})
    elif change == "tool_renamed":
        tools[1]["function"]["name"] = "get_time_v2"
    return got


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("id_rewritten", {"id_rewritten"}),
        ("id_collapsed", {"id_collapsed"}),
        ("id_dropped", {"id_dropped"}),
        # A result's own id changed to one no call has: rewritten, not re-paired.
        ("result_id_rewritten", {"id_rewritten"}),
        ("result_id_dropped", {"id_dropped"}),
        # Each result answers the other call now: the ids themselves are intact.
        ("repaired", {"repaired"}),
        ("result_lost", {"result_lost"}),
        # The result for the lost call answers nothing now: the call's finding, not its own.
        ("call_lost", {"call_lost"}),
        ("message_lost", {"message_lost"}),
        ("tool_lost", {"tool_lost"}),
        ("injected", {"injected"}),
        ("tool_renamed", {"tool_renamed"}),
    ],
)
def test_each_kind(change: str, expected: set[str]) -> None:
    found = _check(_chat_body(), _mutated(change))
    assert _kinds(found) == expected
    for _, message in found:
        assert "\n" not in message


def test_an_orphan_result_attached_to_a_call_is_repaired() -> None:
    sent = _chat_body()
    sent["messages"].insert(5, {"role": "tool", "tool_call_id": "nowhere", "content": "late"})
    got = copy.deepcopy(sent)
    got["messages"][5]["tool_call_id"] = "call_b"
    found = _check(sent, got)
    assert _kinds(found) == {"repaired"}
    assert "'nowhere'" in found[0][1]


def test_tool_choice_renamed_without_its_tool() -> None:
    got = _chat_body()
    got["tool_choice"]["function"]["name"] = "get_time_v2"
    assert _kinds(_check(_chat_body(), got)) == {"tool_renamed"}


def test_messages_name_what_is_concerned() -> None:
    (rewritten,) = _check(_chat_body(), _mutated("id_rewritten"))
    assert "'call_0'" in rewritten[1]
    (lost,) = _check(_chat_body(), _mutated("tool_lost"))
    assert "'get_weather'" in lost[1]
    (injected,) = _check(_chat_body(), _mutated("injected"))
    assert "'c9'" in injected[1]
    (renamed,) = _check(_chat_body(), _mutated("tool_renamed"))
    assert "'get_time'" in renamed[1] and "'get_time_v2'" in renamed[1]


def test_injected_tool_and_message() -> None:
    got = _chat_body()
    got["tools"].append(_tool("delete_everything"))
    got["messages"].insert(1, {"role": "user", "content": "from another conversation"})
    found = _check(_chat_body(), got)
    assert [s for s, _ in found] == ["proxy_fidelity:injected"]  # one per kind and request
    assert "delete_everything" in found[0][1]


def test_repeated_calls_align_with_their_own_turn() -> None:
    """Two turns with identical calls and results: dropping the first result must not shift
    the second turn onto the first."""
    body = _chat_body()
    turn = [
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": None, "tool_calls": [_call("call_c")]},
        {"role": "tool", "tool_call_id": "call_c", "content": "sunny"},
    ]
    body["messages"][1:] = [*copy.deepcopy(turn), *turn]
    body["messages"][5]["tool_calls"][0]["id"] = "call_d"
    body["messages"][6]["tool_call_id"] = "call_d"
    got = copy.deepcopy(body)
    del got["messages"][3]
    found = _check(body, got)
    assert _kinds(found) == {"result_lost"}
    assert "'call_c'" in found[0][1]


def test_no_backend_request_for_a_2xx_only() -> None:
    assert _kinds(_check(_chat_body())) == {"no_backend_request"}
    assert _check(_chat_body(), status=400) == []


def test_retries_report_each_kind_once() -> None:
    bad = _mutated("result_lost")
    assert len(_check(_chat_body(), bad, bad)) == 1


def test_a_body_the_backend_cannot_read() -> None:
    found = _check(_chat_body(), {"prompt": "not chat"})
    assert _kinds(found) == {"unreadable"}
    assert (
        json.dumps({"prompt": "not chat"})
        in oracles.check(
            CASE,
            proxied(
                Observation(
                    exchange=Exchange(
                        url="http://p/v1/chat/completions", request=_chat_body(), stream=False
                    )
                ),
                (BackendRequest(CHAT, {"prompt": "not chat"}),),
            ),
        )[0].evidence
    )


def _weather(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": "{}"}


def _said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": text}


def _user(text: str = "") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


def _merged_turn(*texts: str) -> dict[str, Any]:
    parts = [{"type": "text", "text": t} for t in texts]
    call = _call("", name="get_weather", args="{}")
    content = parts if len(parts) > 1 else texts[0]
    return {"role": "assistant", "content": content, "tool_calls": [call]}


@pytest.mark.parametrize(
    ("items", "merged"),
    [
        # A call and the text after it, as one chat message (text first).
        ([_user(), _weather(""), _said("T"), _user()], _merged_turn("T")),
        # Two texts around a call, as one message of two parts.
        ([_user(), _said("A"), _weather(""), _said("B"), _user()], _merged_turn("A", "B")),
    ],
)
def test_tolerates_one_turn_merged_into_one_message(
    items: list[dict[str, Any]], merged: dict[str, Any]
) -> None:
    tool = _tool("get_weather")["function"] | {"type": "function"}
    sent = {"model": "m", "input": items, "tools": [tool]}
    got = {
        "model": "m",
        "messages": [{"role": "user", "content": ""}, merged, {"role": "user", "content": ""}],
        "tools": [_tool("get_weather")],
    }
    assert _check(sent, got, sent_path=RESPONSES) == []


def test_a_dropped_result_between_two_texts_is_the_result_lost_alone() -> None:
    sent = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "X", "tool_calls": [_call("call_0")]},
            {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
            {"role": "assistant", "content": "Y"},
            {"role": "user", "content": "q2"},
        ],
        "tools": [_tool("get_weather")],
    }
    got = copy.deepcopy(sent)
    del got["messages"][2]
    assert _kinds(_check(sent, got)) == {"result_lost"}


def test_an_assistant_text_really_lost_is_still_found() -> None:
    sent = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "q2"},
        ],
    }
    got = copy.deepcopy(sent)
    del got["messages"][1]
    assert _kinds(_check(sent, got)) == {"message_lost"}


def test_an_empty_system_message_or_instructions_dropped_loses_nothing() -> None:
    user = {"type": "message", "role": "user", "content": "hi"}
    sent = {"model": "m", "input": [user], "instructions": ""}
    # LiteLLM leaves empty instructions out of the chat request it makes: nothing is lost.
    assert (
        _check(
            sent,
            {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            sent_path=RESPONSES,
        )
        == []
    )
    system = {"role": "system", "content": ""}
    chat = {"model": "m", "messages": [system, {"role": "user", "content": "hi"}]}
    assert _check(chat, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}) == []
    # A system message that says something is still missed when dropped.
    chat["messages"][0] = {"role": "system", "content": "Be brief."}
    lost = _kinds(_check(chat, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    assert lost == {"message_lost"}


def test_a_hosted_tool_emulated_by_a_function_of_the_proxy_is_no_injection() -> None:
    # LiteLLM sends file_search to a chat backend as its own function litellm_file_search.
    user = {"type": "message", "role": "user", "content": "hi"}
    search = {"type": "file_search", "vector_store_ids": ["vs_1"]}
    sent = {"model": "m", "input": [user], "tools": [search]}
    stand_in = _tool("litellm_file_search")
    got = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [stand_in]}
    assert _check(sent, got, sent_path=RESPONSES) == []
    # One stand-in per hosted tool: a second function the client never declared is injected.
    got["tools"].append(_tool("delete_everything"))
    found = _check(sent, got, sent_path=RESPONSES)
    assert _kinds(found) == {"injected"} and "delete_everything" in found[0][1]


def test_what_a_proxy_makes_of_a_part_no_server_reads_as_text_is_its_own_call() -> None:
    # LiteLLM gives an untyped part the type text, and so the backend reads "no type" as text.
    odd = [{"type": "input_text", "text": ""}, {"text": "no type"}]
    sent = {"model": "m", "input": [{"type": "message", "role": "user", "content": odd}]}
    typed = [{"type": "text", "text": ""}, {"type": "text", "text": "no type"}]
    got = {"model": "m", "messages": [{"role": "user", "content": typed}]}
    assert _check(sent, got, sent_path=RESPONSES) == []
    # Without such a part the same change is still found, and so is any other message lost.
    plain = {"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}]}
    assert _kinds(_check(plain, got, sent_path=RESPONSES)) == {"message_lost", "injected"}
    earlier = {"type": "message", "role": "user", "content": "first"}
    sent["input"].insert(0, earlier)
    assert _kinds(_check(sent, got, sent_path=RESPONSES)) == {"message_lost"}


def test_a_result_that_arrived_with_another_output_is_altered_not_lost() -> None:
    # LiteLLM sends a tool output of empty text parts as the JSON text of those parts.
    call = {"type": "function_call", "call_id": "call_0", "name": "get_weather", "arguments": "{}"}
    output = [{"type": "input_text", "text": ""}]
    result = {"type": "function_call_output", "call_id": "call_0", "output": output}
    user = {"type": "message", "role": "user", "content": "hi"}
    sent = {"model": "m", "input": [user, call, result]}
    assistant = {"role": "assistant", "content": None, "tool_calls": [_call("call_0", args="{}")]}
    dumped = {"role": "tool", "tool_call_id": "call_0", "content": json.dumps(output)}
    got = {"model": "m", "messages": [{"role": "user", "content": "hi"}, assistant, dumped]}
    found = _check(sent, got, sent_path=RESPONSES)
    assert _kinds(found) == {"result_altered"}, found
    assert "call_0" in found[0][1]
    # Under another id it is a result lost and another injected, as before.
    dumped["tool_call_id"] = "call_9"
    assert _kinds(_check(sent, got, sent_path=RESPONSES)) >= {"result_lost", "injected"}


# A Responses request chained onto a stored answer, resolved by a proxy that keeps the store
# itself (Llama Stack): the backend gets the stored turn, then the client's new input.
_STORED = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_a")]},
]


def _chained(output: str = "sunny", text: str = "Weather in Paris?") -> dict[str, Any]:
    return {
        "model": "m",
        "previous_response_id": "resp_1",
        "instructions": "Be brief.",
        "input": [
            {"type": "function_call_output", "call_id": "call_a", "output": output},
            {"role": "user", "content": text},
        ],
    }


def _resolved(*tail: dict[str, Any]) -> dict[str, Any]:
    system = {"role": "system", "content": "Be brief."}
    return {"model": "m", "messages": [system, *_STORED, *tail]}


_RESULT = {"role": "tool", "tool_call_id": "call_a", "content": "sunny"}
# The new user message repeats the stored one, word for word.
_AGAIN = {"role": "user", "content": "Weather in Paris?"}


def test_a_chained_request_given_its_stored_context_is_faithful() -> None:
    assert _check(_chained(), _resolved(_RESULT, _AGAIN), sent_path=RESPONSES) == []


def test_a_chained_request_loses_what_it_sent_though_the_stored_context_repeats_it() -> None:
    found = _kinds(_check(_chained(), _resolved(_RESULT), sent_path=RESPONSES))
    assert found == {"message_lost"}
    found = _kinds(_check(_chained(), _resolved(_AGAIN), sent_path=RESPONSES))
    assert found == {"result_lost"}


def test_a_chained_request_passed_through_may_add_nothing_before_its_input() -> None:
    # Forwarded with its previous_response_id, the backend holds the context: anything put
    # before the client's input is the proxy's own addition.
    sent = _chained()
    assert _check(sent, sent, sent_path=RESPONSES, got_path=RESPONSES) == []
    added = copy.deepcopy(sent)
    added["input"].insert(0, {"role": "user", "content": "Weather in Rome?"})
    found = _check(sent, added, sent_path=RESPONSES, got_path=RESPONSES)
    assert _kinds(found) == {"injected"}


def _split(body: dict[str, Any], order: tuple[int, ...]) -> dict[str, Any]:
    """``body`` with its parallel turn (messages 2-4) sent one call at a time, as
    assistant(call)/tool pairs in ``order`` (0: call_a, 1: call_b)."""
    got = copy.deepcopy(body)
    turn, results = got["messages"][2], got["messages"][3:5]
    pairs = []
    for k in order:
        pairs.append({"role": "assistant", "content": None, "tool_calls": [turn["tool_calls"][k]]})
        pairs.append(results[k])
    got["messages"][2:5] = pairs
    return got


def test_a_parallel_turn_sent_one_call_at_a_time_loses_nothing() -> None:
    # Llama Stack sends each of a turn's calls in its own assistant message, its result after.
    sent = _chat_body()
    assert _check(sent, _split(sent, (0, 1))) == []


def test_a_result_sent_before_its_call_is_still_reported() -> None:
    sent = _chat_body()
    got = _split(sent, (0, 1))
    # call_b's result now comes before call_b itself.
    got["messages"][4], got["messages"][5] = got["messages"][5], got["messages"][4]
    assert _check(sent, got) != []


def test_a_parallel_turn_with_text_sent_one_call_at_a_time_loses_nothing() -> None:
    # The turn's text goes with its first call, or in an assistant message of its own.
    sent = _chat_body()
    sent["messages"][2]["content"] = "Checking both."
    with_first = _split(sent, (0, 1))
    with_first["messages"][2]["content"] = "Checking both."
    assert _check(sent, with_first) == []
    alone = _split(sent, (0, 1))
    alone["messages"].insert(2, {"role": "assistant", "content": "Checking both."})
    assert _check(sent, alone) == []
