"""``wire_schema``: bodies and events the openai SDK's own models reject."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation, Violation
from agentfuzz.oracles import check

CASE = Case(history=History(items=(UserMessage(text="hi"),)))

COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}
CHUNK: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1_700_000_000,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "delta": {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f"}}]},
            "finish_reason": None,
        }
    ],
}
CALL_ITEM: dict[str, Any] = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "f",
    "arguments": "{}",
}
RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1_700_000_000,
    "model": "m",
    "output": [CALL_ITEM],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
ADDED: dict[str, Any] = {
    "type": "response.output_item.added",
    "sequence_number": 1,
    "output_index": 0,
    "item": CALL_ITEM,
}


def _obs(api: str, stream: bool, *payloads: Any, **extra: Any) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(url=f"http://127.0.0.1:8000{path}", request={}, stream=stream, status=200)
    return Observation(exchange=exchange, payloads=payloads, **extra)


def _run(obs: Observation) -> list[Violation]:
    return check(CASE, obs, only=["wire_schema"])


def _broken(base: dict[str, Any], path: str, value: Any = None, delete: bool = False) -> Any:
    """A deep copy of ``base`` with the dotted ``path`` set to ``value`` (or deleted)."""
    doc = copy.deepcopy(base)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target: Any = doc
    for part in parents:
        target = target[part]
    if delete:
        del target[last]
    else:
        target[last] = value
    return doc


@pytest.mark.parametrize(
    ("api", "stream", "payload"),
    [
        ("chat", False, COMPLETION),
        ("chat", True, CHUNK),
        ("responses", False, RESPONSE),
        ("responses", True, ADDED),
    ],
)
def test_sdk_valid_payloads_are_silent(api: str, stream: bool, payload: Any) -> None:
    assert _run(_obs(api, stream, payload)) == []


def test_an_empty_list_body_is_not_an_object() -> None:
    (found,) = _run(_obs("chat", False, []))
    assert found.signature == "wire_schema:ChatCompletion:not_an_object"
    assert found.evidence == "[]"


@pytest.mark.parametrize(
    ("api", "stream", "payload", "signature"),
    [
        (
            "chat",
            False,
            _broken(COMPLETION, "choices.0.finish_reason", "tool_call"),
            "wire_schema:ChatCompletion:choices.*.finish_reason",
        ),
        (
            "chat",
            False,
            _broken(COMPLETION, "choices.0.message.tool_calls.0.function.arguments", delete=True),
            "wire_schema:ChatCompletion:choices.*.message.tool_calls.*.function.arguments",
        ),
        (
            "chat",
            True,
            _broken(CHUNK, "choices.0.delta.tool_calls.0.index", None),
            "wire_schema:ChatCompletionChunk:choices.*.delta.tool_calls.*.index",
        ),
        (
            "responses",
            False,
            _broken(RESPONSE, "output.0.call_id", delete=True),
            "wire_schema:Response:output.*.call_id",
        ),
        (
            "responses",
            False,
            _broken(RESPONSE, "output.0.type", "tool_call"),
            "wire_schema:Response:output.*.type",
        ),
        (
            "responses",
            True,
            _broken(ADDED, "item.call_id", delete=True),
            "wire_schema:ResponseOutputItemAddedEvent:item.call_id",
        ),
        (
            "responses",
            True,
            {"type": "response.tool_call.delta", "sequence_number": 2},
            "wire_schema:ResponseStreamEvent:type",
        ),
    ],
)
def test_rejections_name_the_model_and_the_normalized_path(
    api: str, stream: bool, payload: Any, signature: str
) -> None:
    (found,) = _run(_obs(api, stream, payload))
    assert found.signature == signature
    assert found.evidence == json.dumps(payload)[:500] or found.evidence.endswith("…")


def test_the_same_fault_in_many_events_is_one_violation() -> None:
    one = _broken(CHUNK, "choices.0.delta.tool_calls.0.index", None)
    two = _broken(one, "id", "chatcmpl-other")
    (found,) = _run(_obs("chat", True, CHUNK, one, two))
    assert "(in 2 payloads)" in found.message
    assert '"chatcmpl-1"' in found.evidence


def test_signature_leaves_out_ids_and_positions() -> None:
    a = _broken(_broken(RESPONSE, "output.0.call_id", delete=True), "id", "resp_a")
    b = _broken(RESPONSE, "output", [CALL_ITEM, _broken(CALL_ITEM, "call_id", delete=True)])
    assert _run(_obs("responses", False, a))[0].key == _run(_obs("responses", False, b))[0].key


def test_long_payload_evidence_is_clipped() -> None:
    big = _broken(COMPLETION, "choices.0.finish_reason", "x" * 2000)
    (found,) = _run(_obs("chat", False, big))
    assert len(found.evidence) <= 500


def test_reported_error_frames_and_refusals_are_skipped() -> None:
    frame = {"error": {"message": "<|tool_call_begin|>functions_f_0", "code": 500}}
    reported = _obs("chat", True, CHUNK, frame, errors=(("error_frame", "x"),))
    assert _run(reported) == []
    (unreported,) = _run(_obs("chat", True, CHUNK, frame))
    assert unreported.signature.startswith("wire_schema:ChatCompletionChunk:")
    refusal = {"error": {"message": "bad request", "type": "invalid_request_error"}}
    assert _run(_obs("chat", False, refusal, refused=True)) == []
    crash = {"detail": "Internal Server Error"}
    assert _run(_obs("chat", False, crash, errors=(("http_status", "500: ..."),))) == []
    assert _run(_obs("chat", False, crash)) != []


def test_responses_error_events_are_validated_unless_reported() -> None:
    event = {"type": "error", "sequence_number": 3, "message": "boom", "code": None, "param": None}
    assert _run(_obs("responses", True, event)) == []
    broken = {"type": "error", "sequence_number": 3}
    (found,) = _run(_obs("responses", True, broken))
    assert found.signature.startswith("wire_schema:ResponseErrorEvent:")
    assert _run(_obs("responses", True, broken, errors=(("error_frame", "?"),))) == []


def _terminal(kind: str, status: str) -> dict[str, Any]:
    return {"type": kind, "sequence_number": 9, "response": {**RESPONSE, "status": status}}


@pytest.mark.parametrize(
    ("kind", "status", "should"),
    [
        ("response.completed", "incomplete", "response.incomplete"),
        ("response.completed", "failed", "response.failed"),
        ("response.incomplete", "completed", "response.completed"),
    ],
)
def test_a_terminal_event_must_carry_its_own_status(kind: str, status: str, should: str) -> None:
    (found,) = _run(_obs("responses", True, _terminal(kind, status)))
    assert found.signature.endswith(":response.status")
    assert kind in found.message and should in found.message


@pytest.mark.parametrize(
    ("kind", "status"),
    [("response.completed", "completed"), ("response.incomplete", "incomplete")],
)
def test_a_terminal_event_with_its_own_status_is_silent(kind: str, status: str) -> None:
    assert _run(_obs("responses", True, _terminal(kind, status))) == []


def _cut(response: dict[str, Any], item_status: str) -> dict[str, Any]:
    item = {**CALL_ITEM, "arguments": '{"city": "Par', "status": item_status}
    return {
        **response,
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [item],
    }


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_the_item_cut_by_the_token_budget_is_not_completed(stream: bool) -> None:
    cut = _cut(RESPONSE, "completed")
    payload = {"type": "response.incomplete", "sequence_number": 9, "response": cut}
    (found,) = _run(_obs("responses", stream, payload if stream else cut))
    assert found.signature.endswith(":output.*.status")
    assert "function_call" in found.message and "max_output_tokens" in found.message


def test_an_incomplete_last_item_in_a_cut_response_is_silent() -> None:
    assert _run(_obs("responses", False, _cut(RESPONSE, "incomplete"))) == []


def test_a_cut_response_ending_in_response_completed_shows_both_faults() -> None:
    payload = {"type": "response.completed", "sequence_number": 9}
    payload["response"] = _cut(RESPONSE, "completed")
    found = _run(_obs("responses", True, payload))
    assert sorted(v.signature.rsplit(":", 1)[1] for v in found) == [
        "output.*.status",
        "response.status",
    ]
