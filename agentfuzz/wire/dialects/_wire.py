"""Shared plumbing for assembling an ``Exchange``: JSON parsing, fault notes, safe field access.

Both dialects start the same way (transport failure, HTTP status, refusal, the body or the
events as JSON) and then walk shapes they cannot trust. The helpers here never raise: a
surprise becomes a ``(kind, detail)`` fault or is left for the ``wire_schema`` oracle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentfuzz.model.observation import Exchange

__all__ = [
    "DETAIL_LIMIT",
    "Faults",
    "as_dict",
    "as_list",
    "as_str",
    "has_error",
    "is_foreign_call",
    "parse_json",
    "short",
]

DETAIL_LIMIT = 300


def short(text: str, limit: int = DETAIL_LIMIT) -> str:
    """Clip ``text`` to ``limit`` characters so a fault detail stays one readable line."""
    text = text.replace("\r", " ").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_json(text: str) -> tuple[bool, Any]:
    """Parse ``text`` as JSON: ``(True, value)``, or ``(False, None)`` for anything else."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (the shape fault is wire_schema's)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def is_foreign_call(call: dict[str, Any]) -> bool:
    """Whether a chat tool call is to a tool that is not a function (``type: custom``); a call
    without a ``type`` is a function call."""
    kind = call.get("type")
    return isinstance(kind, str) and kind != "function"


def has_error(payload: Any) -> bool:
    """Whether a payload has a top-level, non-null ``error`` (a Response has ``error: null``)."""
    return isinstance(payload, dict) and payload.get("error") is not None


@dataclass
class Faults:
    """The running fault list, payload list and refusal flag of one assembly."""

    errors: list[tuple[str, str]] = field(default_factory=list)
    payloads: list[Any] = field(default_factory=list)
    refused: bool = False

    def add(self, kind: str, detail: str) -> None:
        self.errors.append((kind, short(detail)))

    def triage(self, exchange: Exchange) -> tuple[bool, Any]:
        """Note transport and status faults, then parse the body when there is one to read.

        Returns ``(True, value)`` when the body parsed as JSON and should be assembled as a
        non-streamed answer, ``(False, None)`` otherwise (no body, a refusal, 5xx, garbage).
        A streamed answer with events skips the body: its events are read by the caller.
        """
        if exchange.failure:
            self.add("transport", exchange.failure)
        status = exchange.status
        if status is not None and 300 <= status < 400 and not exchange.failure:
            # A redirect is where the target is configured to be, not its answer: nothing in
            # it (an empty body, a moved page) is judged (the run says so once, ``Target``).
            self.refused = True
            return False, None
        if status is not None and status >= 500:
            # A 5xx body is evidence of the crash, not a second fault: keep it in the detail.
            ok, value = parse_json(exchange.body)
            if ok:
                self.payloads.append(value)
            self.add("http_status", f"{status}: {exchange.body}")
            return False, None
        if exchange.events or not exchange.body:
            return False, None
        ok, value = parse_json(exchange.body)
        if not ok:
            self.add("non_json", f"body ({status}): {exchange.body}")
            return False, None
        self.payloads.append(value)
        if status is not None and 400 <= status < 500:
            # A refusal whatever its JSON says: FastAPI's {"detail": ...} is one too, and an
            # answer judged from a refusal's body is a false finding on every oracle.
            self.refused = True
            return False, None
        if has_error(value):
            self.add("error_frame", f"body: {exchange.body}")
        return True, value

    def read_event(self, event: str | None, data: str) -> tuple[bool, Any]:
        """Parse one SSE event: ``(True, payload)`` for a usable payload, else ``(False, None)``.

        An error frame (named ``error``, a non-null ``error`` key, or ``type: error``) is noted
        once as ``error_frame``, even when its data is not JSON; other garbage is ``non_json``.
        """
        ok, payload = parse_json(data)
        if ok:
            self.payloads.append(payload)
        typed = isinstance(payload, dict) and payload.get("type") == "error"
        if event == "error" or typed or has_error(payload):
            self.add("error_frame", data)
            return False, None
        if not ok:
            self.add("non_json", f"event {event or 'message'}: {data}")
        return ok, payload
