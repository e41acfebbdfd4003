"""The one way the reference server refuses a request: a ``BadRequest``, answered with a 400."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["BadRequest", "need", "refused_schema"]


class BadRequest(Exception):
    """Input the server refuses: answered with a 400 and an OpenAI-style JSON error body."""


def need(cond: bool, message: str) -> None:
    """Refuse the request with ``message`` unless ``cond`` holds."""
    if not cond:
        raise BadRequest(message)


def _parameters(tools: Any) -> Iterator[Any]:
    """Every declared function's ``parameters``: chat's ``function`` objects, Responses'
    flat tools and the tools inside its namespaces."""
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        inner = tool.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else tool
        yield fn.get("parameters")
        yield from _parameters(tool.get("tools"))


def refused_schema(body: Any, kind: str | None) -> str | None:
    """Why a server that cannot handle parameters of JSON type ``kind`` refuses ``body``'s
    tools (as a server whose guided decoding lacks a type refuses the schema, legitimately),
    or None. ``kind`` None refuses nothing."""
    if kind is None or not isinstance(body, dict):
        return None
    for params in _parameters(body.get("tools")):
        props = params.get("properties") if isinstance(params, dict) else None
        for name, spec in (props or {}).items() if isinstance(props, dict) else ():
            if isinstance(spec, dict) and spec.get("type") == kind:
                return f"tools: parameter {name!r} of type {kind!r} is not supported"
    return None
