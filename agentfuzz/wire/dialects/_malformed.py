"""Bodies that are not requests: the built body broken one way (``surface.MALFORMED``).

Text ways give the bytes to send as a ``str``; the wrong-shape ways give a JSON object still,
with one part of the wrong type. A server's right answer to every one is a JSON 4xx.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["malform"]

# Deep enough for a recursive JSON parser to give up, small enough to send (10 KB).
_DEPTH = 5000


def _items_key(body: dict[str, Any]) -> str:
    return "messages" if "messages" in body else "input"


def malform(body: dict[str, Any], kind: str) -> dict[str, Any] | str:
    """``body`` broken the way ``kind`` names."""
    text = json.dumps(body)
    items = _items_key(body)
    if kind == "truncated":
        return text[: len(text) // 2]
    if kind == "not_json":
        return f"model={body.get('model', '')}&{items}=hello"
    if kind == "empty":
        return ""
    if kind == "array":
        return f"[{text}]"
    if kind == "huge_number":
        budget = "max_tokens" if items == "messages" else "max_output_tokens"
        return f'{text[:-1]}, "{budget}": 1{"0" * 400}}}'
    if kind == "deep_nesting":
        return f'{text[:-1]}, "metadata": {"[" * _DEPTH}{"]" * _DEPTH}}}'
    if kind == "no_model":
        return {k: v for k, v in body.items() if k != "model"}
    if kind == "items_object":
        first = body.get(items)
        return body | {items: first[0] if isinstance(first, list) and first else {}}
    if kind == "items_number":
        return body | {items: 42}
    if kind == "tools_string":
        return body | {"tools": "get_weather"}
    raise ValueError(f"unknown way to break a body: {kind!r}")
