"""``framing``: streams framed against their api's spec, judged on raw server-sent events."""

from __future__ import annotations

import json
from typing import Any

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation, SSEEvent
from agentfuzz.oracles._framing import framing

CHAT = Case(history=History(items=(UserMessage(text="hi"),)))
RESPONSES = CHAT.model_copy(update={"api": "responses"})


def _obs(api: str, events: list[SSEEvent], **kw: Any) -> Observation:
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    exchange = Exchange(url=f"http://h{path}", request={}, stream=True, status=200,
                        events=tuple(events))  # fmt: skip
    return Observation(exchange=exchange, **kw)


def _ev(kind: str | None, typ: str, seq: int, **fields: Any) -> SSEEvent:
    return SSEEvent(kind, json.dumps({"type": typ, "sequence_number": seq, **fields}))


def _signatures(case: Case, obs: Observation) -> list[str]:
    return [v.signature for v in framing(case, obs)]


GOOD = [
    _ev("response.created", "response.created", 0),
    _ev("response.output_item.added", "response.output_item.added", 1, output_index=0,
        item={"type": "function_call", "id": "fc_1"}),
    _ev("response.function_call_arguments.delta", "response.function_call_arguments.delta", 2,
        item_id="fc_1", output_index=0, delta="{}"),
    _ev("response.completed", "response.completed", 3),
]  # fmt: skip


def test_a_responses_stream_by_the_spec_is_silent() -> None:
    assert _signatures(RESPONSES, _obs("responses", GOOD)) == []
    # A failed stream is the error oracle's.
    failed = _obs("responses", GOOD[:2], errors=(("no_terminal", "x"),))
    assert _signatures(RESPONSES, failed) == []


def test_responses_framing_faults_each_have_a_signature() -> None:
    unnamed = [SSEEvent(None, e.data) for e in GOOD]
    assert _signatures(RESPONSES, _obs("responses", unnamed)) == ["framing:event_missing"]
    wrong = [GOOD[0], SSEEvent("response.created", GOOD[1].data), *GOOD[2:]]
    assert _signatures(RESPONSES, _obs("responses", wrong)) == ["framing:event_mismatch"]
    done = [*GOOD, SSEEvent(None, "[DONE]")]
    assert _signatures(RESPONSES, _obs("responses", done)) == ["framing:done_in_responses"]
    after = [*GOOD, _ev("response.in_progress", "response.in_progress", 4)]
    assert _signatures(RESPONSES, _obs("responses", after)) == ["framing:after_terminal"]
    gap = [*GOOD[:3], _ev("response.completed", "response.completed", 5)]
    assert _signatures(RESPONSES, _obs("responses", gap)) == ["framing:sequence"]
    custom = "response.custom_tool_call_input.delta"
    swapped = [*GOOD[:2], _ev(custom, custom, 2, item_id="fc_1", output_index=0), GOOD[3]]
    assert _signatures(RESPONSES, _obs("responses", swapped)) == ["framing:delta_family"]


def test_a_chat_stream_ends_with_done_and_nothing_after() -> None:
    chunk = SSEEvent(None, json.dumps({"id": "c", "choices": []}))
    assert _signatures(CHAT, _obs("chat", [chunk, SSEEvent(None, "[DONE]")])) == []
    assert _signatures(CHAT, _obs("chat", [chunk])) == ["framing:no_done"]
    late = [chunk, SSEEvent(None, "[DONE]"), chunk]
    assert _signatures(CHAT, _obs("chat", late)) == ["framing:after_done"]
