"""The ``/v1/responses`` dialect: Case -> typed input items, answer -> Observation."""

from __future__ import annotations

import copy
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
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, ItemSighting, Observation, ObservedCall
from agentfuzz.wire.dialects._forms import apply_forms
from agentfuzz.wire.dialects._responses_stream import (
    StreamState,
    reasoning_of_item,
    text_of_message,
)
from agentfuzz.wire.dialects._wire import Faults, as_dict, as_list, as_str

__all__ = ["PATH", "assemble_responses", "build_responses"]

PATH = "/responses"
_MODES = ("auto", "none", "required")


def build_responses(case: Case, model: str) -> dict[str, Any]:
    """The exact JSON body of a Responses request for ``case``."""
    body: dict[str, Any] = {"model": model, "input": _input(case)}
    body.update(_tools(case.history, case.options))
    body["stream"] = case.stream
    opts = case.options
    if opts.temperature is not None:
        body["temperature"] = opts.temperature
    if opts.max_tokens is not None:
        body["max_output_tokens"] = opts.max_tokens
    # The rest of the surface as drawn, in the api's own wire form; it never touches the stream.
    body.update((k, v) for k, v in opts.fields.items() if k != "stream")
    return apply_forms(body, "responses", opts.forms)


def _reasoning(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": text}]}


def _call(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function_call"}
    if call.item_id is not None:
        out["id"] = call.item_id
    out |= {
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
    }
    if call.namespace:
        out["namespace"] = call.namespace
    return out


def _input(case: Case) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for position, item in enumerate(case.history.items):
        # Ids the history lacks are derived from the position, so a body is reproducible.
        fallback_id = f"rs_{position:04d}"
        if isinstance(item, UserMessage):
            items.append({"type": "message", "role": "user", "content": item.text})
        elif isinstance(item, SystemMessage):
            items.append({"type": "message", "role": item.role, "content": item.text})
        elif isinstance(item, ReasoningItem):
            items.append(_reasoning(item.id or fallback_id, item.text))
        elif isinstance(item, ToolResult):
            items.append(
                {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
            )
        elif isinstance(item, AssistantMessage):
            if item.reasoning is not None:
                items.append(_reasoning(fallback_id, item.reasoning))
            if item.text is not None:
                items.append({"type": "message", "role": "assistant", "content": item.text})
            items.extend(_call(call) for call in item.tool_calls)
        elif isinstance(item, ForeignItem):
            items.append(copy.deepcopy(item.body))
    return items


def _function(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": bool(tool.strict),
    }


def _tools(history: History, opts: Options) -> dict[str, Any]:
    if not (opts.include_tools and (history.tools or history.foreign_tools)):
        return {}
    declared: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for tool in history.tools:
        if tool.namespace is None:
            declared.append(_function(tool))
            continue
        if tool.namespace not in groups:
            # The group takes the place of its first member; later members join it.
            groups[tool.namespace] = []
            declared.append(
                {
                    "type": "namespace",
                    "name": tool.namespace,
                    "description": "",
                    "tools": groups[tool.namespace],
                }
            )
        groups[tool.namespace].append(_function(tool))
    out: dict[str, Any] = {"tools": declared + copy.deepcopy(list(history.foreign_tools))}
    choice = opts.tool_choice
    if choice is not None:
        out["tool_choice"] = choice if choice in _MODES else {"type": "function", "name": choice}
    return out


def assemble_responses(exchange: Exchange) -> Observation:
    """Assemble a Responses answer, streamed or not, into the turn as a client sees it."""
    faults = Faults()
    parsed, body = faults.triage(exchange)
    if exchange.stream and exchange.events:
        return _assemble_stream(exchange, faults)
    if exchange.stream and not parsed and not faults.refused and not faults.errors:
        faults.add("no_terminal", f"stream with no events (status {exchange.status})")
    fields = _from_response(as_dict(body), faults) if parsed else {}
    return Observation(
        exchange=exchange,
        errors=tuple(faults.errors),
        payloads=tuple(faults.payloads),
        refused=faults.refused,
        **fields,
    )


def _from_response(response: dict[str, Any], faults: Faults) -> dict[str, Any]:
    text: list[str] = []
    reasoning: list[str] = []
    reasoning_ids: list[str] = []
    calls: list[ObservedCall] = []
    others: list[str] = []
    types: list[str] = []
    for position, raw in enumerate(as_list(response.get("output"))):
        item = as_dict(raw)
        kind = item.get("type")
        types.append(kind if isinstance(kind, str) else "")
        if kind == "message":
            text.append(text_of_message(item))
        elif kind == "reasoning":
            reasoning.append(reasoning_of_item(item))
            reasoning_ids.extend(i for i in (as_str(item.get("id")),) if i)
        elif kind == "function_call":
            calls.append(
                ObservedCall(
                    index=position,
                    id=as_str(item.get("id")),
                    name=as_str(item.get("name")),
                    arguments=as_str(item.get("arguments")) or "",
                    call_id=as_str(item.get("call_id")),
                    namespace=as_str(item.get("namespace")),
                )
            )
        elif isinstance(kind, str):
            others.append(kind)
    status = as_str(response.get("status"))
    if status == "failed":
        faults.add("response_failed", f"status failed: {response.get('error')}")
    return {
        "text": "".join(text),
        "reasoning": "".join(reasoning),
        "tool_calls": tuple(calls),
        "others": tuple(others),
        "status": status,
        "reasoning_id": reasoning_ids[0] if reasoning_ids else None,
        "response_id": as_str(response.get("id")),
        "output_types": tuple(types),
    }


def _assemble_stream(exchange: Exchange, faults: Faults) -> Observation:
    state = StreamState(faults)
    for event in exchange.events:
        if event.data.strip() == "[DONE]":
            # Not part of the Responses protocol, but harmless: some servers append it.
            continue
        ok, payload = faults.read_event(event.event, event.data)
        if ok:
            state.feed(event.event, as_dict(payload))
    if not state.terminal:
        faults.add("no_terminal", f"responses stream ended after {len(exchange.events)} events")
    return Observation(
        exchange=exchange,
        text=state.text(),
        reasoning=state.reasoning(),
        tool_calls=state.calls(),
        others=_others(state.sightings),
        status=state.status,
        sightings=tuple(state.sightings),
        output_types=tuple(s.type for s in state.sightings if s.phase == "completed"),
        reasoning_id=_final_reasoning_id(state.sightings),
        response_id=state.response_id,
        payloads=tuple(faults.payloads),
        errors=tuple(faults.errors),
        refused=faults.refused,
    )


_MODELLED = ("message", "reasoning", "function_call", "")


def _others(sightings: list[ItemSighting]) -> tuple[str, ...]:
    """The output items a stream carried that are not messages, reasoning or function calls,
    one per output index, by type."""
    kinds = {s.output_index: s.type for s in sightings if s.type not in _MODELLED}
    return tuple(kinds[i] for i in sorted(kinds))


def _final_reasoning_id(sightings: list[ItemSighting]) -> str | None:
    """The first reasoning item's id in the stream's last word on it (``completed`` wins)."""
    reasoning = [s for s in sightings if s.type == "reasoning" and s.id]
    if not reasoning:
        return None
    first = min(s.output_index for s in reasoning)
    return [s for s in reasoning if s.output_index == first][-1].id
