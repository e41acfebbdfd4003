"""What the proxy keeps of one relayed answer, and whether the client had all of it."""

from __future__ import annotations

import json

from agentfuzz.wire.transport.live import BODY_LIMIT

__all__ = ["Copy", "whole"]


class Copy:
    """What the proxy keeps of one answer for the judge: its first ``BODY_LIMIT`` bytes (what
    the fuzzer reads of one answer at most); the rest goes to the client and is let go."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.cut = False

    def add(self, chunk: bytes) -> None:
        room = BODY_LIMIT - self.size
        if len(chunk) > room:
            self.cut, chunk = True, chunk[:room]
        if chunk:
            self.chunks.append(chunk)
            self.size += len(chunk)

    def raw(self) -> bytes:
        return b"".join(self.chunks)


# The events that end a Responses stream: a client has the whole answer once it reads one.
_LAST_EVENTS = {"response.completed", "response.failed", "response.incomplete", "error"}


def whole(raw: bytes) -> bool:
    """Whether ``raw`` is a whole answer already: a JSON document, or a stream whose last
    complete event ends it: chat's ``[DONE]`` or an error frame (after which the openai SDK
    raises), or an event that ends a response."""
    if raw.lstrip().startswith(b"{"):
        try:
            json.loads(raw)
        except ValueError:
            return False
        return True
    # Whatever follows the last blank line is an event cut short.
    events = [e for e in raw.replace(b"\r\n", b"\n").split(b"\n\n")[:-1] if e.strip()]
    if not events:
        return False
    data = b"\n".join(
        line.removeprefix(b"data:").strip()
        for line in events[-1].split(b"\n")
        if line.startswith(b"data:")
    )
    if data == b"[DONE]":
        return True
    try:
        event = json.loads(data)
    except ValueError:
        return False
    return isinstance(event, dict) and ("error" in event or event.get("type") in _LAST_EVENTS)
