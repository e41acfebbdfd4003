"""Captured requests and sessions as ``Case`` values: the inverse of the dialect builders.

Reads a ``repro.json``, a chat or Responses body, a bare ``messages`` or ``input`` array, a
``session.json`` (a bundle's or a proxy's: ``{"turns": [{"url", "request", …}]}``), or JSONL (a
session, one body a line). Any body agentfuzz builds comes back unchanged,
``build_request(parse_request(body), model)[1] == body``, though not always from the same
``Case``: chat folds standalone reasoning into the next assistant message; Responses reasoning
comes back as ``ReasoningItem``s under the ids they were sent with. Top-level keys not read
here (``stop``, ``instructions``, ``max_completion_tokens``, a ``tool_choice`` without tools…)
are kept as they came, in ``Options.fields``, so ``reduce`` can take each away; so are tools
that are not functions (``History.foreign_tools``, sent after the functions) and history
entries agentfuzz does not model (a hosted tool's past call, a custom tool's call or output:
``ForeignItem``). Dropped or normalized: ``model``, reasoning ``encrypted_content``, a
namespace's description, content parts (joined); an ``input`` string becomes a user message.

This module tells the formats apart and reads a body's top-level keys; ``_import_items`` reads
its history and tools, ``_import_forms`` the message forms it was written in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError

from agentfuzz.errors import InputError
from agentfuzz.model.history import Api, AssistantMessage, Case, History, Item, Options, Tool
from agentfuzz.wire.dialects import _fields as _f
from agentfuzz.wire.dialects._import_forms import read_forms
from agentfuzz.wire.dialects._import_items import (
    chat_items,
    foreign_tool,
    knob_choice,
    read_tools,
    responses_items,
    tool_choice,
)

__all__ = ["InputError", "parse_input", "parse_jsonl", "parse_request", "parse_text"]

# The top-level keys read into the case; the rest travel as they came (Options.fields).
_LIMIT: dict[Api, str] = {"chat": "max_tokens", "responses": "max_output_tokens"}
_READ: dict[Api, set[str]] = {
    "chat": {"model", "messages", "tools", "stream", "seed", "temperature", "max_tokens"},
    "responses": {"model", "input", "tools", "stream", "temperature", "max_output_tokens"},
}
_ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")
_UNKNOWN = (
    "not a request body, a messages array, an input array, a repro.json, a session.json or JSONL"
)


def _bare(items: list[Item], api: Api) -> Case:
    """A case for a bare array: a minimal tool for each name its calls use, so the request is
    well formed, and no tools at all when nothing is called."""
    tools: dict[tuple[str | None, str], Tool] = {}
    for call in (c for it in items if isinstance(it, AssistantMessage) for c in it.tool_calls):
        tool = Tool(name=call.name, namespace=call.namespace, parameters={"type": "object"})
        tools.setdefault((call.namespace, call.name), tool)
    history = History(tools=tuple(tools.values()), items=tuple(items))
    return Case(history=history, options=Options(include_tools=bool(tools)), api=api)


@contextmanager
def _at(where: str) -> Iterator[None]:
    """Prefix errors with where they happened (a model's own error, too, as one line)."""
    try:
        yield
    except InputError as err:
        raise InputError(f"{where}: {err}" if where else str(err)) from None
    except ValidationError as err:
        _f.fail(where, f"not importable: {err.errors()[0]['msg']}")


def parse_request(body: dict[str, Any], api: Api | None = None) -> Case:
    """A chat or Responses request body as a ``Case``, its api told by ``messages`` or
    ``input`` unless ``api`` is given. A body without ``tools`` gets no tools and
    ``Options(include_tools=False)``. Raises ``InputError``."""
    with _at(""):
        return _request(_f.want(body, dict, "request body"), api)


def _request(body: dict[str, Any], api: Api | None) -> Case:
    if api is None:
        keys = {"messages", "input"} & body.keys()
        if len(keys) != 1:
            _f.fail("", "a request body has either 'messages' (chat) or 'input' (responses)")
        api = "chat" if "messages" in keys else "responses"
    body, forms = read_forms(body, api)
    if api == "chat":
        items = chat_items(_f.want(body.get("messages"), list, "messages"), "messages")
    else:
        items = responses_items(body.get("input"), "input")
    declared = _f.want(_f.get(body, "tools", []), list, "tools")
    foreign = tuple(raw for raw in declared if foreign_tool(raw))
    tools = [
        t
        for i, raw in enumerate(declared)
        if not foreign_tool(raw)
        for t in read_tools(raw, f"tools[{i}]")
    ]
    if api == "responses":
        # Responses always carries the flag; false is how a Tool without one is sent there.
        tools = [t.model_copy(update={"strict": None}) if t.strict is False else t for t in tools]
    stream = _f.get(body, "stream", False)
    knob = bool(tools) and knob_choice(body.get("tool_choice"))
    read = _READ[api] | ({"tool_choice"} if knob else set())
    if declared == []:
        read = read - {"tools"}  # an empty list is a shape of its own, kept as it came
    limit = _LIMIT[api]
    options = Options(
        include_tools=bool(tools or foreign),
        tool_choice=tool_choice(body.get("tool_choice")) if knob else None,
        seed=_f.number(body, "seed", integer=True) if "seed" in read else None,
        temperature=_f.number(body, "temperature", integer=False),
        max_tokens=_f.number(body, limit, integer=True),
        fields={k: v for k, v in body.items() if k not in read},
        forms=forms,
    )
    history = History(tools=tuple(tools), items=tuple(items), foreign_tools=foreign)
    return Case(history=history, options=options, api=api, stream=_f.want(stream, bool, "stream"))


def _repro(doc: dict[str, Any]) -> Case:
    if doc.get("case") is not None:
        try:
            return Case.model_validate(doc["case"])
        except ValidationError:
            pass  # hand-edited, or from another version: the request body is the truth
    url = doc.get("url")
    api: Api | None = "chat" if doc.get("api") == "chat" else None
    if doc.get("api") == "responses" or (isinstance(url, str) and "/responses" in url):
        api = "responses"
    with _at("request"):
        return _request(_f.want(doc["request"], dict, ""), api)


def _session(turns: list[Any]) -> list[Case]:
    """A ``session.json`` (a bundle's, or ``agentfuzz proxy``'s): each turn's request, in order."""
    cases = []
    for i, turn in enumerate(turns):
        with _at(f"turns[{i}]"):
            turn = _f.want(turn, dict, "")
            url = turn.get("url")
            api: Api | None = None
            if isinstance(url, str):
                api = "responses" if url.endswith("/responses") else "chat"
            cases.append(_request(_f.want(turn.get("request"), dict, "request"), api))
    if not cases:
        _f.fail("turns", "an empty session: nothing to import")
    return cases


def _parse(data: Any) -> list[Case]:
    if isinstance(data, dict):
        if {"request", "oracle"} <= data.keys():
            return [_repro(data)]
        if isinstance(data.get("turns"), list):
            return _session(data["turns"])
        if "messages" in data or "input" in data:
            return [_request(data, None)]
        _f.fail("", _UNKNOWN)
    if not isinstance(data, list):
        _f.fail("", _UNKNOWN)
    elements: list[Any] = data
    if not elements:
        _f.fail("", "an empty array: nothing to import")
    if all(isinstance(e, dict) and ("messages" in e or "input" in e) for e in elements):
        cases = []  # a session, as JSONL would hold it
        for i, body in enumerate(elements):
            with _at(f"[{i}]"):
                cases.append(_request(body, None))
        return cases
    if any(isinstance(e, dict) and e.get("type") in _ITEM_TYPES for e in elements):
        return [_bare(responses_items(elements, "input"), "responses")]
    if all(isinstance(e, dict) and "role" in e for e in elements):
        return [_bare(chat_items(elements, "messages"), "chat")]
    _f.fail("", _UNKNOWN)


def parse_input(data: Any) -> list[Case]:
    """The cases a parsed JSON document holds, its format detected: a ``repro.json`` (its
    ``case`` when valid, else its ``request``), a request body, an array of bodies (a
    session), a bare chat ``messages`` array or a bare Responses ``input`` array.

    A bare array declares no tools and leaves them out of the request, unless its calls name
    tools: then each name called gets a minimal tool (parameters ``{"type": "object"}``) so
    the request is well formed. Raises ``InputError``.
    """
    with _at(""):
        return _parse(data)


def parse_jsonl(text: str) -> list[Case]:
    """One case per non-blank line of a JSONL session (request bodies, or repro.json
    documents), in order. Raises ``InputError`` naming the line."""
    cases: list[Case] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        with _at(f"line {number}"):
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                _f.fail("", "not JSON")
            cases += _parse(_f.want(data, dict, "request body"))
    if not cases:
        _f.fail("", "no request bodies: the input is empty")
    return cases


def parse_text(text: str) -> list[Case]:
    """The cases in a file's text: one JSON document (see ``parse_input``), else JSONL."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return parse_jsonl(text)
    return parse_input(data)
