"""Responses output: the ``response`` body, or the typed event stream with ``sequence_number``.

Where ids come from is the profile's business: the streaming path may mint its own
``call_<16 hex>`` (seed 000), and ``response.completed`` may rebuild the items with fresh
ids (seeds 002/003) instead of reusing the ones it streamed.
"""

from __future__ import annotations

import copy
import json
import random
import time
from typing import Any

from .chat_out import mint, pieces
from .intake import Intake
from .parsers import Parsed, prompt_tokens, written_tokens
from .switches import Behaviour

__all__ = ["output_items", "response_body", "response_error_events", "response_events"]


def output_items(
    profile: Behaviour, intake: Intake, parsed: Parsed, rng: random.Random, *, streaming: bool
) -> list[dict[str, Any]]:
    """The finished output items, with the ids this path puts on them."""
    items: list[dict[str, Any]] = []
    regen_shape = streaming and profile.regen_completed and profile.template == "kimi"
    if parsed.reasoning:
        prefix = profile.stream_reasoning_prefix if streaming else "rs_"
        items.append(
            {
                "id": mint(rng, prefix, 16),
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": parsed.reasoning}],
                "status": "completed",
            }
        )
    if parsed.content:
        part = {"type": "output_text", "text": parsed.content, "annotations": [], "logprobs": []}
        items.append(
            {
                "id": mint(rng, "" if regen_shape else "msg_", 16),
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
        )
    specs = {t.name: t for t in intake.tools or []}
    for call in parsed.calls:
        # Harmony has no ids to parse; vLLM's streaming path mints its own (seed 000).
        minted = streaming and profile.stream_call_id == "call_hex16"
        call_id = mint(rng, "call_", 16) if profile.template == "harmony" or minted else call.id
        spec = specs.get(call.name)
        item: dict[str, Any] = {
            "id": mint(rng, "" if regen_shape else "fc_", 16),
            "type": "function_call",
            "call_id": call_id,
            "name": spec.inner if spec else call.name,
            "arguments": call.arguments,
            "status": "completed",
        }
        if spec and spec.namespace:
            item["namespace"] = spec.namespace
        items.append(item)
    if parsed.cut_short and items:
        items[-1]["status"] = "incomplete"  # the budget cut this item, the last written
    return items


def _regenerate(profile: Behaviour, items: list[dict[str, Any]], rng: random.Random) -> list[Any]:
    """What a rebuilding ``response.completed`` sends: same content, freshly minted ids."""
    fresh = copy.deepcopy(items)
    prefixes = {"reasoning": "rs_", "message": "msg_", "function_call": "fc_"}
    call_prefix = "call_" if profile.template == "harmony" else "chatcmpl-tool-"
    for item in fresh:
        item["id"] = mint(rng, prefixes[item["type"]], 16)
        if item["type"] == "function_call":
            item["call_id"] = mint(rng, call_prefix, 16)
    return fresh


def _tools_echo(intake: Intake) -> list[dict[str, Any]]:
    echo: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for spec in intake.tools or []:
        fn = {
            "type": "function",
            "name": spec.inner,
            "description": spec.description,
            "parameters": spec.parameters,
            "strict": False,
        }
        if spec.namespace is None:
            echo.append(fn)
            continue
        if spec.namespace not in spaces:
            spaces[spec.namespace] = {
                "type": "namespace",
                "name": spec.namespace,
                "description": "",
                "tools": [],
            }
            echo.append(spaces[spec.namespace])
        spaces[spec.namespace]["tools"].append(fn)
    return echo


def _choice_echo(intake: Intake) -> Any:
    if intake.choice.allowed is not None:
        return intake.choice.raw
    if intake.choice.mode != "named":
        return intake.choice.mode
    spec = next(t for t in intake.tools or [] if t.name == intake.choice.name)
    return {"type": "function", "name": spec.inner}


def _envelope(intake: Intake, response_id: str, status: str, output: list[Any]) -> dict[str, Any]:
    cut = {"reason": "max_output_tokens"} if status == "incomplete" else None
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": intake.model,
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": _choice_echo(intake),
        "tools": _tools_echo(intake),
        "error": None,
        "incomplete_details": cut,
        "metadata": {},
    }


def _usage(prompt: str, parsed: Parsed) -> dict[str, Any]:
    n_in, n_out = prompt_tokens(prompt), written_tokens(parsed)
    return {
        "input_tokens": n_in,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": n_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": n_in + n_out,
    }


def _status(parsed: Parsed) -> str:
    return "incomplete" if parsed.cut_short else "completed"


def response_body(
    profile: Behaviour, intake: Intake, prompt: str, parsed: Parsed, rng: random.Random
) -> dict[str, Any]:
    """A non-streaming ``response`` object."""
    response_id = mint(rng, "resp_")
    items = output_items(profile, intake, parsed, rng, streaming=False)
    body = _envelope(intake, response_id, _status(parsed), items)
    body["usage"] = _usage(prompt, parsed)
    return body


class _Events:
    """Collects ``(event type, payload)`` pairs, numbering them as it goes."""

    def __init__(self) -> None:
        self.out: list[tuple[str, str]] = []

    def add(self, kind: str, **fields: Any) -> None:
        payload = {"type": kind, "sequence_number": len(self.out), **fields}
        self.out.append((kind, json.dumps(payload)))


def _start(intake: Intake, response_id: str) -> _Events:
    events = _Events()
    events.add("response.created", response=_envelope(intake, response_id, "in_progress", []))
    events.add("response.in_progress", response=_envelope(intake, response_id, "in_progress", []))
    return events


def response_events(
    profile: Behaviour, intake: Intake, prompt: str, parsed: Parsed, rng: random.Random
) -> list[tuple[str, str]]:
    """The ``(event, data)`` pairs of a Responses stream, ending with ``response.completed``
    (``response.incomplete`` when the token budget cut the text)."""
    response_id = mint(rng, "resp_")
    events = _start(intake, response_id)
    items = output_items(profile, intake, parsed, rng, streaming=True)
    for index, item in enumerate(items):
        _stream_item(events, index, item)
    final = _regenerate(profile, items, rng) if profile.regen_completed else items
    done = _envelope(intake, response_id, _status(parsed), final)
    done["usage"] = _usage(prompt, parsed)
    events.add(f"response.{done['status']}", response=done)
    return events.out


def _stream_item(events: _Events, index: int, item: dict[str, Any]) -> None:
    at = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "reasoning":
        text = item["content"][0]["text"]
        events.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "content": [], "status": "in_progress"},
        )
        for part in pieces(text):
            events.add("response.reasoning_text.delta", **at, content_index=0, delta=part)
        events.add("response.reasoning_text.done", **at, content_index=0, text=text)
    elif kind == "message":
        part = item["content"][0]
        events.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "content": [], "status": "in_progress"},
        )
        empty = {**part, "text": ""}
        events.add("response.content_part.added", **at, content_index=0, part=empty)
        for delta in pieces(part["text"]):
            events.add(
                "response.output_text.delta", **at, content_index=0, delta=delta, logprobs=[]
            )
        events.add(
            "response.output_text.done", **at, content_index=0, text=part["text"], logprobs=[]
        )
        events.add("response.content_part.done", **at, content_index=0, part=part)
    else:
        events.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "arguments": "", "status": "in_progress"},
        )
        for delta in pieces(item["arguments"]):
            events.add("response.function_call_arguments.delta", **at, delta=delta)
        events.add(
            "response.function_call_arguments.done",
            **at,
            arguments=item["arguments"],
            name=item["name"],
        )
    events.add("response.output_item.done", output_index=index, item=item)


def response_error_events(intake: Intake, markup: str, rng: random.Random) -> list[tuple[str, str]]:
    """exo's failure stream: the response starts, then an ``error`` event carrying the markup."""
    events = _start(intake, mint(rng, "resp_"))
    events.add("error", message=markup, code="server_error", param=None)
    return events.out
