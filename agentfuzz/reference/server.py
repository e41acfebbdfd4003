"""The starlette app, and serving it: in a background thread (tests) or blocking (the CLI)."""

from __future__ import annotations

import itertools
import json
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

import anyio
import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .behaviours import Behaviour, get_behaviour
from .chat_out import chat_body, chat_error_events, chat_events
from .faults import chokes, misanswer, misanswer_events, mishear, reframe
from .intake import Intake, parse_chat, parse_responses
from .load import Load, Timing
from .parsers import ParseFailure
from .pipeline import answer
from .readers import reader_named
from .refusal import BadRequest, refused_schema
from .responses_out import response_body, response_error_events, response_events

__all__ = ["create_app", "run", "serve_in_thread"]

_NO_PING = 24 * 3600


class _Server:
    """Per-app settings and the request counter that seeds the RNG at temperature > 0."""

    def __init__(
        self,
        profile: Behaviour,
        temperature: float,
        seed: int,
        timing: Timing,
        on_request: Callable[[str, bytes], None] | None = None,
        reader: str | None = None,
    ) -> None:
        self.profile = profile
        # The tool-call parser the server was started with (``--tool-call-parser``), if any.
        self.reader = reader
        self.on_request = on_request
        self.temperature = temperature
        self.seed = seed
        self.timing = timing
        self.counter = itertools.count()
        # The Responses answers given, by id (``crash_on_stored`` only).
        self.given: set[str] = set()
        # The stored Responses answers (``Behaviour.store``): by id, the input items a request
        # that names it goes on from.
        self.stored: dict[str, list[Any]] = {}
        self.model = "gpt-oss-reference" if profile.template == "harmony" else "kimi-k2-reference"

    async def models(self, request: Request) -> Response:
        entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "agentfuzz"}
        return JSONResponse({"object": "list", "data": [entry]})

    async def version(self, request: Request) -> Response:
        """What the server is, beside the API root as vLLM's ``/version`` is: a bundle of a
        finding against it names the profile."""
        try:
            release = metadata.version("agentfuzz")
        except metadata.PackageNotFoundError:
            release = "unknown"
        about = {"version": release, "server": "agentfuzz-reference", "profile": self.profile.name}
        return JSONResponse(about)

    async def _intake(
        self, request: Request, api: str, resolved: list[Any] | None = None
    ) -> Intake | Response:
        raw = await request.body()
        if self.on_request is not None:
            # Middleman mode: the client compares this with what it sent, so record it as it came.
            self.on_request(request.url.path, raw)
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if self.profile.crash_on_bad_json:
                return PlainTextResponse("Internal Server Error", status_code=500)
            deep = isinstance(exc, RecursionError)
            return _refusal(f"invalid JSON body: {'nested too deep' if deep else exc}")
        ignored = self.profile.ignored_fields
        if ignored and isinstance(body, dict):
            body = {k: v for k, v in body.items() if k not in ignored}
        body = mishear(body, self.profile.relation_fault)
        crash = self.profile.crash_on_field
        if self.profile.crash_on_parts and _has_parts(body):
            return PlainTextResponse("Internal Server Error", status_code=500)
        if chokes(body, self.profile.history_fault):
            return PlainTextResponse("Internal Server Error", status_code=500)
        if crash is not None and isinstance(body, dict) and crash in body:
            return PlainTextResponse("Internal Server Error", status_code=500)
        if self.profile.crash_on_stored and _names_given(body, self.given):
            return PlainTextResponse("Internal Server Error", status_code=500)
        long = self.profile.crash_on_long_session
        if long is not None and _own_calls(body) >= long:
            return PlainTextResponse("Internal Server Error", status_code=500)
        refused = refused_schema(body, self.profile.refuse_param_type)
        if refused is not None:
            return _refusal(refused)
        if api == "responses" and self.profile.store is not None and isinstance(body, dict):
            named = body.get("previous_response_id")
            if named is not None and (not isinstance(named, str) or named not in self.stored):
                return _refusal(f"previous response {named!r} not found")
            body = _resolved(body, self.stored.get(named) if named else None)
            if resolved is not None:
                resolved.append(body)
        try:
            return parse_chat(body) if api == "chat" else parse_responses(body)
        except BadRequest as exc:
            return _refusal(str(exc))

    def _store(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
        """Keep ``answer`` (a Responses body) for a later ``previous_response_id``."""
        if body.get("store") is False or not isinstance(body.get("input"), list):
            return
        kept = list(body["input"])
        if self.profile.store == "faithful":
            kept += answer.get("output") or []
        self.stored[str(answer["id"])] = kept

    async def chat(self, request: Request) -> Response:
        await self.timing.before()
        intake = await self._intake(request, "chat")
        if isinstance(intake, Response):
            return intake
        try:
            got = answer(self.profile, intake, **self._knobs())
        except BadRequest as exc:
            return _refusal(str(exc))
        except ParseFailure as failure:
            rng = _failure_rng(self.seed, str(failure))
            if intake.stream:
                return _sse(
                    (None, data) for data in chat_error_events(intake.model, str(failure), rng)
                )
            return PlainTextResponse("Internal Server Error", status_code=500)
        generating = self.timing.generating(got.raw)
        if not intake.stream:
            body = chat_body(
                self.profile, intake.model, got.prompt, got.parsed, got.rng, intake.knobs
            )
            await _wait(generating)
            return JSONResponse(misanswer(body, self.profile.answer_fault))
        usage_of = got.prompt if intake.knobs.include_usage else None
        events = chat_events(
            self.profile, intake.model, got.parsed, got.rng, usage_of, intake.knobs
        )
        if self.profile.frame_fault == "no_done":
            events = events[:-1]
        framed = misanswer_events([(None, d) for d in events], self.profile.answer_fault)
        return _sse(framed, generating)

    async def responses(self, request: Request) -> Response:
        await self.timing.before()
        resolved: list[Any] = []
        intake = await self._intake(request, "responses", resolved)
        if isinstance(intake, Response):
            return intake
        try:
            got = answer(self.profile, intake, **self._knobs())
        except BadRequest as exc:
            return _refusal(str(exc))
        except ParseFailure as failure:
            if intake.stream:
                rng = _failure_rng(self.seed, str(failure))
                return _sse(response_error_events(intake, str(failure), rng))
            return PlainTextResponse("Internal Server Error", status_code=500)
        generating = self.timing.generating(got.raw)
        if not intake.stream:
            body = response_body(self.profile, intake, got.prompt, got.parsed, got.rng)
            if self.profile.crash_on_stored:
                self.given.add(str(body["id"]))
            if resolved:
                self._store(resolved[0], body)
            await _wait(generating)
            return JSONResponse(misanswer(body, self.profile.answer_fault))
        events = response_events(self.profile, intake, got.prompt, got.parsed, got.rng)
        if self.profile.crash_on_stored:
            # The first event, response.created, names the answer.
            self.given.add(str(json.loads(events[0][1])["response"]["id"]))
        if resolved:
            completed = [json.loads(d) for e, d in events if e == "response.completed"]
            if completed:
                self._store(resolved[0], completed[0]["response"])
        framed = reframe(events, self.profile.frame_fault)
        return _sse(misanswer_events(framed, self.profile.answer_fault), generating)

    def _knobs(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "temperature": self.temperature,
            "counter": next(self.counter),
            "reader": self.reader,
        }


async def _wait(seconds: float) -> None:
    if seconds > 0:
        await anyio.sleep(seconds)


def _refusal(message: str) -> JSONResponse:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return JSONResponse({"error": error}, status_code=400)


def _names_given(body: Any, given: set[str]) -> bool:
    """Whether ``body``'s ``previous_response_id`` names one of the answers in ``given``."""
    named = body.get("previous_response_id") if isinstance(body, dict) else None
    return isinstance(named, str) and named in given


def _resolved(body: dict[str, Any], before: list[Any] | None) -> dict[str, Any]:
    """``body`` with its ``previous_response_id`` resolved: the stored items ``before`` its own
    input (a bare string is one user message), and the field gone. Only the conversation goes
    on: the stored request's instructions and tools are not carried over. A body whose input is
    neither is left for the intake to refuse."""
    given = body.get("input")
    if isinstance(given, str):
        given = [{"type": "message", "role": "user", "content": given}]
    if not isinstance(given, list):
        return body
    rest = {k: v for k, v in body.items() if k != "previous_response_id"}
    return rest | {"input": [*(before or []), *given]}


def _own_calls(body: Any) -> int:
    """How many calls a chat or Responses history holds when every one is under this server's
    own id, ``functions.NAME:N`` with N its place among them; 0 when any is not."""
    entries = body.get("messages", body.get("input")) if isinstance(body, dict) else None
    calls: list[tuple[Any, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "function_call":
            calls.append((entry.get("call_id"), entry.get("name")))
        for call in entry.get("tool_calls") or [] if entry.get("role") == "assistant" else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                calls.append((call.get("id"), function.get("name")))
    own = all(id_ == f"functions.{name}:{n}" for n, (id_, name) in enumerate(calls))
    return len(calls) if own else 0


def _has_parts(body: Any) -> bool:
    """Whether any message of a chat or Responses body has its content as a list of parts."""
    if not isinstance(body, dict):
        return False
    entries = body.get("messages", body.get("input"))
    if not isinstance(entries, list):
        return False
    return any(isinstance(e, dict) and isinstance(e.get("content"), list) for e in entries)


def _failure_rng(seed: int, text: str) -> random.Random:
    return random.Random(f"{seed}:failure:{text}")


def _sse(events: Any, generating: float = 0.0) -> EventSourceResponse:
    """Real SSE: ``event:`` lines only where the dialect uses them (Responses, not chat).
    ``generating`` seconds are spread over the events, as a model writes them."""
    frames = list(events)
    pace = generating / len(frames) if frames else 0.0

    async def stream() -> AsyncIterator[dict[str, str]]:
        for event, data in frames:
            await _wait(pace)
            yield {"data": data} if event is None else {"event": event, "data": data}

    return EventSourceResponse(stream(), ping=_NO_PING, sep="\n")


def create_app(
    profile: str,
    *,
    temperature: float = 0.0,
    seed: int = 0,
    latency_ms: float = 0,
    per_token_ms: float = 0,
    capacity: int | None = None,
    on_request: Callable[[str, bytes], None] | None = None,
    tool_parser: str | None = None,
) -> Load:
    """The reference server for one behaviour profile (``UnknownBehaviour`` for a bad name), as
    an ASGI app.

    ``latency_ms``, ``per_token_ms`` and ``capacity`` are a GPU server's timing (``load.Timing``);
    ``GET /load`` says how many requests it held in flight, and for how long.
    ``on_request(path, body)`` sees every chat and Responses request body as it arrives,
    before it is parsed (middleman mode records what a proxy forwarded).
    ``tool_parser``: the parser every answer is read with, by vLLM's ``--tool-call-parser``
    name (``UnknownReader`` for one this server cannot read); None keeps the profile's.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if capacity is not None and capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    timing = Timing(latency_ms, per_token_ms, capacity)
    behaviour = get_behaviour(profile)
    if tool_parser is not None:
        reader_named(tool_parser)
    server = _Server(behaviour, temperature, seed, timing, on_request, tool_parser)
    routes = [
        Route("/v1/models", server.models, methods=["GET"]),
        Route("/version", server.version, methods=["GET"]),
        Route("/v1/chat/completions", server.chat, methods=["POST"]),
        Route("/v1/responses", server.responses, methods=["POST"]),
    ]
    return Load(Starlette(routes=routes), capacity)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this: without it small answers wait on delayed ACKs (~40 ms).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


def _uvicorn(app: Any) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


@contextmanager
def serve_in_thread(
    profile: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    tool_parser: str | None = None,
    **kw: Any,
) -> Iterator[str]:
    """Serve in a background thread; yields the base URL ``http://HOST:PORT/v1``.

    ``port=0`` picks a free port. The server is stopped and the socket closed on exit.
    ``tool_parser``: as vLLM's ``--tool-call-parser`` (``create_app``).
    """
    app = create_app(profile, tool_parser=tool_parser, **kw)
    sock = _bind(host, port)
    server = _uvicorn(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("reference server failed to start")
            time.sleep(0.005)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def run(profile: str, host: str = "127.0.0.1", port: int = 0, **kw: Any) -> None:
    """Serve until interrupted, printing ``listening on http://HOST:PORT`` once bound."""
    app = create_app(profile, **kw)
    sock = _bind(host, port)
    try:
        shown = f"[{host}]" if ":" in host else host
        print(f"listening on http://{shown}:{sock.getsockname()[1]}", flush=True)
        _uvicorn(app).run(sockets=[sock])
    finally:
        sock.close()
