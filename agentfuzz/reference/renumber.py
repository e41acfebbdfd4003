"""Input-side tool-call id renumbering for Kimi templates (seed 000's fix, and its first draft).

Kimi's template renders a call id verbatim and the function name nowhere else, so a
history id that is not ``functions.{name}:{idx}`` makes prior turns unreadable and teaches
the model a foreign header shape. The fix renumbers every non-native id with one counter
over the whole input, and gives the paired tool result the same new id.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .intake import Call, Message
from .switches import Rewrite

__all__ = ["LOOSE_NATIVE", "STRICT_NATIVE", "renumber"]

STRICT_NATIVE = re.compile(r"functions\..+:\d+")
# The first draft of the fix: anything ending in ``:N`` passed as native (``call_abc123:0``).
LOOSE_NATIVE = re.compile(r".+:\d+")


def renumber(messages: list[Message], mode: Rewrite) -> list[Message]:
    """Return the messages with non-native call ids renumbered; ``none`` returns them as is.

    Native ids pass through untouched, so applying this twice changes nothing. A tool result
    takes the new id of the earliest not-yet-answered call that had its old id; a result that
    answers no call keeps its id.
    """
    if mode == "none":
        return messages
    native = STRICT_NATIVE if mode == "strict" else LOOSE_NATIVE
    counter = 0
    unanswered: dict[str, list[str]] = {}
    out: list[Message] = []
    for msg in messages:
        if msg.role == "assistant" and msg.tool_calls:
            calls = []
            for call in msg.tool_calls:
                new_id = (
                    call.id if native.fullmatch(call.id) else f"functions.{call.name}:{counter}"
                )
                counter += 1
                unanswered.setdefault(call.id, []).append(new_id)
                calls.append(Call(new_id, call.name, call.arguments))
            out.append(replace(msg, tool_calls=calls))
        elif msg.role == "tool" and msg.tool_call_id is not None:
            queue = unanswered.get(msg.tool_call_id)
            out.append(replace(msg, tool_call_id=queue.pop(0) if queue else msg.tool_call_id))
        else:
            out.append(msg)
    return out
