"""Planted faults applied to an answer after it is built: how a stream is framed (for the
``framing`` oracle), how an answer contradicts itself or its request (``consistency``), and odd
shapes a middleman in front of this server must carry or refuse without breaking (a call with no
name, a hosted tool's call among the function calls); and two applied to a request as it comes
in, misreading it (for the ``relation`` oracle); and one a request's history crashes
(``chokes``).

Each takes the answer the careful server would send and breaks one thing in it, so a profile
carrying one fault differs from ``fixed`` in that alone.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["chokes", "misanswer", "misanswer_events", "mishear", "reframe"]


def reframe(events: list[tuple[str, str]], fault: str | None) -> list[tuple[str | None, str]]:
    """A Responses stream's ``(event, data)`` pairs, framed as the planted ``fault`` says."""
    out: list[tuple[str | None, str]] = []
    for kind, data in events:
        if fault == "sequence" or (fault == "delta_family" and "function_call_arguments" in kind):
            payload = json.loads(data)
            if fault == "sequence":
                payload["sequence_number"] *= 2
            else:
                kind = kind.replace("function_call_arguments", "custom_tool_call_input")
                payload["type"] = kind
            data = json.dumps(payload)
        out.append((None if fault == "event_missing" else kind, data))
    return [*out, (None, "[DONE]")] if fault == "done_in_responses" else out


def _chat(payload: dict[str, Any], fault: str) -> None:
    """Break a chat completion or chunk in place: the planted answer faults that live in one."""
    if fault == "model_renamed" and "model" in payload:
        payload["model"] = f"backend/{payload['model']}"
    if fault == "calls_say_stop":
        for choice in payload.get("choices") or []:
            if choice.get("finish_reason") == "tool_calls":
                choice["finish_reason"] = "stop"
    if fault == "call_unnamed":
        for choice in payload.get("choices") or []:
            said = choice.get("message") or choice.get("delta") or {}
            for call in said.get("tool_calls") or []:
                if "name" in (call.get("function") or {}):
                    call["function"]["name"] = ""


def _response(body: dict[str, Any], fault: str, event: str | None = None) -> None:
    """Break a response object in place: a body (``event`` None) or the one an event carries.
    The item faults live in the final response, the disagreement in ``response.created``."""
    if fault == "model_renamed":
        body["model"] = f"backend/{body['model']}"
    if fault == "call_unnamed":
        for item in body.get("output") or []:
            _unname(item)
    if fault == "created_disagrees" and event == "response.created":
        body["parallel_tool_calls"] = not body["parallel_tool_calls"]
    if event not in (None, "response.completed"):
        return
    if fault == "item_in_progress" and body.get("status") == "completed":
        for item in body.get("output") or []:
            if item.get("type") == "function_call":
                item["status"] = "in_progress"
    if fault == "item_ids_shared":
        items = body.get("output") or []
        for item in items[1:]:
            item["id"] = items[0]["id"]
    if fault == "hosted_call" and _calls(body):
        body["output"].append(_hosted(body["id"]))


def _unname(item: Any) -> None:
    if isinstance(item, dict) and item.get("type") == "function_call":
        item["name"] = ""


def _calls(body: dict[str, Any]) -> bool:
    return any(item.get("type") == "function_call" for item in body.get("output") or [])


def _hosted(response_id: str) -> dict[str, Any]:
    """A finished web search call, as a hosted tool's item reads in a response's output."""
    return {
        "type": "web_search_call",
        "id": "ws_" + response_id.removeprefix("resp_"),
        "status": "completed",
        "action": {"type": "search", "query": "weather"},
    }


def _break(payload: dict[str, Any], fault: str, event: str | None = None) -> None:
    response = payload.get("response")
    if payload.get("object") == "response":
        _response(payload, fault)
    elif isinstance(response, dict):
        _response(response, fault, event)
    elif isinstance(payload.get("item"), dict):  # response.output_item.added / .done
        if fault == "call_unnamed":
            _unname(payload["item"])
    else:
        _chat(payload, fault)


def misanswer(body: dict[str, Any], fault: str | None) -> dict[str, Any]:
    """A chat completion or response body with the planted answer ``fault`` in it."""
    if fault is not None:
        _break(body, fault)
    return body


def misanswer_events(
    events: list[tuple[str | None, str]], fault: str | None
) -> list[tuple[str | None, str]]:
    """A stream's ``(event, data)`` pairs with the planted answer ``fault`` in them, payload by
    payload as ``misanswer`` breaks a body."""
    if fault is None:
        return events
    out: list[tuple[str | None, str]] = []
    for kind, data in events:
        if data.startswith("{"):
            payload = json.loads(data)
            _break(payload, fault, kind)
            if fault == "hosted_call" and kind == "response.completed":
                out += _hosted_events(payload)
            data = json.dumps(payload)
        out.append((kind, data))
    return out


def _hosted_events(completed: dict[str, Any]) -> list[tuple[str | None, str]]:
    """The hosted call's own ``output_item`` events, sent just before ``response.completed``
    (whose output ``_response`` gave it, and whose sequence number moves past them)."""
    output = completed["response"].get("output") or []
    if not output or output[-1].get("type") != "web_search_call":
        return []
    number = completed["sequence_number"]
    completed["sequence_number"] = number + 2
    item, index = output[-1], len(output) - 1
    started = {**item, "status": "in_progress"}
    out: list[tuple[str | None, str]] = []
    for k, (kind, shown) in enumerate(
        [("response.output_item.added", started), ("response.output_item.done", item)]
    ):
        event = {"type": kind, "sequence_number": number + k, "output_index": index, "item": shown}
        out.append((kind, json.dumps(event)))
    return out


def mishear(body: Any, fault: str | None) -> Any:
    """A request body as the planted ``fault`` reads it: content given as parts turned into the
    parts' JSON text (``parts_as_json``), tools without a ``tool_choice`` given ``"none"``
    (``omitted_choice_none``). Anything else passes as it came."""
    if not isinstance(body, dict) or fault not in ("parts_as_json", "omitted_choice_none"):
        return body
    body = dict(body)
    if fault == "omitted_choice_none":
        if body.get("tools") and "tool_choice" not in body:
            body["tool_choice"] = "none"
        return body
    entries = body.get("messages", body.get("input"))
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("content"), list):
            entry["content"] = json.dumps(entry["content"])
    return body


def chokes(body: Any, fault: str | None) -> bool:
    """Whether a request crashes a handler with the planted ``fault``: ``null_calls``, a chat
    template that loops over every assistant message's ``tool_calls`` without a guard, so
    ``tool_calls: null`` (what clients send after a turn with no calls) breaks it."""
    if fault != "null_calls" or not isinstance(body, dict):
        return False
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict)
        and m.get("role") == "assistant"
        and "tool_calls" in m
        and m["tool_calls"] is None
        for m in messages
    )
