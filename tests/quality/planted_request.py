"""Request parsing for the planted server: a chat or Responses body -> a dialect-free history.

Server-side test code: it must not import ``agentfuzz`` (a parsing bug shared with the client
would hide itself).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BadRequest",
    "Call",
    "Entry",
    "ParsedRequest",
    "ToolDecl",
    "parse",
    "parse_chat",
    "parse_responses",
    "prompt_tokens",
    "str_or_empty",
]


class BadRequest(Exception):
    """A request the server refuses with a 4xx JSON error (a legitimate refusal, not a bug)."""


@dataclass
class Call:
    id: str
    name: str
    arguments: Any
    namespace: str | None = None


@dataclass
class Entry:
    """One history item, dialect-free: user, assistant (with calls), tool (a result), or other."""

    kind: str
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str = ""
    after_reasoning: bool = False


@dataclass
class ToolDecl:
    name: str
    flat: str
    namespace: str | None
    parameters: Any


@dataclass
class ParsedRequest:
    api: str
    stream: bool
    model: str
    entries: list[Entry]
    tools: list[ToolDecl]
    choice: str
    named: str | None
    body: dict[str, Any]


def str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str_or_empty(p.get("text")) for p in content if isinstance(p, dict))
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
    raise BadRequest(f"unsupported tool_choice: {raw!r}")


def parse_chat(body: dict[str, Any]) -> tuple[list[Entry], list[ToolDecl]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequest("messages must be a list")
    entries: list[Entry] = []
    for m in messages:
        if not isinstance(m, dict):
            raise BadRequest("each message must be an object")
        role = m.get("role")
        if role == "user":
            entries.append(Entry("user", _text(m.get("content"))))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict):
                    calls.append(
                        Call(
                            str_or_empty(tc.get("id")),
                            str_or_empty(fn.get("name")),
                            fn.get("arguments"),
                        )
                    )
            entries.append(Entry("assistant", _text(m.get("content")), calls))
        elif role == "tool":
            entries.append(Entry("tool", call_id=str_or_empty(m.get("tool_call_id"))))
        else:
            entries.append(Entry("other"))
    tools = []
    for t in body.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(ToolDecl(fn["name"], fn["name"], None, fn.get("parameters")))
    return entries, tools


def parse_responses(body: dict[str, Any]) -> tuple[list[Entry], list[ToolDecl]]:
    raw = body.get("input")
    items = [{"type": "message", "role": "user", "content": raw}] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise BadRequest("input must be a string or a list")
    entries: list[Entry] = []
    previous = ""
    for it in items:
        if not isinstance(it, dict):
            raise BadRequest("each input item must be an object")
        kind = it.get("type", "message" if "role" in it else "")
        if kind == "message":
            role = "user" if it.get("role") == "user" else "assistant"
            entries.append(Entry(role, _text(it.get("content"))))
        elif kind == "function_call":
            call = Call(
                str_or_empty(it.get("call_id")), str_or_empty(it.get("name")), it.get("arguments")
            )
            call.namespace = it.get("namespace") if isinstance(it.get("namespace"), str) else None
            # Consecutive function_call items are one assistant turn's parallel calls.
            if previous == "function_call":
                entries[-1].calls.append(call)
            else:
                entries.append(
                    Entry("assistant", calls=[call], after_reasoning=previous == "reasoning")
                )
        elif kind == "function_call_output":
            entries.append(Entry("tool", call_id=str_or_empty(it.get("call_id"))))
        else:
            entries.append(Entry("reasoning" if kind == "reasoning" else "other"))
        previous = kind
    tools = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        if t.get("type") == "function":
            tools.append(ToolDecl(t["name"], t["name"], None, t.get("parameters")))
        elif t.get("type") == "namespace":
            ns = t["name"]
            for inner in t.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    name = inner["name"]
                    tools.append(ToolDecl(name, f"{ns}__{name}", ns, inner.get("parameters")))
    return entries, tools


def parse(api: str, body: dict[str, Any]) -> ParsedRequest:
    entries, tools = (parse_chat if api == "chat" else parse_responses)(body)
    choice, named = _choice(body.get("tool_choice"))
    model = str_or_empty(body.get("model")) or "planted"
    return ParsedRequest(
        api, body.get("stream") is True, model, entries, tools, choice, named, body
    )


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _words(value: Any) -> list[str]:
    """The text a prompt would hold for ``value``: a string, the text of parts, JSON otherwise."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(p, dict) and "text" in p for p in value):
        return [str_or_empty(p.get("text")) for p in value]
    return [] if value is None else [json.dumps(value, sort_keys=True)]


def prompt_tokens(body: dict[str, Any]) -> int:
    """How many tokens the prompt of ``body`` holds, as a word-and-punctuation tokenizer counts
    them: every message's role and text (a string and its text parts alike), every call's name
    and arguments, every tool result, and the tools declared."""
    raw = body.get("messages", body.get("input"))
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    texts: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            texts += _words(item)
            continue
        for key in ("role", "content", "output", "name", "arguments"):
            texts += _words(item.get(key))
        for call in item.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                texts += _words(fn.get("name")) + _words(fn.get("arguments"))
    texts += _words(body.get("instructions")) + _words(body.get("tools") or None)
    return max(1, sum(len(_TOKEN.findall(text)) for text in texts))
