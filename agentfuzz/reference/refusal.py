"""The one way the reference server refuses a request: a ``BadRequest``, answered with a 400."""

from __future__ import annotations

__all__ = ["BadRequest", "need"]


class BadRequest(Exception):
    """Input the server refuses: answered with a 400 and an OpenAI-style JSON error body."""


def need(cond: bool, message: str) -> None:
    """Refuse the request with ``message`` unless ``cond`` holds."""
    if not cond:
        raise BadRequest(message)
