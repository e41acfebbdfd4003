"""``framing``: a stream framed otherwise than its api's spec says, beyond what the SDK models see.

The openai SDK's models judge each payload alone (``wire_schema``); this judges the stream as a
sequence of server-sent events, which no model sees:

- Responses: every event carries an ``event:`` line naming its payload's ``type``
  (``event_missing``, ``event_mismatch``); nothing follows the terminal event
  (``after_terminal``); no chat-style ``data: [DONE]`` (``done_in_responses``: not part of the
  Responses protocol, and a client that reads each event as JSON fails on it);
  ``sequence_number`` goes up by one (``sequence``); an argument-delta event belongs to an item of
  its own family, ``function_call_arguments`` to a function call and ``custom_tool_call_input``
  to a custom tool's call (``delta_family``).
- Chat: the stream ends with ``data: [DONE]`` (``no_done``), and nothing follows it
  (``after_done``).

Framing is the server's alone: no model output can change it. A stream that already failed
(an error frame, no terminal event) is the ``error`` oracle's, and is not judged here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, SSEEvent, Violation
from agentfuzz.oracles._common import TERMINAL_EVENTS, is_answer
from agentfuzz.oracles._registry import clip, register

__all__ = ["framing"]

# Argument-delta event families and the item type each belongs to.
_FAMILIES = {
    "response.function_call_arguments.": "function_call",
    "response.custom_tool_call_input.": "custom_tool_call",
}


def _violation(how: str, message: str, evidence: str) -> Violation:
    return Violation("framing", message, clip(evidence), f"framing:{how}")


def _done(event: SSEEvent) -> bool:
    return event.data.strip() == "[DONE]"


def _payload(event: SSEEvent) -> dict[str, Any] | None:
    try:
        value = json.loads(event.data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _chat(events: tuple[SSEEvent, ...]) -> Iterator[Violation]:
    done = [i for i, e in enumerate(events) if _done(e)]
    if not done:
        last = events[-1].data if events else ""
        yield _violation("no_done", "the chat stream does not end with data: [DONE]", last)
    elif done[0] != len(events) - 1:
        after = events[done[0] + 1].data
        message = f"{len(events) - 1 - done[0]} event(s) after data: [DONE]"
        yield _violation("after_done", message, after)


def _names(events: list[tuple[SSEEvent, dict[str, Any]]]) -> Iterator[Violation]:
    missing = [p.get("type") for e, p in events if e.event is None]
    if missing:
        message = f"{len(missing)} of {len(events)} events have no event: line"
        yield _violation("event_missing", message, f"first: {missing[0]}")
    for event, payload in events:
        if event.event is not None and event.event != payload.get("type"):
            message = f"event: {event.event} carries a payload of type {payload.get('type')}"
            yield _violation("event_mismatch", message, event.data)
            return


def _sequence(events: list[tuple[SSEEvent, dict[str, Any]]]) -> Iterator[Violation]:
    numbers = [p.get("sequence_number") for _, p in events]
    ints = [n for n in numbers if isinstance(n, int) and not isinstance(n, bool)]
    for before, after in pairwise(ints):
        if after != before + 1:
            message = f"sequence_number {after} follows {before}"
            yield _violation("sequence", message, ", ".join(map(str, ints[:40])))
            return


def _families(events: list[tuple[SSEEvent, dict[str, Any]]]) -> Iterator[Violation]:
    kinds: dict[Any, str] = {}
    for _, payload in events:
        item = payload.get("item")
        if payload.get("type") == "response.output_item.added" and isinstance(item, dict):
            kind = str(item.get("type"))
            kinds[("id", item.get("id"))] = kinds[("at", payload.get("output_index"))] = kind
    for event, payload in events:
        kind_of_event = str(payload.get("type"))
        family = next((f for f in _FAMILIES if kind_of_event.startswith(f)), None)
        if family is None:
            continue
        key = ("id", payload["item_id"]) if "item_id" in payload else None
        item = kinds.get(key) if key in kinds else kinds.get(("at", payload.get("output_index")))
        if item is not None and item != _FAMILIES[family]:
            message = f"{kind_of_event} for a {item} item"
            yield _violation("delta_family", message, event.data)
            return


def _responses(events: tuple[SSEEvent, ...]) -> Iterator[Violation]:
    if any(_done(e) for e in events):
        yield _violation("done_in_responses", "a Responses stream carries data: [DONE]", "[DONE]")
    typed = [(e, p) for e in events if not _done(e) and (p := _payload(e)) is not None]
    ends = [i for i, (_, p) in enumerate(typed) if p.get("type") in TERMINAL_EVENTS]
    if ends and ends[0] != len(typed) - 1:
        after = typed[ends[0] + 1][1].get("type")
        message = f"{len(typed) - 1 - ends[0]} event(s) after {typed[ends[0]][1].get('type')}"
        yield _violation("after_terminal", message, f"first: {after}")
    yield from _names(typed)
    yield from _sequence(typed)
    yield from _families(typed)


@register(
    "framing",
    expected="A stream is framed as the spec says: named Responses events in sequence, one "
    "terminal event, `data: [DONE]` only on chat.",
    look_for="the stream's event: and data: lines: an event line missing or naming another "
    "type, a sequence_number that skips, anything after the terminal event, [DONE] missing "
    "on chat or sent on Responses",
)
def framing(case: Case, obs: Observation) -> Iterator[Violation]:
    """A stream framed against its api's spec: event lines, [DONE], sequence numbers, delta
    families.

    Framing is the server's alone, whatever the model wrote. A stream that already failed is
    the error oracle's."""
    events = obs.exchange.events
    if not obs.exchange.stream or not events or not is_answer(obs):
        return
    yield from _responses(events) if case.api == "responses" else _chat(events)
