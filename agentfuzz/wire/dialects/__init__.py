"""Wire dialects: a ``Case`` as an exact request body, an ``Exchange`` as an ``Observation``.

``chat`` speaks ``/v1/chat/completions``, ``responses`` speaks ``/v1/responses``. Paths are
relative to the base URL, which (as in the openai SDK) already ends in ``/v1``. ``importing``
goes the other way: a captured body (or session) back to a ``Case``; ``proxied`` reads proxy
mode's bodies (the client's, the backend's) that way for the proxy oracle.
"""

from __future__ import annotations

from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.wire.dialects import chat, responses
from agentfuzz.wire.dialects._malformed import malform
from agentfuzz.wire.dialects.importing import (
    InputError,
    parse_input,
    parse_jsonl,
    parse_request,
    parse_text,
)
from agentfuzz.wire.dialects.proxied import proxied

__all__ = [
    "InputError",
    "assemble",
    "build_request",
    "parse_input",
    "parse_jsonl",
    "parse_request",
    "parse_text",
    "proxied",
    "wire_body",
]


def build_request(case: Case, model: str) -> tuple[str, dict[str, Any]]:
    """The endpoint path and exact JSON body for ``case`` in its api's dialect."""
    if case.api == "responses":
        return responses.PATH, responses.build_responses(case, model)
    return chat.PATH, chat.build_chat(case, model)


def wire_body(case: Case, model: str) -> tuple[str, dict[str, Any] | str]:
    """What goes on the wire for ``case``: its body, or the text of it broken the way
    ``case.options.malformed`` says (a ``str`` is sent as it is)."""
    path, body = build_request(case, model)
    kind = case.options.malformed
    return path, body if kind is None else malform(body, kind)


def assemble(exchange: Exchange) -> Observation:
    """The turn as a client sees it, read with the dialect the exchange's URL names."""
    path = exchange.url.split("?", 1)[0].rstrip("/")
    if path.endswith(responses.PATH):
        return responses.assemble_responses(exchange)
    return chat.assemble_chat(exchange)
