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
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError

from agentfuzz.dialects import _fields as _f
from agentfuzz.dialects._wire import is_foreign_call
from agentfuzz.errors import InputError
from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    ForeignItem,
    History,
    Item,
    Options,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.request.surface import FORMS

__all__ = ["InputError", "parse_input", "parse_jsonl", "parse_request", "parse_text"]

_MODES = ("auto", "none", "required")
# The top-level keys read into the case; the rest travel as they came (Options.fields).
_LIMIT: dict[Api, str] = {"chat": "max_tokens", "responses": "max_output_tokens"}
_READ: dict[Api, set[str]] = {
    "chat": {"model", "messages", "tools", "stream", "seed", "temperature", "max_tokens"},
    "responses": {"model", "input", "tools", "stream", "temperature", "max_output_tokens"},
}
_ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")
_ROLES = ("user", "system", "developer", "assistant")
_UNKNOWN = (
    "not a request body, a messages array, an input array, a repro.json, a session.json or JSONL"
)


def _message(role: Any, content: Any, at: str) -> Item:
    if role not in _ROLES:
        _f.fail(at, f"unknown role {role!r:.40}")
    text = _f.text(content, f"{at}.content")
    if role == "user":
        return UserMessage(text=text)
    if role == "assistant":
        return AssistantMessage(text=text)
    return SystemMessage(text=text, role=role)


def _chat_call(raw: Any, at: str) -> ToolCall:
    call = _f.want(raw, dict, at)
    if call.get("type", "function") != "function":
        _f.fail(at, f"unsupported tool call type {call.get('type')!r:.40}")
    fn = _f.want(call.get("function"), dict, f"{at}.function")
    return ToolCall(
        id=_f.str_(call, "id", at, default=""),
        name=_f.str_(fn, "name", f"{at}.function"),
        arguments=_f.arguments(fn.get("arguments")),
    )


def _foreign_calls(msg: dict[str, Any]) -> bool:
    """Whether a chat assistant message calls a tool that is not a function (a custom one), or
    makes a legacy ``function_call``."""
    if msg.get("function_call") is not None:
        return True
    calls = msg.get("tool_calls")
    return isinstance(calls, list) and any(
        isinstance(c, dict) and is_foreign_call(c) for c in calls
    )


def _chat_items(messages: list[Any], where: str) -> list[Item]:
    items: list[Item] = []
    for i, raw in enumerate(messages):
        at = f"{where}[{i}]"
        msg = _f.want(raw, dict, at)
        role, content = msg.get("role"), msg.get("content")
        if role == "tool":
            output = _f.text(content, f"{at}.content")
            items.append(ToolResult(call_id=_f.str_(msg, "tool_call_id", at, ""), output=output))
        elif role == "function" or (role == "assistant" and _foreign_calls(msg)):
            items.append(ForeignItem(body=msg))  # a custom or legacy call, kept as it came
        elif role == "assistant":
            key = "reasoning_content" if msg.get("reasoning_content") is not None else "reasoning"
            calls = _f.want(_f.get(msg, "tool_calls", []), list, f"{at}.tool_calls")
            items.append(
                AssistantMessage(
                    text=None if content is None else _f.text(content, f"{at}.content"),
                    reasoning=_f.opt_str(msg, key, at),
                    tool_calls=tuple(
                        _chat_call(c, f"{at}.tool_calls[{j}]") for j, c in enumerate(calls)
                    ),
                )
            )
        else:
            items.append(_message(role, content, at))
    return items


def _responses_item(obj: dict[str, Any], at: str, items: list[Item]) -> None:
    kind = obj.get("type", "message" if "role" in obj else None)
    if kind == "message":
        items.append(_message(obj.get("role"), obj.get("content"), at))
    elif kind == "function_call":
        call = ToolCall(
            id=_f.str_(obj, "call_id", at, default=""),
            name=_f.str_(obj, "name", at),
            namespace=_f.opt_str(obj, "namespace", at) or None,
            arguments=_f.arguments(obj.get("arguments")),
            item_id=_f.opt_str(obj, "id", at),
        )
        last = items[-1] if items else None
        # The builder sends an assistant turn as its message, then its calls: one item again.
        if isinstance(last, AssistantMessage):
            items[-1] = last.model_copy(update={"tool_calls": (*last.tool_calls, call)})
        else:
            items.append(AssistantMessage(tool_calls=(call,)))
    elif kind == "function_call_output":
        output = _f.text(obj.get("output"), f"{at}.output")
        items.append(ToolResult(call_id=_f.str_(obj, "call_id", at, default=""), output=output))
    elif kind == "reasoning":
        texts = [_f.text(_f.get(obj, k, []), f"{at}.{k}", "\n\n") for k in ("summary", "content")]
        text = "\n\n".join(t for t in texts if t)
        items.append(ReasoningItem(text=text, id=_f.opt_str(obj, "id", at)))
    elif isinstance(kind, str):
        # A hosted tool's call, a custom tool's call or output…: sent on as it came.
        items.append(ForeignItem(body=obj))
    else:
        _f.fail(at, "an input item needs a type")


def _responses_items(value: Any, where: str) -> list[Item]:
    if isinstance(value, str):
        return [UserMessage(text=value)]
    items: list[Item] = []
    for i, raw in enumerate(_f.want(value, list, where)):
        _responses_item(_f.want(raw, dict, f"{where}[{i}]"), f"{where}[{i}]", items)
    return items


def _foreign_tool(raw: Any) -> bool:
    """Whether a declared tool is not a function nor a namespace (a hosted or custom tool)."""
    kind = raw.get("type", "function") if isinstance(raw, dict) else None
    return isinstance(kind, str) and kind not in ("function", "namespace")


def _tools(raw: Any, where: str, namespace: str | None = None) -> list[Tool]:
    spec = _f.want(raw, dict, where)
    kind = spec.get("type", "function")
    if kind == "namespace" and namespace is None:
        group = _f.str_(spec, "name", where)
        members = _f.want(spec.get("tools"), list, f"{where}.tools")
        return [t for j, m in enumerate(members) for t in _tools(m, f"{where}.tools[{j}]", group)]
    if kind != "function":
        _f.fail(where, f"unsupported tool type {kind!r:.40} inside a namespace")
    # Chat nests the function; Responses (and some chat clients) put it flat.
    at = f"{where}.function" if "function" in spec else where
    fn = _f.want(spec["function"], dict, at) if "function" in spec else spec
    params = fn.get("parameters")
    extra: dict[str, Any] = {}
    if params is not None:
        extra["parameters"] = _f.want(params, dict, f"{at}.parameters")
    strict = fn.get("strict")
    if strict is not None:
        extra["strict"] = _f.want(strict, bool, f"{at}.strict")
    name, description = _f.str_(fn, "name", at), _f.str_(fn, "description", at, default="")
    return [Tool(name=name, namespace=namespace, description=description, **extra)]


def _knob_choice(value: Any) -> bool:
    """Whether a ``tool_choice`` is one the knob holds (a mode, a function by name); any other
    form (``allowed_tools``, a hosted tool, a function without a name) stays a wire field."""
    if value is None or value in _MODES:
        return True
    if not isinstance(value, dict) or value.get("type") != "function":
        return False
    named = value.get("function", value)
    return isinstance(named, dict) and isinstance(named.get("name"), str)


def _tool_choice(value: Any) -> str | None:
    if value is None or value in _MODES:
        return value  # type: ignore[no-any-return]
    named = value.get("function", value)
    return str(named["name"])


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


_ABSENT = object()
_EXTRA_PARTS = {"image_url": "image_part", "input_image": "image_part"}


def _extra(part: Any) -> str | None:
    """The form a content part stands for when it is not text, or None for a text part."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind is None:
        return None if "text" not in part or len(part) > 1 else "untyped_part"
    if kind in _f.TEXT_PARTS:
        return None
    return _EXTRA_PARTS.get(kind, "unknown_part") if isinstance(kind, str) else None


def _read_forms(body: dict[str, Any], api: Api) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The body with the non-text parts of its last user message taken out, and the message
    forms it was written in (``surface.FORMS``), so it renders back as it came."""
    entries = body.get("messages" if api == "chat" else "input")
    if api == "responses" and isinstance(entries, str):
        return body, ("input_string",)
    if not isinstance(entries, list):
        return body, ()
    found: set[str] = set()
    users = [i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("role") == "user"]
    last = users[-1] if users else None
    calling: list[Any] = []  # the content of each chat assistant message with calls
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type", "message")
        content = entry.get("output") if kind == "function_call_output" else entry.get("content")
        if kind in ("message", "function_call_output") and isinstance(content, list) and i != last:
            found.add("parts")
        if api == "chat" and entry.get("role") == "assistant" and entry.get("tool_calls"):
            calling.append(entry.get("content", _ABSENT))
        if api == "chat" and entry.get("role") == "user" and "name" in entry:
            found.add("names")
    # Without a form a call's missing text is null; with one, "" (then no null is left) or absent.
    if _ABSENT in calling:
        found.add("content_absent")
    elif "" in calling and None not in calling:
        found.add("content_empty")
    if last is not None and isinstance(entries[last].get("content"), list):
        content = entries[last]["content"]
        extras = [_extra(p) for p in content]
        if any(extras):
            found.update(e for e in extras if e)
            kept = [p for p, e in zip(content, extras, strict=True) if not e]
            entries = list(entries)
            entries[last] = entries[last] | {"content": kept}
            body = body | {"messages" if api == "chat" else "input": entries}
        else:
            found.add("parts")
    forms = tuple(f for f in FORMS[api] if f in found)
    return body, forms


def _request(body: dict[str, Any], api: Api | None) -> Case:
    if api is None:
        keys = {"messages", "input"} & body.keys()
        if len(keys) != 1:
            _f.fail("", "a request body has either 'messages' (chat) or 'input' (responses)")
        api = "chat" if "messages" in keys else "responses"
    body, forms = _read_forms(body, api)
    if api == "chat":
        items = _chat_items(_f.want(body.get("messages"), list, "messages"), "messages")
    else:
        items = _responses_items(body.get("input"), "input")
    declared = _f.want(_f.get(body, "tools", []), list, "tools")
    foreign = tuple(raw for raw in declared if _foreign_tool(raw))
    tools = [
        t
        for i, raw in enumerate(declared)
        if not _foreign_tool(raw)
        for t in _tools(raw, f"tools[{i}]")
    ]
    if api == "responses":
        # Responses always carries the flag; false is how a Tool without one is sent there.
        tools = [t.model_copy(update={"strict": None}) if t.strict is False else t for t in tools]
    stream = _f.get(body, "stream", False)
    knob = bool(tools) and _knob_choice(body.get("tool_choice"))
    read = _READ[api] | ({"tool_choice"} if knob else set())
    if declared == []:
        read = read - {"tools"}  # an empty list is a shape of its own, kept as it came
    limit = _LIMIT[api]
    options = Options(
        include_tools=bool(tools or foreign),
        tool_choice=_tool_choice(body.get("tool_choice")) if knob else None,
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
        return [_bare(_responses_items(elements, "input"), "responses")]
    if all(isinstance(e, dict) and "role" in e for e in elements):
        return [_bare(_chat_items(elements, "messages"), "chat")]
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
