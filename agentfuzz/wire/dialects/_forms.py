"""Message forms: the same conversation written the other ways the wire allows.

A form changes how a built body spells its messages, never what they say: text as an array
of parts, an assistant turn with calls and an empty or absent ``content``, a ``name`` on user
messages, an assistant turn without calls that says ``tool_calls: []`` or ``tool_calls: null``,
a Responses ``input`` that is one user message sent as a bare string. Three forms
add a part no server reads as text (an image, a part of an unknown type, a part with no type)
to the last user message: a server that cannot take it refuses with a JSON 4xx, one that
ignores it answers the text. ``surface.FORMS`` lists them per api.
"""

from __future__ import annotations

import copy
from typing import Any

from agentfuzz.model.history import Api

__all__ = ["apply_forms"]

# A 1x1 transparent PNG: the smallest image a server could decode.
_PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
_EXTRA: dict[str, dict[Api, dict[str, Any]]] = {
    "image_part": {
        "chat": {"type": "image_url", "image_url": {"url": _PIXEL}},
        "responses": {"type": "input_image", "image_url": _PIXEL, "detail": "auto"},
    },
    "unknown_part": {
        "chat": {"type": "agentfuzz_unknown", "text": "ignore me"},
        "responses": {"type": "agentfuzz_unknown", "text": "ignore me"},
    },
    "untyped_part": {"chat": {"text": "no type"}, "responses": {"text": "no type"}},
}


def _parts(text: Any, kind: str) -> Any:
    return [{"type": kind, "text": text}] if isinstance(text, str) else text


def _chat(messages: list[dict[str, Any]], forms: tuple[str, ...]) -> None:
    for msg in messages:
        role = msg.get("role")
        if "parts" in forms and role != "assistant":
            msg["content"] = _parts(msg.get("content"), "text")
        if "parts" in forms and role == "assistant" and msg.get("content"):
            msg["content"] = _parts(msg["content"], "text")
        if role == "assistant" and msg.get("tool_calls") and msg.get("content") is None:
            if "content_empty" in forms:
                msg["content"] = ""
            elif "content_absent" in forms:
                msg.pop("content", None)
        if "names" in forms and role == "user":
            msg["name"] = "agentfuzz_user"
        if role == "assistant" and not msg.get("tool_calls"):
            # What clients send after a turn with no calls; a template that loops over
            # ``tool_calls`` without a guard breaks on null.
            if "calls_empty" in forms:
                msg["tool_calls"] = []
            elif "calls_null" in forms:
                msg["tool_calls"] = None


def _responses(items: list[dict[str, Any]], forms: tuple[str, ...]) -> None:
    if "parts" not in forms:
        return
    for item in items:
        if item.get("type") == "message":
            kind = "output_text" if item.get("role") == "assistant" else "input_text"
            parts = _parts(item.get("content"), kind)
            if kind == "output_text" and isinstance(parts, list):
                parts = [p | {"annotations": []} for p in parts]
            item["content"] = parts
        elif item.get("type") == "function_call_output":
            item["output"] = _parts(item.get("output"), "input_text")


def _lone_text(entries: list[dict[str, Any]]) -> bool:
    """Whether the input is one user message whose content is a string."""
    return (
        len(entries) == 1
        and entries[0].get("role") == "user"
        and isinstance(entries[0].get("content"), str)
    )


def _extra_part(entries: list[dict[str, Any]], api: Api, part: dict[str, Any]) -> None:
    users = [e for e in entries if e.get("role") == "user"]
    if not users:
        return
    last = users[-1]
    text_kind = "text" if api == "chat" else "input_text"
    content = _parts(last.get("content"), text_kind)
    last["content"] = [*(content if isinstance(content, list) else []), copy.deepcopy(part)]


def apply_forms(body: dict[str, Any], api: Api, forms: tuple[str, ...]) -> dict[str, Any]:
    """``body`` with its messages (or input items) written in ``forms``; changed in place."""
    if not forms:
        return body
    entries = body.get("messages" if api == "chat" else "input")
    if not isinstance(entries, list):
        return body
    if api == "chat":
        _chat(entries, forms)
    elif "input_string" in forms and _lone_text(entries):
        # The plainest Responses input there is: the one user message as a bare string.
        body["input"] = entries[0]["content"]
        return body
    else:
        _responses(entries, forms)
    for form, parts in _EXTRA.items():
        if form in forms:
            _extra_part(entries, api, parts[api])
    return body
