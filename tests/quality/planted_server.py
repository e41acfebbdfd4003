"""An OpenAI-compatible server with bugs planted on request, to test that agentfuzz finds them.

With no bugs it is a correct, deterministic scripted model: it answers a user message with one
tool call (to the tool the user names, else the first; a named ``tool_choice`` wins) whose
arguments satisfy the tool's schema, and anything else with the text ``"done."``. Each planted
bug fires only on a request feature the fuzzer's strategies must reach, and ``BUGS`` states
the smallest request (in wire items: ``len(messages)`` or ``len(input)``) that fires it.

This is test code on the server side: it must not import ``agentfuzz`` (a parsing bug shared
with the client would hide itself).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = [
    "BUGS",
    "KIMI_MARKUP",
    "ROBUSTNESS_BUGS",
    "PlantedBug",
    "build_app",
    "planted_server",
    "shows_effect",
]


@dataclass(frozen=True)
class PlantedBug:
    """A planted bug: the oracle that must catch it, a mode where it fires, its smallest trigger."""

    name: str
    oracle: str
    api: str
    stream: bool
    min_items: int
    trigger: str


BUGS: dict[str, PlantedBug] = {
    b.name: b
    for b in (
        PlantedBug("empty_on_foreign_id", "empty_turn", "chat", False, 3,
                   "a call id of exactly 9 alnum chars (Mistral): user, assistant(call), result"),
        PlantedBug("crash_on_parallel", "error", "chat", False, 4,
                   "an assistant with >=2 calls, all answered: user, asst(2 calls), 2 results"),
        PlantedBug("leak_without_tools", "leaked_markup", "chat", False, 3,
                   "tools omitted and a call in history: user, assistant(call), result"),
        PlantedBug("regen_ids", "identity", "responses", True, 4,
                   "a reasoning item right before a function_call: user, reasoning, call, result"),
        PlantedBug("gap_after_dropped", "index_gap", "chat", True, 3,
                   "a call with no result and the answer is a call: user, assistant(call), user"),
        PlantedBug("echo_bad_args", "bad_arguments", "chat", False, 4,
                   "an answered call with malformed args, ends on user: user, asst, result, user"),
        PlantedBug("truncate_dotted", "unknown_tool", "responses", False, 1,
                   "the answer calls a tool whose name holds '.': one user message"),
        PlantedBug("ignore_choice_none", "tool_choice", "chat", True, 1,
                   "tool_choice 'none' with tools: one user message"),
        PlantedBug("bad_finish", "wire_schema", "chat", False, 4,
                   "an orphan result right after a real one: user, assistant, result, orphan"),
    )
}  # fmt: skip

# These fire on every POST (never on GET /models, so a reachability probe still succeeds).
ROBUSTNESS_BUGS = ("html_body", "list_body", "truncated_stream", "reset")

KIMI_MARKUP = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>{}"
    "<|tool_call_end|><|tool_calls_section_end|>"
)
_CREATED = 1_700_000_000
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")


class _BadRequest(Exception):
    """A request the server refuses with a 4xx JSON error (a legitimate refusal, not a bug)."""


@dataclass
class _Call:
    id: str
    name: str
    arguments: Any
    namespace: str | None = None


@dataclass
class _Entry:
    """One history item, dialect-free: user, assistant (with calls), tool (a result), or other."""

    kind: str
    text: str = ""
    calls: list[_Call] = field(default_factory=list)
    call_id: str = ""
    after_reasoning: bool = False


@dataclass
class _ToolDecl:
    name: str
    flat: str
    namespace: str | None
    parameters: Any


@dataclass
class _Req:
    api: str
    stream: bool
    model: str
    entries: list[_Entry]
    tools: list[_ToolDecl]
    choice: str
    named: str | None
    body: dict[str, Any]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_str(p.get("text")) for p in content if isinstance(p, dict))
    return ""


def _choice(raw: Any) -> tuple[str, str | None]:
    if isinstance(raw, str) and raw in ("auto", "none", "required"):
        return raw, None
    if isinstance(raw, dict):
        fn = raw.get("function")
        name = fn.get("name") if isinstance(fn, dict) else raw.get("name")
        if isinstance(name, str):
            return "named", name
    if raw is None:
        return "auto", None
    raise _BadRequest(f"unsupported tool_choice: {raw!r}")


def _parse_chat(body: dict[str, Any]) -> tuple[list[_Entry], list[_ToolDecl]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _BadRequest("messages must be a list")
    entries: list[_Entry] = []
    for m in messages:
        if not isinstance(m, dict):
            raise _BadRequest("each message must be an object")
        role = m.get("role")
        if role == "user":
            entries.append(_Entry("user", _text(m.get("content"))))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict):
                    calls.append(
                        _Call(_str(tc.get("id")), _str(fn.get("name")), fn.get("arguments"))
                    )
            entries.append(_Entry("assistant", _text(m.get("content")), calls))
        elif role == "tool":
            entries.append(_Entry("tool", call_id=_str(m.get("tool_call_id"))))
        else:
            entries.append(_Entry("other"))
    tools = []
    for t in body.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(_ToolDecl(fn["name"], fn["name"], None, fn.get("parameters")))
    return entries, tools


def _parse_responses(body: dict[str, Any]) -> tuple[list[_Entry], list[_ToolDecl]]:
    raw = body.get("input")
    items = [{"type": "message", "role": "user", "content": raw}] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise _BadRequest("input must be a string or a list")
    entries: list[_Entry] = []
    previous = ""
    for it in items:
        if not isinstance(it, dict):
            raise _BadRequest("each input item must be an object")
        kind = it.get("type", "message" if "role" in it else "")
        if kind == "message":
            role = "user" if it.get("role") == "user" else "assistant"
            entries.append(_Entry(role, _text(it.get("content"))))
        elif kind == "function_call":
            call = _Call(_str(it.get("call_id")), _str(it.get("name")), it.get("arguments"))
            call.namespace = it.get("namespace") if isinstance(it.get("namespace"), str) else None
            # Consecutive function_call items are one assistant turn's parallel calls.
            if previous == "function_call":
                entries[-1].calls.append(call)
            else:
                entries.append(
                    _Entry("assistant", calls=[call], after_reasoning=previous == "reasoning")
                )
        elif kind == "function_call_output":
            entries.append(_Entry("tool", call_id=_str(it.get("call_id"))))
        else:
            entries.append(_Entry("reasoning" if kind == "reasoning" else "other"))
        previous = kind
    tools = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        if t.get("type") == "function":
            tools.append(_ToolDecl(t["name"], t["name"], None, t.get("parameters")))
        elif t.get("type") == "namespace":
            ns = t["name"]
            for inner in t.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    name = inner["name"]
                    tools.append(_ToolDecl(name, f"{ns}__{name}", ns, inner.get("parameters")))
    return entries, tools


def _parse(api: str, body: dict[str, Any]) -> _Req:
    entries, tools = (_parse_chat if api == "chat" else _parse_responses)(body)
    choice, named = _choice(body.get("tool_choice"))
    model = _str(body.get("model")) or "planted"
    return _Req(api, body.get("stream") is True, model, entries, tools, choice, named, body)


def _example(schema: Any) -> Any:
    """A value satisfying a (simple) JSON schema: required properties only, the first enum value."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _example(schema[key][0])
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = [k for k in schema.get("required") or [] if isinstance(k, str)]
        return {k: _example(props.get(k, {})) for k in required}
    if kind == "array":
        return [_example(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
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


def _well_formed(arguments: Any) -> bool:
    try:
        return isinstance(arguments, str) and isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def _turn_results(entries: list[_Entry], start: int) -> Counter[str]:
    """Result ids that follow the assistant entry at ``start``, up to the next non-result."""
    ids: Counter[str] = Counter()
    for e in entries[start + 1 :]:
        if e.kind != "tool":
            break
        ids[e.call_id] += 1
    return ids


class _Triggers:
    """Which bug triggers a parsed request holds; each is a structural fact about its history."""

    def __init__(self, req: _Req) -> None:
        entries = req.entries
        calls = [c for e in entries for c in e.calls]
        call_ids = {c.id for c in calls}
        results = Counter(e.call_id for e in entries if e.kind == "tool")
        groups = [(i, e) for i, e in enumerate(entries) if e.calls]
        self.last_is_user = bool(entries) and entries[-1].kind == "user"
        self.has_call = bool(calls)
        self.foreign_id = any(_MISTRAL_ID.fullmatch(c.id) for c in calls)
        self.answered_parallel = any(
            len(e.calls) >= 2 and Counter(c.id for c in e.calls) <= _turn_results(entries, i)
            for i, e in groups
        )
        self.reasoning_then_call = any(e.after_reasoning for _, e in groups)
        self.dropped = bool(Counter(c.id for c in calls) - results)
        self.answered_bad_args = any(
            not _well_formed(c.arguments) and c.id in _turn_results(entries, i)
            for i, e in groups
            for c in e.calls
        )
        self.orphan_after_result = any(
            e.kind == "tool"
            and e.call_id not in call_ids
            and entries[i - 1].kind == "tool"
            and entries[i - 1].call_id in call_ids
            for i, e in enumerate(entries)
            if i > 0
        )


@dataclass
class _Plan:
    """What the answer says: text, or one call; plus the finish reason / status it carries."""

    text: str | None = None
    call: _Call | None = None
    finish: str = "stop"
    status: str = "completed"


def _pick_tool(req: _Req) -> _ToolDecl:
    if req.choice == "named":
        for t in req.tools:
            if req.named in (t.flat, t.name):
                return t
        raise _BadRequest(f"tool_choice names an undeclared tool: {req.named!r}")
    users = [e.text for e in req.entries if e.kind == "user"]
    said = users[-1] if users else ""
    # The longest flat name the user said wins; a bare namespaced name only if none matched.
    named = [t for t in req.tools if t.flat in said] or [t for t in req.tools if t.name in said]
    return max(named, key=lambda t: len(t.flat)) if named else req.tools[0]


def _plan(req: _Req, trig: _Triggers, bugs: frozenset[str], ids: _Ids) -> _Plan:
    if "empty_on_foreign_id" in bugs and trig.foreign_id:
        return _Plan(text="")
    wants_call = bool(req.tools) and (
        req.choice in ("required", "named") or (req.choice == "auto" and trig.last_is_user)
    )
    if "ignore_choice_none" in bugs and req.tools and req.choice == "none":
        wants_call = True
    if wants_call:
        tool = _pick_tool(req)
        example = _example(tool.parameters)
        arguments = json.dumps(example if isinstance(example, dict) else {})
        if "echo_bad_args" in bugs and trig.answered_bad_args and trig.last_is_user:
            arguments = "{"
        name = tool.name if req.api == "responses" else tool.flat
        if "truncate_dotted" in bugs and "." in name:
            name = name.rsplit(".", 1)[1]
        namespace = tool.namespace if req.api == "responses" else None
        plan = _Plan(call=_Call(ids.mint("call_", "call", 24), name, arguments, namespace))
        plan.finish = "tool_calls"
    else:
        leak = "leak_without_tools" in bugs and not req.body.get("tools") and trig.has_call
        plan = _Plan(text=KIMI_MARKUP if leak else "done.")
    if "bad_finish" in bugs and trig.orphan_after_result:
        plan.finish, plan.status = "banana", "weird"
    return plan


class _Ids:
    """Deterministic ids: a hash of the request minus ``stream``; a repeat gets the same ids."""

    def __init__(self, body: dict[str, Any]) -> None:
        rest = {k: v for k, v in body.items() if k != "stream"}
        self.seed = json.dumps(rest, sort_keys=True, ensure_ascii=True, default=str)

    def mint(self, prefix: str, salt: str, size: int) -> str:
        return prefix + hashlib.sha256(f"{salt}|{self.seed}".encode()).hexdigest()[:size]


Event = tuple[str | None, str]


def _chat_body(req: _Req, plan: _Plan, ids: _Ids) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": plan.text}
    if plan.call:
        fn = {"name": plan.call.name, "arguments": plan.call.arguments}
        message["tool_calls"] = [{"id": plan.call.id, "type": "function", "function": fn}]
    return {
        "id": ids.mint("chatcmpl-", "chat", 24),
        "object": "chat.completion",
        "created": _CREATED,
        "model": req.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": plan.finish, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": len(req.entries),
            "completion_tokens": 1,
            "total_tokens": 1 + len(req.entries),
        },
    }


def _chat_events(req: _Req, plan: _Plan, ids: _Ids, call_index: int) -> list[Event]:
    head = {
        "id": ids.mint("chatcmpl-", "chat", 24),
        "object": "chat.completion.chunk",
        "created": _CREATED,
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
    return [*events, chunk({}, plan.finish), (None, "[DONE]")]


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
                    "description": _str(t.get("description")),
                    "tools": tools,
                }
            )
    return out


def _output_items(plan: _Plan, ids: _Ids, salt: str = "") -> list[dict[str, Any]]:
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


def _response(req: _Req, ids: _Ids, output: list[dict[str, Any]], status: str) -> dict[str, Any]:
    choice: Any = req.choice if req.choice != "named" else {"type": "function", "name": req.named}
    done = status != "in_progress"
    usage = {
        "input_tokens": len(req.entries),
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1 + len(req.entries),
    }
    temperature = req.body.get("temperature")
    max_tokens = req.body.get("max_output_tokens")
    return {
        "id": ids.mint("resp_", "resp", 32),
        "object": "response",
        "created_at": _CREATED,
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


def _response_events(req: _Req, plan: _Plan, ids: _Ids, regen: bool) -> list[Event]:
    events: list[Event] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, json.dumps({"type": kind, "sequence_number": len(events), **fields})))

    emit("response.created", response=_response(req, ids, [], "in_progress"))
    emit("response.in_progress", response=_response(req, ids, [], "in_progress"))
    items = _output_items(plan, ids)
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
    final = _output_items(plan, ids, "regen-") if regen else items
    emit("response.completed", response=_response(req, ids, final, plan.status))
    return events


def _error(status: int, message: str) -> JSONResponse:
    error = {"message": message, "type": "invalid_request_error", "code": status, "param": None}
    return JSONResponse({"error": error}, status_code=status)


def _error_frame(api: str, sequence: int) -> Event:
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


async def _sse(events: list[Event]) -> AsyncIterator[dict[str, str]]:
    for name, data in events:
        yield {"event": name, "data": data} if name else {"data": data}


async def _reset_after(chunks: list[str]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk.encode()
    # Raising after the headers went out makes uvicorn drop the connection mid-body.
    raise ConnectionResetError("planted reset")


def _frame(event: Event) -> str:
    name, data = event
    return (f"event: {name}\n" if name else "") + f"data: {data}\n\n"


_HTML = "<html><body><h1>500 Internal Server Error</h1></body></html>"


async def _answer(request: Request, api: str, bugs: frozenset[str]) -> Response:
    if "html_body" in bugs:
        return HTMLResponse("<html><body>Welcome to nginx!</body></html>")
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(400, "the body is not valid JSON")
    if not isinstance(body, dict):
        return _error(400, "the body must be a JSON object")
    try:
        req = _parse(api, body)
        trig = _Triggers(req)
        ids = _Ids(body)
        plan = _plan(req, trig, bugs, ids)
    except _BadRequest as exc:
        return _error(400, str(exc))
    crash = "crash_on_parallel" in bugs and trig.answered_parallel
    if not req.stream:
        if crash:
            return HTMLResponse(_HTML, status_code=500)
        payload: Any = (
            _chat_body(req, plan, ids)
            if api == "chat"
            else _response(req, ids, _output_items(plan, ids), plan.status)
        )
        text = json.dumps([] if "list_body" in bugs else payload)
        if "reset" in bugs:
            return StreamingResponse(
                _reset_after([text[: len(text) // 2]]), media_type="application/json"
            )
        if "truncated_stream" in bugs:
            text = text[: len(text) // 2]
        return Response(text, media_type="application/json")
    if api == "chat":
        gap = "gap_after_dropped" in bugs and trig.dropped and trig.last_is_user
        events = _chat_events(req, plan, ids, 1 if gap else 0)
    else:
        events = _response_events(req, plan, ids, "regen_ids" in bugs and trig.reasoning_then_call)
    if crash:
        events = [*events[:1], _error_frame(api, 1)]
    if "list_body" in bugs:
        events = [(None, "[]"), (None, "[DONE]")] if api == "chat" else [(None, "[]")]
    if "truncated_stream" in bugs:
        events = events[:2]
    if "reset" in bugs:
        frames = [_frame(e) for e in events[:2]]
        return StreamingResponse(_reset_after(frames), media_type="text/event-stream")
    return EventSourceResponse(_sse(events), sep="\n")


def build_app(bugs: Iterable[str] = ()) -> Starlette:
    """The ASGI app with the given bugs planted (none: a correct server)."""
    chosen = frozenset(bugs)
    unknown = chosen - set(BUGS) - set(ROBUSTNESS_BUGS)
    if unknown:
        raise ValueError(f"unknown planted bugs: {sorted(unknown)}")

    async def models(request: Request) -> Response:
        model = {"id": "planted", "object": "model", "created": _CREATED, "owned_by": "planted"}
        return JSONResponse({"object": "list", "data": [model]})

    async def chat(request: Request) -> Response:
        return await _answer(request, "chat", chosen)

    async def responses(request: Request) -> Response:
        return await _answer(request, "responses", chosen)

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
        ]
    )


@contextmanager
def planted_server(bugs: Iterable[str] = ()) -> Iterator[str]:
    """Serve ``build_app(bugs)`` on a free loopback port in a thread; yield its ``/v1`` base URL."""
    app = build_app(bugs)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this; without it every answer waits ~40 ms for a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_config=None, log_level="critical", access_log=False, lifespan="off",
        timeout_graceful_shutdown=1,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the planted server did not start")
            time.sleep(0.01)
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _payloads(content_type: str, text: str) -> list[Any]:
    """The JSON payloads of an answer: the body, or each SSE ``data:`` line but ``[DONE]``."""
    if not content_type.startswith("text/event-stream"):
        return [json.loads(text)]
    lines = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
    return [json.loads(ln) for ln in lines if ln != "[DONE]"]


def _declared(request: dict[str, Any]) -> set[str]:
    api = "chat" if "messages" in request else "responses"
    tools = (_parse_chat if api == "chat" else _parse_responses)(request)[1]
    return {t.flat if api == "chat" else t.name for t in tools}


def shows_effect(
    bug: str, request: dict[str, Any], status: int, content_type: str, text: str
) -> bool:
    """Whether a raw answer, in the bug's own mode (``BUGS[bug]``), shows that bug's effect."""
    if bug == "crash_on_parallel":
        return status == 500 and content_type.startswith("text/html")
    if status != 200:
        return False
    payloads = _payloads(content_type, text)
    first = payloads[0]
    if bug in ("empty_on_foreign_id", "leak_without_tools", "echo_bad_args", "bad_finish"):
        choice = first["choices"][0]
        message, calls = choice["message"], choice["message"].get("tool_calls") or []
        effects = {
            "empty_on_foreign_id": not message["content"] and not calls,
            "leak_without_tools": "<|tool_calls_section_begin|>" in (message["content"] or ""),
            "echo_bad_args": bool(calls) and calls[0]["function"]["arguments"] == "{",
            "bad_finish": choice["finish_reason"] == "banana",
        }
        return bool(effects[bug])
    if bug in ("gap_after_dropped", "ignore_choice_none"):
        deltas = [d for p in payloads for d in p["choices"][0]["delta"].get("tool_calls") or []]
        if bug == "ignore_choice_none":
            return bool(deltas)
        return [d["index"] for d in deltas if d.get("id")] == [1]
    if bug == "truncate_dotted":
        names = {o["name"] for o in first["output"] if o["type"] == "function_call"}
        return bool(names - _declared(request))
    if bug == "regen_ids":
        streamed = {p["item"]["id"] for p in payloads if p["type"] == "response.output_item.done"}
        final = [p["response"]["output"] for p in payloads if p["type"] == "response.completed"]
        return bool(final) and {o["id"] for o in final[0]} != streamed
    raise ValueError(f"no effect check for {bug!r}")
