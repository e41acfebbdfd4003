"""A pass-through proxy with one fault planted on request, to test middleman mode against.

It forwards ``/v1/chat/completions``, ``/v1/responses`` and ``/v1/models`` to a backend, the
answer's bytes passed through as they come (streaming or not). ``faithful`` forwards the
request bytes too; every other fault rewrites the JSON body on its way to the backend:

- ``rewrite_ids``: every call id (calls and results alike) becomes ``call_<n>``;
- ``collapse_ids``: every non-empty call id, and every result answering one, becomes the
  first such id the request holds (orphan results keep theirs);
- ``drop_result``: the first tool result is left out;
- ``rename_tool``: the tool ``tool_choice`` names (else the first) gets ``_v2`` appended,
  ``tool_choice`` left as it was;
- ``inject_cached_call``: the first tool call the proxy ever forwarded is put into every later
  request that does not hold it, before the last item.

Test code standing in for a third-party proxy: it does not import ``agentfuzz``.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

FAULTS = (
    "faithful",
    "rewrite_ids",
    "collapse_ids",
    "drop_result",
    "rename_tool",
    "inject_cached_call",
)

Body = dict[str, Any]


def _items(body: Body) -> list[Any]:
    items = body.get("messages", body.get("input"))
    return items if isinstance(items, list) else []


def _id_slots(body: Body) -> Iterator[tuple[dict[str, Any], str]]:
    """Every (object, key) holding a call id, in order: chat calls and results, Responses
    function_call and function_call_output items."""
    for item in _items(body):
        if not isinstance(item, dict):
            continue
        for call in item.get("tool_calls") or []:
            if isinstance(call, dict) and "id" in call:
                yield call, "id"
        if item.get("role") == "tool" and "tool_call_id" in item:
            yield item, "tool_call_id"
        if item.get("type") in ("function_call", "function_call_output") and "call_id" in item:
            yield item, "call_id"


def _rewrite_ids(body: Body, state: dict[str, Any]) -> None:
    renumbered: dict[str, str] = {}
    for holder, key in _id_slots(body):
        old = holder[key]
        holder[key] = renumbered.setdefault(old, f"call_{len(renumbered)}")


def _collapse_ids(body: Body, state: dict[str, Any]) -> None:
    calls = {call_id for call_id, _ in _calls(body) if call_id}
    slots = [(holder, key) for holder, key in _id_slots(body) if holder[key] in calls]
    for holder, key in slots:
        holder[key] = slots[0][0][slots[0][1]]


def _drop_result(body: Body, state: dict[str, Any]) -> None:
    items = _items(body)
    for i, item in enumerate(items):
        if isinstance(item, dict) and (
            item.get("role") == "tool" or item.get("type") == "function_call_output"
        ):
            del items[i]
            return


def _tool_name(tool: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    if tool.get("type", "function") != "function":
        return None
    holder = tool.get("function", tool)
    name = holder.get("name") if isinstance(holder, dict) else None
    return (holder, name) if isinstance(name, str) else None


def _rename_tool(body: Body, state: dict[str, Any]) -> None:
    choice = body.get("tool_choice")
    chosen = None
    if isinstance(choice, dict):
        chosen = choice.get("name") or (choice.get("function") or {}).get("name")
    named = [n for t in body.get("tools") or [] if isinstance(t, dict) and (n := _tool_name(t))]
    target = next((n for n in named if n[1] == chosen), named[0] if named else None)
    if target is not None:
        holder, name = target
        holder["name"] = f"{name}_v2"


def _calls(body: Body) -> Iterator[tuple[str, Any]]:
    """(call id, the call as an item to insert) for each call the request holds."""
    for item in _items(body):
        if not isinstance(item, dict):
            continue
        for call in item.get("tool_calls") or []:
            if isinstance(call, dict):
                yield call.get("id"), {"role": "assistant", "content": None, "tool_calls": [call]}
        if item.get("type") == "function_call":
            yield item.get("call_id"), item


def _inject_cached_call(body: Body, state: dict[str, Any]) -> None:
    api = "chat" if "messages" in body else "responses"
    cached = state.get(api)
    held = {call_id for call_id, _ in _calls(body)}
    if cached is None:
        state[api] = next(iter(copy.deepcopy(list(_calls(body)))), None)
        return
    call_id, item = cached
    items = _items(body)
    if call_id not in held and items:
        items.insert(len(items) - 1, copy.deepcopy(item))


_FAULTS: dict[str, Callable[[Body, dict[str, Any]], None]] = {
    "rewrite_ids": _rewrite_ids,
    "collapse_ids": _collapse_ids,
    "drop_result": _drop_result,
    "rename_tool": _rename_tool,
    "inject_cached_call": _inject_cached_call,
}


def build_app(backend: str, fault: str) -> Starlette:
    """The proxy in front of ``backend`` (a base URL ending in ``/v1``) with ``fault``."""
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}")
    state: dict[str, Any] = {}
    # One client for the server's life, made and closed in its event loop (a client per request
    # would build a TLS context each time: tens of ms). No keep-alive: reusing a connection
    # the backend is closing as idle fails a request now and then.
    clients: list[httpx.AsyncClient] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx.Limits(max_keepalive_connections=0)
        # Headers and body go out in two writes: without it the second waits on an ACK.
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        transport = httpx.AsyncHTTPTransport(socket_options=nodelay)
        clients.append(httpx.AsyncClient(timeout=30, limits=limits, transport=transport))
        try:
            yield
        finally:
            await clients.pop().aclose()

    async def forward(request: Request) -> Response:
        raw = await request.body()
        if fault != "faithful" and raw:
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):  # a body broken on purpose goes on as it is
                body = None
            if isinstance(body, dict):
                _FAULTS[fault](body, state)
                raw = json.dumps(body).encode()
        path = request.url.path.removeprefix("/v1")
        client = clients[0]
        outgoing = client.build_request(
            request.method,
            backend + path,
            content=raw,
            headers={"content-type": request.headers.get("content-type", "application/json")},
        )
        answer = await client.send(outgoing, stream=True)

        headers = {"content-type": answer.headers.get("content-type", "application/json")}
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers=headers,
            background=BackgroundTask(answer.aclose),
        )

    routes = [
        Route("/v1/models", forward, methods=["GET"]),
        Route("/v1/chat/completions", forward, methods=["POST"]),
        Route("/v1/responses", forward, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def free_port() -> int:
    """A loopback port nothing listens on now (the backend takes it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def planted_proxy(backend_port: int, fault: str) -> Iterator[str]:
    """Serve the proxy on a free loopback port in a thread; yields its base URL (``…/v1``)."""
    app = build_app(f"http://127.0.0.1:{backend_port}/v1", fault)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Without it small answers wait on delayed ACKs (~40 ms each).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(
        app, log_config=None, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("planted proxy failed to start")
            time.sleep(0.005)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
