"""An OpenAI-compatible server with bugs planted on request, to test that agentfuzz finds them.

With no bugs it is a correct, deterministic scripted model: it answers a user message with one
tool call (to the tool the user names, else the first; a named ``tool_choice`` wins) whose
arguments satisfy the tool's schema, and anything else with the text ``"done."`` (JSON when a
JSON format is asked, cut at a stop string). It refuses ``n`` other than 1 and ``logprobs``
with a 400 and sends the usage chunk a stream asks for, so the knob oracle holds nothing
against it. Each planted
bug fires only on a request feature the fuzzer's strategies must reach, and ``BUGS`` states
the smallest request (in wire items: ``len(messages)`` or ``len(input)``) that fires it.
``SESSION_BUGS`` (``planted_ids``) fire only on the server's own output fed back to it;
``STOCHASTIC_BUGS`` (``planted_flaky``) fire on their trigger only some of the time, drawn
from a generator seeded once per app (``build_app(bugs, seed=...)``).

This is test code on the server side: it must not import ``agentfuzz`` (a parsing bug shared
with the client would hide itself).

This module holds the bug table, the triggers and the plan, the app and ``planted_server()``;
``planted_request`` parses a request, ``planted_answer`` builds the answer bodies and events.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .planted_answer import (
    CREATED,
    Event,
    Ids,
    Plan,
    chat_body,
    chat_events,
    error_frame,
    output_items,
    response_body,
    response_events,
    schema_example,
)
from .planted_flaky import FLAKY_RATE, STOCHASTIC_BUGS, Coin, answered_call
from .planted_ids import SESSION_BUGS, call_id_shape, own_id_refusal
from .planted_request import (
    BadRequest,
    Call,
    Entry,
    ParsedRequest,
    ToolDecl,
    parse,
    parse_chat,
    parse_responses,
)

__all__ = [
    "BUGS",
    "KIMI_MARKUP",
    "ROBUSTNESS_BUGS",
    "SESSION_BUGS",
    "STOCHASTIC_BUGS",
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
        PlantedBug("finish_without_calls", "consistency", "chat", False, 3,
                   "text after an answered call, finish tool_calls: user, asst(call), result"),
        PlantedBug("usage_miscount", "consistency", "responses", False, 3,
                   "total_tokens one short once a call was answered: user, call, result"),
    )
}  # fmt: skip

# These fire on every POST (never on GET /models, so a reachability probe still succeeds).
ROBUSTNESS_BUGS = ("html_body", "list_body", "truncated_stream", "reset")

KIMI_MARKUP = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>{}"
    "<|tool_call_end|><|tool_calls_section_end|>"
)
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")


def _well_formed(arguments: Any) -> bool:
    try:
        return isinstance(arguments, str) and isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def _turn_results(entries: list[Entry], start: int) -> Counter[str]:
    """Result ids that follow the assistant entry at ``start``, up to the next non-result."""
    ids: Counter[str] = Counter()
    for e in entries[start + 1 :]:
        if e.kind != "tool":
            break
        ids[e.call_id] += 1
    return ids


class _Triggers:
    """Which bug triggers a parsed request holds; each is a structural fact about its history."""

    def __init__(self, req: ParsedRequest) -> None:
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
        self.answered = answered_call(req)


def _pick_tool(req: ParsedRequest) -> ToolDecl:
    if req.choice == "named":
        for t in req.tools:
            if req.named in (t.flat, t.name):
                return t
        raise BadRequest(f"tool_choice names an undeclared tool: {req.named!r}")
    users = [e.text for e in req.entries if e.kind == "user"]
    said = users[-1] if users else ""
    # The longest flat name the user said wins; a bare namespaced name only if none matched.
    named = [t for t in req.tools if t.flat in said] or [t for t in req.tools if t.name in said]
    return max(named, key=lambda t: len(t.flat)) if named else req.tools[0]


def _plan(
    req: ParsedRequest,
    trig: _Triggers,
    bugs: frozenset[str],
    ids: Ids,
    flip: Callable[[], bool] = lambda: False,
) -> Plan:
    if "empty_on_foreign_id" in bugs and trig.foreign_id:
        return Plan(text="")
    # The coin is flipped only on a triggering request, so the draws a seed gives depend on
    # the triggering requests alone.
    if "flaky_empty" in bugs and trig.answered and flip():
        return Plan(text="")
    wants_call = bool(req.tools) and (
        req.choice in ("required", "named") or (req.choice == "auto" and trig.last_is_user)
    )
    if "ignore_choice_none" in bugs and req.tools and req.choice == "none":
        wants_call = True
    if wants_call:
        tool = _pick_tool(req)
        example = schema_example(tool.parameters)
        arguments = json.dumps(example if isinstance(example, dict) else {})
        if "echo_bad_args" in bugs and trig.answered_bad_args and trig.last_is_user:
            arguments = "{"
        name = tool.name if req.api == "responses" else tool.flat
        if "truncate_dotted" in bugs and "." in name:
            name = name.rsplit(".", 1)[1]
        namespace = tool.namespace if req.api == "responses" else None
        prefix, size = call_id_shape(bugs)
        plan = Plan(call=Call(ids.mint(prefix, "call", size), name, arguments, namespace))
        plan.finish = "tool_calls"
    else:
        leak = "leak_without_tools" in bugs and not req.body.get("tools") and trig.has_call
        schema = _json_format(req)
        plain = "done." if schema is None else json.dumps(schema_example(schema))
        plan = Plan(text=KIMI_MARKUP if leak else plain)
    if "bad_finish" in bugs and trig.orphan_after_result:
        plan.finish, plan.status = "banana", "weird"
    if "finish_without_calls" in bugs and trig.answered and plan.call is None:
        plan.finish = "tool_calls"
    return plan


def _refused_knob(req: ParsedRequest) -> str | None:
    """Why the request asks for what this scripted model cannot give (more than one choice,
    log-probabilities); a correct server refuses those with a 400 rather than ignoring them."""
    n = req.body.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n != 1:
        return "only n=1 is supported"
    if req.body.get("logprobs") is True:
        return "logprobs are not supported"
    return None


def _json_format(req: ParsedRequest) -> dict[str, Any] | None:
    """The schema of the JSON the request asked the text in (``{}`` for ``json_object`` or a
    schema-less ``json_schema``), or None for plain text."""
    if req.api == "chat":
        fmt = req.body.get("response_format")
        spec = fmt.get("json_schema") if isinstance(fmt, dict) else None
    else:
        text = req.body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        spec = fmt
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_object", "json_schema"):
        return None
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else {}


def _cut_at_stop(req: ParsedRequest, plan: Plan) -> None:
    """Cut the plan's text at its first stop string (the turn then ends with ``stop``)."""
    if plan.text is None or plan.call is not None:
        return
    stop = req.body.get("stop") if req.api == "chat" else None
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cuts = [plan.text.find(s) for s in stops if isinstance(s, str) and s and s in plan.text]
    if cuts:
        plan.text, plan.finish = plan.text[: min(cuts)], "stop"


def _error(status: int, message: str) -> JSONResponse:
    error = {"message": message, "type": "invalid_request_error", "code": status, "param": None}
    return JSONResponse({"error": error}, status_code=status)


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


async def _answer(
    request: Request, api: str, bugs: frozenset[str], flip: Callable[[], bool]
) -> Response:
    if "html_body" in bugs:
        return HTMLResponse("<html><body>Welcome to nginx!</body></html>")
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        # Nesting deeper than the parser takes is bad input too (agentfuzz's malformed bodies
        # found this server answering it with a 500).
        return _error(400, "the body is not valid JSON")
    if not isinstance(body, dict):
        return _error(400, "the body must be a JSON object")
    try:
        req = parse(api, body)
        refusal = own_id_refusal(req, bugs) or _refused_knob(req)
        if refusal is not None:
            return _error(400, refusal)
        trig = _Triggers(req)
        ids = Ids(body)
        plan = _plan(req, trig, bugs, ids, flip)
        _cut_at_stop(req, plan)
    except BadRequest as exc:
        return _error(400, str(exc))
    crash = "crash_on_parallel" in bugs and trig.answered_parallel
    if not req.stream:
        if crash:
            return HTMLResponse(_HTML, status_code=500)
        payload: Any = (
            chat_body(req, plan, ids)
            if api == "chat"
            else response_body(req, ids, output_items(plan, ids), plan.status)
        )
        if "usage_miscount" in bugs and trig.answered:
            payload["usage"]["total_tokens"] -= 1
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
        events = chat_events(req, plan, ids, 1 if gap else 0)
    else:
        events = response_events(req, plan, ids, "regen_ids" in bugs and trig.reasoning_then_call)
    if crash:
        events = [*events[:1], error_frame(api, 1)]
    if "list_body" in bugs:
        events = [(None, "[]"), (None, "[DONE]")] if api == "chat" else [(None, "[]")]
    if "truncated_stream" in bugs:
        events = events[:2]
    if "reset" in bugs:
        frames = [_frame(e) for e in events[:2]]
        return StreamingResponse(_reset_after(frames), media_type="text/event-stream")
    return EventSourceResponse(_sse(events), sep="\n")


def build_app(bugs: Iterable[str] = (), seed: int = 0) -> Starlette:
    """The ASGI app with the given bugs planted (none: a correct server); ``seed`` seeds the
    coin of the stochastic bugs, once for the app's lifetime."""
    chosen = frozenset(bugs)
    known = set(BUGS) | set(ROBUSTNESS_BUGS) | set(SESSION_BUGS) | set(STOCHASTIC_BUGS)
    unknown = chosen - known
    if unknown:
        raise ValueError(f"unknown planted bugs: {sorted(unknown)}")
    coin = Coin(FLAKY_RATE, seed)

    async def models(request: Request) -> Response:
        model = {"id": "planted", "object": "model", "created": CREATED, "owned_by": "planted"}
        return JSONResponse({"object": "list", "data": [model]})

    async def chat(request: Request) -> Response:
        return await _answer(request, "chat", chosen, coin.flip)

    async def responses(request: Request) -> Response:
        return await _answer(request, "responses", chosen, coin.flip)

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
        ]
    )


@contextmanager
def planted_server(bugs: Iterable[str] = (), seed: int = 0) -> Iterator[str]:
    """Serve ``build_app(bugs, seed)`` on a free loopback port in a thread; yield its ``/v1``
    base URL."""
    app = build_app(bugs, seed)
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
    tools = (parse_chat if api == "chat" else parse_responses)(request)[1]
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
    if bug == "usage_miscount":
        usage = first["usage"]
        return bool(usage["total_tokens"] != usage["input_tokens"] + usage["output_tokens"])
    if bug in (
        "empty_on_foreign_id",
        "leak_without_tools",
        "echo_bad_args",
        "bad_finish",
        "finish_without_calls",
    ):
        choice = first["choices"][0]
        message, calls = choice["message"], choice["message"].get("tool_calls") or []
        effects = {
            "empty_on_foreign_id": not message["content"] and not calls,
            "leak_without_tools": "<|tool_calls_section_begin|>" in (message["content"] or ""),
            "echo_bad_args": bool(calls) and calls[0]["function"]["arguments"] == "{",
            "bad_finish": choice["finish_reason"] == "banana",
            "finish_without_calls": choice["finish_reason"] == "tool_calls" and not calls,
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
