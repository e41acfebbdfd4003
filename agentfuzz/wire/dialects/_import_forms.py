"""The message forms a captured body was written in (``surface.FORMS``), read back so the case
renders as it came: text as parts, an absent or empty assistant ``content``, names on user
messages, an empty or null ``tool_calls``, a bare ``input`` string, and the non-text parts of
the last user message."""

from __future__ import annotations

from typing import Any

from agentfuzz.model.history import Api
from agentfuzz.request.surface import FORMS
from agentfuzz.wire.dialects import _fields as _f

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


def read_forms(body: dict[str, Any], api: Api) -> tuple[dict[str, Any], tuple[str, ...]]:
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
        if api == "chat" and entry.get("role") == "assistant" and "tool_calls" in entry:
            if entry["tool_calls"] == []:
                found.add("calls_empty")
            elif entry["tool_calls"] is None:
                found.add("calls_null")
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
