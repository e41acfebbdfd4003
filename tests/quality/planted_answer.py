"""Answers of the planted server: chat and Responses bodies and SSE events built from a plan.

Server-side test code: it must not import ``agentfuzz``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from .planted_request import Call, ParsedRequest, prompt_tokens, str_or_empty

__all__ = [
    "CREATED",
    "Event",
    "Ids",
    "Plan",
    "chat_body",
    "chat_events",
    "error_frame",
    "output_items",
    "response_body",
    "response_events",
    "schema_example",
]

CREATED = 1_700_000_000


def schema_example(schema: Any, root: Any = None) -> Any:
    """A value satisfying a (simple) JSON schema: required properties only, the first enum value,
    local ``#/$defs/…`` references followed."""
    if not isinstance(schema, dict):
        return {}
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(root, dict):
        return schema_example((root.get("$defs") or {}).get(ref[len("#/$defs/") :], {}), root)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema_example(schema[key][0], root)
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = [k for k in schema.get("required") or [] if isinstance(k, str)]
        return {k: schema_example(props.get(k, {}), root) for k in required}
    if kind == "array":
        return [
            schema_example(schema.get("items", {}), root)
            for _ in range(int(schema.get("minItems", 0)))
        ]
    if kind == "string":
        size = max(int(schema.get("minLength", 1)), 1)
        return "x" * min(size, int(schema.get("maxLength", size)))
    if kind in ("integer", "number"):
        low, high = _bounds(schema)
        return min(max(0, low), high)
    return {"boolean": False, "null": None}.get(kind, {}) if isinstance(kind, str) else {}


def _bounds(schema: dict[str, Any]) -> tuple[float, float]:
    """Integer bounds from minimum/maximum and their exclusive forms."""
    low, high = -math.inf, math.inf
    if isinstance(schema.get("minimum"), int | float):
        low = math.ceil(schema["minimum"])
    elif isinstance(schema.get("exclusiveMinimum"), int | float):
        low = math.floor(schema["exclusiveMinimum"]) + 1
    if isinstance(schema.get("maximum"), int | float):
        high = math.floor(schema["maximum"])
    elif isinstance(schema.get("exclusiveMaximum"), int | float):
        high = math.ceil(schema["exclusiveMaximum"]) - 1
    return low, high


@dataclass
class Plan:
    """What the answer says: text, or one call; plus the finish reason / status it carries."""

    text: str | None = None
    call: Call | None = None
    finish: str = "stop"
    status: str = "completed"


class Ids:
    """Deterministic ids: a hash of the request minus ``stream``; a repeat gets the same ids."""

    def __init__(self, body: dict[str, Any]) -> None:
        rest = {k: v for k, v in body.items() if k != "stream"}
        self.seed = json.dumps(rest, sort_keys=True, ensure_ascii=True, default=str)

    def mint(self, prefix: str, salt: str, size: int) -> str:
        return prefix + hashlib.sha256(f"{salt}|{self.seed}".encode()).hexdigest()[:size]


Event = tuple[str | None, str]


def chat_body(req: ParsedRequest, plan: Plan, ids: Ids) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": plan.text}
    if plan.call:
        fn = {"name": plan.call.name, "arguments": plan.call.arguments}
        message["tool_calls"] = [{"id": plan.call.id, "type": "function", "function": fn}]
    return {
        "id": ids.mint("chatcmpl-", "chat", 24),
        "object": "chat.completion",
        "created": CREATED,
        "model": req.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": plan.finish, "logprobs": None}
        ],
        "usage": _chat_usage(req),
    }


def _chat_usage(req: ParsedRequest) -> dict[str, int]:
    prompt = prompt_tokens(req.body)
    return {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": 1 + prompt}


def chat_events(req: ParsedRequest, plan: Plan, ids: Ids, call_index: int) -> list[Event]:
    head = {
        "id": ids.mint("chatcmpl-", "chat", 24),
        "object": "chat.completion.chunk",
        "created": CREATED,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return None, json.dumps({**head, "model": req.model, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    if plan.text:
        events.append(chunk({"content": plan.text}))
    if plan.call:
        first = {"index": call_index, "id": plan.call.id, "type": "function"}
        first["function"] = {"name": plan.call.name, "arguments": ""}
        events.append(chunk({"tool_calls": [first]}))
        rest = {"index": call_index, "function": {"arguments": plan.call.arguments}}
        events.append(chunk({"tool_calls": [rest]}))
    events.append(chunk({}, plan.finish))
    options = req.body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        usage = _chat_usage(req)
        events.append(
            (None, json.dumps({**head, "model": req.model, "choices": [], "usage": usage}))
        )
    return [*events, (None, "[DONE]")]


def _echo_function(t: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "name": t["name"],
        "description": t.get("description") if isinstance(t.get("description"), str) else None,
        "parameters": t.get("parameters") if isinstance(t.get("parameters"), dict) else None,
        "strict": t.get("strict") if isinstance(t.get("strict"), bool) else False,
    }


def _echo_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's tools in the shape ``Response.tools`` has (a namespace needs a description)."""
    named = [
        t for t in body.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("name"), str)
    ]
    out = [_echo_function(t) for t in named if t.get("type") == "function"]
    for t in named:
        if t.get("type") == "namespace":
            inner = [
                i
                for i in t.get("tools") or []
                if isinstance(i, dict) and isinstance(i.get("name"), str)
            ]
            tools = [_echo_function(i) for i in inner]
            out.append(
                {
                    "type": "namespace",
                    "name": t["name"],
                    "description": str_or_empty(t.get("description")),
                    "tools": tools,
                }
            )
    return out


def output_items(plan: Plan, ids: Ids, salt: str = "") -> list[dict[str, Any]]:
    if plan.call:
        call_id = plan.call.id if not salt else ids.mint("chatcmpl-tool-", salt + "call", 32)
        item = {"type": "function_call", "id": ids.mint("fc_", salt + "fc", 32), "call_id": call_id}
        item.update(name=plan.call.name, arguments=plan.call.arguments, status="completed")
        if plan.call.namespace:
            item["namespace"] = plan.call.namespace
        return [item]
    part = {"type": "output_text", "text": plan.text or "", "annotations": [], "logprobs": []}
    msg_id = ids.mint("msg_", salt + "msg", 32)
    return [
        {
            "type": "message",
            "id": msg_id,
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
    ]


def response_body(
    req: ParsedRequest, ids: Ids, output: list[dict[str, Any]], status: str
) -> dict[str, Any]:
    choice: Any = req.choice if req.choice != "named" else {"type": "function", "name": req.named}
    done = status != "in_progress"
    prompt = prompt_tokens(req.body)
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1 + prompt,
    }
    temperature = req.body.get("temperature")
    max_tokens = req.body.get("max_output_tokens")
    return {
        "id": ids.mint("resp_", "resp", 32),
        "object": "response",
        "created_at": CREATED,
        "model": req.model,
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": choice if req.tools else "auto",
        "tools": _echo_tools(req.body),
        "temperature": temperature if isinstance(temperature, int | float) else None,
        "max_output_tokens": max_tokens if isinstance(max_tokens, int) else None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": usage if done else None,
    }


def response_events(req: ParsedRequest, plan: Plan, ids: Ids, regen: bool) -> list[Event]:
    events: list[Event] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, json.dumps({"type": kind, "sequence_number": len(events), **fields})))

    emit("response.created", response=response_body(req, ids, [], "in_progress"))
    emit("response.in_progress", response=response_body(req, ids, [], "in_progress"))
    items = output_items(plan, ids)
    for index, item in enumerate(items):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", **at, content_index=0, part=part)
            if text:
                emit("response.output_text.delta", **at, content_index=0, delta=text, logprobs=[])
            emit("response.output_text.done", **at, content_index=0, text=text, logprobs=[])
            emit("response.content_part.done", **at, content_index=0, part={**part, "text": text})
        else:
            args = item["arguments"]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            if args:
                emit("response.function_call_arguments.delta", **at, delta=args)
            emit("response.function_call_arguments.done", **at, arguments=args, name=item["name"])
        emit("response.output_item.done", output_index=index, item=item)
    final = output_items(plan, ids, "regen-") if regen else items
    emit("response.completed", response=response_body(req, ids, final, plan.status))
    return events


def error_frame(api: str, sequence: int) -> Event:
    if api == "responses":
        frame = {
            "type": "error",
            "code": "server_error",
            "message": "tool parser failed",
            "param": None,
        }
        return "error", json.dumps({**frame, "sequence_number": sequence})
    return "error", json.dumps(
        {"error": {"message": "tool parser failed", "type": "server_error", "code": 500}}
    )
