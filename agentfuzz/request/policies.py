"""Client ID policies: what an agent loop does to the server's call ids before sending them back.

Pure functions over ``ToolCall`` values. The session loop (``agentfuzz.judge.session``) applies one
policy per turn; ``agentfuzz.model.plan`` documents each policy.
"""

from __future__ import annotations

import hashlib
import re
import uuid

from agentfuzz.model.history import ToolCall
from agentfuzz.model.plan import Policy

__all__ = ["rewrite_calls", "rewrite_id", "sanitize_id"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_id(call_id: str) -> str:
    """``call_id`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``:
    ``functions.get_weather:0`` becomes ``functions_get_weather_0``."""
    return _UNSAFE.sub("_", call_id)


def _reminted(call_id: str, index: int) -> str:
    # Deterministic, so a session replays byte for byte: the same id and position give the
    # same fresh id, shaped like the uuid-based ids clients mint.
    digest = hashlib.sha1(f"{index}\0{call_id}".encode()).digest()[:16]
    return "call_" + uuid.UUID(bytes=digest, version=4).hex


def rewrite_id(policy: Policy, call: ToolCall, index: int) -> str:
    """The id the client sends back for ``call``, the ``index``-th call of the session."""
    if policy == "sanitize":
        return sanitize_id(call.id)
    if policy == "remint":
        return _reminted(call.id, index)
    if policy == "renumber-native":
        return f"functions.{call.flat_name}:{index}"
    return call.id


def rewrite_calls(
    policy: Policy, calls: tuple[ToolCall, ...], first_index: int
) -> tuple[ToolCall, ...]:
    """``calls`` with ids rewritten under ``policy``, numbered from ``first_index``.

    A policy that rewrites call ids drops the Responses item id too: a client that mints its
    own call ids does not keep the server's item ids either.
    """
    out = []
    for k, call in enumerate(calls):
        new = rewrite_id(policy, call, first_index + k)
        out.append(call if new == call.id else call.model_copy(update={"id": new, "item_id": None}))
    return tuple(out)
