"""Test helpers: raw requests to the reference server, strict SDK-model validation, clean checks."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

EVENT = TypeAdapter(ResponseStreamEvent)
# One client for the whole run: building an httpx.Client (its SSL context) costs ~50 ms. No
# connection is kept alive: the servers it talks to stop between tests, and a pooled socket
# to a stopped server was left for the garbage collector (a ResourceWarning in a later test).
_CLIENT = httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))
MARKUP = re.compile(r"<\|[A-Za-z0-9_]+\|>")

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city", "days"],
    "additionalProperties": False,
}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "minLength": 1}},
                "required": ["path"],
            },
        },
    },
]
RESPONSES_TOOLS = [{"type": "function", **t["function"]} for t in CHAT_TOOLS]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in CHAT_TOOLS}


@dataclass
class Turn:
    """What a strict client assembled from one answer."""

    status: int
    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)
    error: str | None = None
    identity: list[tuple[str, Any, Any, Any]] = field(default_factory=list)
    body: str = ""


def frames(text: str) -> list[tuple[str | None, str]]:
    """SSE frames as (event, data); comment lines are skipped."""
    out = []
    for block in re.split(r"\r?\n\r?\n", text):
        event, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((event, "\n".join(data)))
    return out


def send(url: str, api: str, body: dict[str, Any]) -> Turn:
    """POST a body and assemble the answer, validating every body or event against the SDK."""
    path = "/chat/completions" if api == "chat" else "/responses"
    reply = _CLIENT.post(url + path, json=body)
    turn = Turn(reply.status_code, body=reply.text)
    if reply.status_code != 200:
        turn.error = reply.text
        return turn
    if not body.get("stream"):
        return _chat_body(turn, reply.json()) if api == "chat" else _resp_body(turn, reply.json())
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = frames(reply.text)
    return _chat_stream(turn, events) if api == "chat" else _resp_stream(turn, events)


def _chat_body(turn: Turn, raw: dict[str, Any]) -> Turn:
    msg = ChatCompletion.model_validate(raw).choices[0].message
    turn.text = msg.content or ""
    turn.reasoning = raw["choices"][0]["message"].get("reasoning_content") or ""
    for call in msg.tool_calls or []:
        fn = call.function  # type: ignore[union-attr]
        turn.calls.append({"id": call.id, "name": fn.name, "arguments": fn.arguments})
    return turn


def _chat_stream(turn: Turn, events: list[tuple[str | None, str]]) -> Turn:
    ids = set()
    by_index: dict[int, dict[str, Any]] = {}
    assert events, "empty stream"
    for _, data in events[:-1]:
        raw = json.loads(data)
        if "error" in raw:
            turn.error = raw["error"]["message"]
            return turn
        chunk = ChatCompletionChunk.model_validate(raw)
        ids.add(chunk.id)
        delta = chunk.choices[0].delta
        turn.text += delta.content or ""
        turn.reasoning += raw["choices"][0]["delta"].get("reasoning_content") or ""
        for tc in delta.tool_calls or []:
            slot = by_index.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            if tc.id:
                turn.indexes.append(tc.index)
                slot["id"] = tc.id
            if tc.function and tc.function.name:
                slot["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                slot["arguments"] += tc.function.arguments
    last = events[-1][1]
    if last != "[DONE]":
        raw = json.loads(last)
        turn.error = raw.get("error", {}).get("message", "stream ended without [DONE]")
    assert len(ids) <= 1, f"chunk ids changed: {ids}"
    turn.calls = [by_index[i] for i in sorted(by_index)]
    return turn


def _resp_body(turn: Turn, raw: dict[str, Any]) -> Turn:
    response = Response.model_validate(raw)
    for item in response.output:
        if item.type == "message":
            turn.text += "".join(getattr(p, "text", "") for p in item.content)
        elif item.type == "reasoning":
            turn.reasoning += "".join(c.text for c in item.content or [])
        elif item.type == "function_call":
            turn.calls.append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
    return turn


def _resp_stream(turn: Turn, events: list[tuple[str | None, str]]) -> Turn:
    seen: dict[int, list[tuple[str, Any, Any, Any]]] = {}
    numbers = []
    final: Any = None
    for name, data in events:
        event = EVENT.validate_python(json.loads(data))
        assert name == event.type, (name, event.type)
        numbers.append(event.sequence_number)
        if event.type == "error":
            turn.error = event.message
        elif event.type in ("response.output_item.added", "response.output_item.done"):
            item = event.item
            key = (event.type, item.type, item.id, getattr(item, "call_id", None))
            seen.setdefault(event.output_index, []).append(key)
        elif event.type == "response.completed":
            final = event.response
    assert numbers == list(range(len(numbers))), numbers
    if turn.error is not None:
        return turn
    assert final is not None, "stream ended without response.completed"
    _resp_body(turn, final.model_dump(mode="json"))
    for index, item in enumerate(final.output):
        for kind, *key in seen.get(index, []):
            turn.identity.append((kind, *key))
            done = (item.type, item.id, getattr(item, "call_id", None))
            if tuple(key) != done:
                turn.identity.append(("completed", *done))
    return turn


def identity_stable(turn: Turn) -> bool:
    """True when no ``completed`` entry was recorded, i.e. all ids agreed."""
    return not any(entry[0] == "completed" for entry in turn.identity)


def assert_clean(turn: Turn, tools: bool = True, choice: Any = "auto") -> None:
    """Everything the fuzzer's oracles check on a single answer."""
    assert turn.status == 200, turn.body[:300]
    assert turn.error is None, turn.error
    assert turn.text.strip() or turn.calls, "empty turn"
    assert not MARKUP.search(turn.text), turn.text
    assert identity_stable(turn), turn.identity
    assert turn.indexes == list(range(len(turn.indexes))), turn.indexes
    if choice == "none" or not tools:
        assert not turn.calls, turn.calls
    if choice == "required" or isinstance(choice, dict):
        assert turn.calls
    for call in turn.calls:
        assert call["id"], call
        assert call["name"] in SCHEMAS, call
        assert not MARKUP.search(call["name"] + call["arguments"] + call["id"]), call
        args = json.loads(call["arguments"])
        assert isinstance(args, dict)
        jsonschema.validate(args, SCHEMAS[call["name"]])
