"""The ``/v1/chat/completions`` dialect: Case -> request body, answer -> Observation."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    ForeignItem,
    History,
    Options,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, Observation, ObservedCall
from agentfuzz.wire.dialects._forms import apply_forms
from agentfuzz.wire.dialects._wire import Faults, as_dict, as_list, as_str, is_foreign_call

__all__ = ["PATH", "assemble_chat", "build_chat"]

PATH = "/chat/completions"
_MODES = ("auto", "none", "required")


def build_chat(case: Case, model: str) -> dict[str, Any]:
    """The exact JSON body of a chat completion request for ``case``."""
    body: dict[str, Any] = {"model": model, "messages": _messages(case)}
    body.update(_tools(case.history, case.options))
    body["stream"] = case.stream
    opts = case.options
    if opts.seed is not None:
        body["seed"] = opts.seed
    if opts.temperature is not None:
        body["temperature"] = opts.temperature
    if opts.max_tokens is not None:
        body["max_tokens"] = opts.max_tokens
    # The rest of the surface as drawn, in the api's own wire form; it never touches the stream.
    body.update((k, v) for k, v in opts.fields.items() if k != "stream")
    return apply_forms(body, "chat", opts.forms)


def _messages(case: Case) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    # Chat has no reasoning item: standalone reasoning rides on the next assistant message.
    pending: list[str] = []
    for item in case.history.items:
        if isinstance(item, UserMessage):
            messages.append({"role": "user", "content": item.text})
        elif isinstance(item, SystemMessage):
            messages.append({"role": item.role, "content": item.text})
        elif isinstance(item, ReasoningItem):
            pending.append(item.text)
        elif isinstance(item, ToolResult):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
        elif isinstance(item, AssistantMessage):
            messages.append(_assistant(item, pending))
            pending = []
        elif isinstance(item, ForeignItem):
            messages.append(copy.deepcopy(item.body))
    return messages


def _assistant(item: AssistantMessage, pending: list[str]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": item.text}
    if item.tool_calls:
        msg["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.flat_name, "arguments": call.arguments},
            }
            for call in item.tool_calls
        ]
    reasoning = [*pending, *([item.reasoning] if item.reasoning is not None else [])]
    if reasoning:
        msg["reasoning_content"] = "\n\n".join(reasoning)
    return msg


def _function(tool: Tool) -> dict[str, Any]:
    fn: dict[str, Any] = {
        "name": tool.flat_name,
        "description": tool.description,
        "parameters": tool.parameters,
    }
    if tool.strict is not None:
        fn["strict"] = tool.strict
    return {"type": "function", "function": fn}


def _tools(history: History, opts: Options) -> dict[str, Any]:
    if not (opts.include_tools and (history.tools or history.foreign_tools)):
        return {}
    declared = [_function(tool) for tool in history.tools]
    out: dict[str, Any] = {"tools": declared + copy.deepcopy(list(history.foreign_tools))}
    choice = opts.tool_choice
    if choice is not None:
        out["tool_choice"] = (
            choice if choice in _MODES else {"type": "function", "function": {"name": choice}}
        )
    return out


def assemble_chat(exchange: Exchange) -> Observation:
    """Assemble a chat answer, streamed or not, into the turn as a client sees it."""
    faults = Faults()
    parsed, body = faults.triage(exchange)
    if exchange.stream and exchange.events:
        return _assemble_stream(exchange, faults)
    if exchange.stream and not parsed and not faults.refused and not faults.errors:
        # A stream request that got neither events nor a body never saw its end.
        faults.add("no_terminal", f"stream with no events (status {exchange.status})")
    fields = _from_completion(body) if parsed else {}
    return Observation(
        exchange=exchange,
        errors=tuple(faults.errors),
        payloads=tuple(faults.payloads),
        refused=faults.refused,
        **fields,
    )


def _text_of(value: Any) -> str:
    """Content as text: a string, or the ``text`` of content parts some servers send."""
    if isinstance(value, str):
        return value
    return "".join(as_str(as_dict(p).get("text")) or "" for p in as_list(value))


def _args_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


def _reasoning_of(obj: dict[str, Any]) -> str:
    return as_str(obj.get("reasoning_content")) or as_str(obj.get("reasoning")) or ""


def _from_completion(body: Any) -> dict[str, Any]:
    choices = [as_dict(c) for c in as_list(as_dict(body).get("choices"))]
    choice = next((c for c in choices if c.get("index", 0) == 0), choices[0] if choices else {})
    message = as_dict(choice.get("message"))
    calls = []
    others = []
    for i, raw in enumerate(as_list(message.get("tool_calls"))):
        call = as_dict(raw)
        if is_foreign_call(call):
            others.append(str(call["type"]))
            continue
        fn = as_dict(call.get("function"))
        calls.append(
            ObservedCall(
                index=i,
                id=as_str(call.get("id")),
                name=as_str(fn.get("name")),
                arguments=_args_of(fn.get("arguments")),
            )
        )
    if isinstance(message.get("function_call"), dict):
        others.append("function_call")  # the legacy form: one call, no id
    return {
        "text": _text_of(message.get("content")),
        "reasoning": _reasoning_of(message),
        "tool_calls": tuple(calls),
        "finish_reason": as_str(choice.get("finish_reason")),
        "others": tuple(others),
    }


@dataclass
class _Slot:
    index: int | None
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)
    # The type its first delta gave, when not a function (a custom tool's call).
    foreign: str | None = None


@dataclass
class _Accumulator:
    """Merges streamed chunk deltas into one message, tool calls keyed by their ``index``."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    slots: dict[object, _Slot] = field(default_factory=dict)
    last_key: object = None
    unindexed: int = 0
    chunk_ids: list[str] = field(default_factory=list)
    stream_indexes: list[int | None] = field(default_factory=list)
    finish_reason: str | None = None
    # A legacy ``function_call`` came in the deltas.
    legacy: bool = False

    def feed(self, chunk: dict[str, Any]) -> None:
        chunk_id = as_str(chunk.get("id"))
        if chunk_id is not None:
            self.chunk_ids.append(chunk_id)
        for raw in as_list(chunk.get("choices")):
            choice = as_dict(raw)
            if choice.get("index", 0) != 0:
                # With ``n`` > 1 choices interleave; the turn a client carries on is choice 0.
                continue
            delta = as_dict(choice.get("delta"))
            self.text.append(_text_of(delta.get("content")))
            self.reasoning.append(_reasoning_of(delta))
            for call in as_list(delta.get("tool_calls")):
                self._feed_call(as_dict(call))
            if isinstance(delta.get("function_call"), dict):
                self.legacy = True
            finish = as_str(choice.get("finish_reason"))
            if finish is not None:
                self.finish_reason = finish

    def _feed_call(self, call: dict[str, Any]) -> None:
        raw_index = call.get("index")
        index = (
            raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else None
        )
        call_id = as_str(call.get("id"))
        if call.get("id") is not None:
            self.stream_indexes.append(index)
        key: object
        if index is not None:
            key = index
        elif call_id is not None or self.last_key is None:
            # Without an index, a delta carrying an id starts a call; one without continues it.
            self.unindexed += 1
            key = ("unindexed", self.unindexed)
        else:
            key = self.last_key
        slot = self.slots.setdefault(key, _Slot(index=index))
        if slot.foreign is None and is_foreign_call(call):
            slot.foreign = str(call["type"])
        self.last_key = key
        fn = as_dict(call.get("function"))
        slot.id = slot.id if slot.id is not None else call_id
        slot.name = slot.name if slot.name is not None else as_str(fn.get("name"))
        slot.arguments.append(_args_of(fn.get("arguments")))

    def calls(self) -> tuple[ObservedCall, ...]:
        return tuple(
            ObservedCall(index=s.index, id=s.id, name=s.name, arguments="".join(s.arguments))
            for s in self.slots.values()
            if s.foreign is None
        )

    def others(self) -> tuple[str, ...]:
        foreign = tuple(s.foreign for s in self.slots.values() if s.foreign is not None)
        return (*foreign, *(("function_call",) if self.legacy else ()))


def _assemble_stream(exchange: Exchange, faults: Faults) -> Observation:
    acc = _Accumulator()
    done = False
    for event in exchange.events:
        if event.data.strip() == "[DONE]":
            done = True
            continue
        ok, payload = faults.read_event(event.event, event.data)
        if ok:
            acc.feed(as_dict(payload))
    if not done and acc.finish_reason is None:
        faults.add("no_terminal", f"chat stream ended after {len(exchange.events)} events")
    return Observation(
        exchange=exchange,
        text="".join(acc.text),
        reasoning="".join(acc.reasoning),
        tool_calls=acc.calls(),
        others=acc.others(),
        finish_reason=acc.finish_reason,
        chunk_ids=tuple(acc.chunk_ids),
        stream_indexes=tuple(acc.stream_indexes),
        payloads=tuple(faults.payloads),
        errors=tuple(faults.errors),
        refused=faults.refused,
    )
