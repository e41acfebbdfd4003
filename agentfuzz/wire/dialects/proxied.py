"""Middleman mode's bodies read back as cases, so that ``proxy_fidelity`` only compares.

In middleman mode the client's body goes to a proxy and the backend behind it receives bodies of
its own, chat or Responses (a proxy may translate one into the other). Both sides are read here
by the importer, the same way: Responses ``instructions`` become the leading system message a
translation to chat makes of them. The target does it live, the replay from a cassette, so a
replayed turn is judged exactly as the live one was.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agentfuzz.errors import InputError
from agentfuzz.model.history import Api, Case, SystemMessage
from agentfuzz.model.observation import BackendRequest, Observation
from agentfuzz.wire.dialects.importing import parse_request

__all__ = ["proxied", "read_body"]


def read_body(body: dict[str, Any], api: Api) -> Case | str:
    """``body`` as a case, Responses ``instructions`` as a leading system message; or the
    one-line reason the importer cannot read it."""
    try:
        case = parse_request(body, api)
    except InputError as exc:
        return str(exc)
    instructions = case.options.fields.get("instructions")
    if not isinstance(instructions, str):
        return case
    items = (SystemMessage(text=instructions), *case.history.items)
    return case.model_copy(update={"history": case.history.model_copy(update={"items": items})})


def _api(path: str) -> Api:
    return "responses" if path.rstrip("/").endswith("/responses") else "chat"


def proxied(obs: Observation, backend: tuple[BackendRequest, ...]) -> Observation:
    """``obs`` with what the backend received while it was in flight, each body read, and the
    client's own body read the same way (a raw, malformed body is not: it has no structure)."""
    request = obs.exchange.request
    sent = read_body(request, _api(obs.exchange.url)) if isinstance(request, dict) else None
    read = tuple(dataclasses.replace(b, read=read_body(b.body, _api(b.path))) for b in backend)
    return dataclasses.replace(obs, backend=read, sent=sent)
