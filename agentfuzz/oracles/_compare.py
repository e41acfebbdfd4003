"""Comparing two answers as a client sees them: what ``stream_divergence`` and the greedy
relations read (the kind of turn, the calls with their arguments, the text, the cut)."""

from __future__ import annotations

import json

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, ObservedCall
from agentfuzz.oracles._common import is_answer, is_truncated, one_line
from agentfuzz.oracles._registry import EVIDENCE_LIMIT, clip
from agentfuzz.puppet.scripted import carried
from agentfuzz.puppet.surface import takes_writing

__all__ = ["deterministic", "difference", "served", "shape", "side"]


def deterministic(case: Case, obs: Observation) -> bool:
    """True when the request asked for greedy sampling: temperature 0 in the case, or in the
    body actually sent (a profile's knob defaults fill it in there); or when it carries a
    puppet script and leaves the writing to it (``tool_choice`` left to the model, no grammar
    or mask: ``puppet.surface.takes_writing``), so the processor writes every token whatever
    the sampling (under a forced choice a server's grammar may take over from it)."""
    fields = case.options.fields
    if carried(fields) is not None and takes_writing(fields) is None:
        return case.options.tool_choice in (None, "auto", "none")
    temperature = case.options.temperature
    sent = obs.exchange.request
    if temperature is None and isinstance(sent, dict):
        temperature = sent.get("temperature")
    return (
        isinstance(temperature, int | float)
        and not isinstance(temperature, bool)
        and temperature == 0
    )


def served(obs: Observation) -> bool:
    status = obs.exchange.status
    return is_answer(obs) and status is not None and 200 <= status < 300


def shape(obs: Observation) -> str:
    if obs.tool_calls:
        return "calls"
    return "text" if obs.text.strip() else "nothing"


def _text(obs: Observation) -> str:
    return " ".join(obs.text.split())


def _names(obs: Observation) -> list[str]:
    """Each call's name, prefixed with its Responses namespace when it has one."""
    return [f"{c.namespace}/{c.name}" if c.namespace else c.name or "" for c in obs.tool_calls]


def _arguments(call: ObservedCall) -> str:
    """The arguments re-serialised canonically (``true`` stays apart from ``1``); unreadable
    JSON compares as its stripped text."""
    try:
        return "json:" + json.dumps(json.loads(call.arguments), sort_keys=True)
    except (ValueError, RecursionError):
        return "raw:" + call.arguments.strip()


def side(obs: Observation) -> str:
    """One side, briefly: its shape, calls with arguments, text and cut."""
    pairs = zip(_names(obs), obs.tool_calls, strict=True)
    calls = ", ".join(f"{name}({one_line(c.arguments, 80)})" for name, c in pairs)
    finish = obs.finish_reason or obs.status
    # Each side gets half of the evidence budget, so the second is never clipped away.
    return clip(
        f"{shape(obs)}; calls=[{calls}]; text={one_line(obs.text, 120)!r}; "
        f"finish={finish!r}{' (cut)' if is_truncated(obs) else ''}",
        EVIDENCE_LIMIT // 2 - 16,
    )


def difference(streamed: Observation, plain: Observation) -> tuple[str, str] | None:
    """The first way the two turns differ, as (kind, what), most basic first; None if alike."""
    shapes = (shape(streamed), shape(plain))
    if shapes[0] != shapes[1]:
        return "shape", f"stream gave {shapes[0]}, non-stream gave {shapes[1]}"
    cuts = (is_truncated(streamed), is_truncated(plain))
    if cuts[0] != cuts[1]:
        which = "stream" if cuts[0] else "non-stream"
        return "cut", f"only the {which} answer was cut by the token limit"
    names = (_names(streamed), _names(plain))
    if names[0] != names[1]:
        return "calls", f"stream called {names[0]}, non-stream called {names[1]}"
    for number, (a, b) in enumerate(zip(streamed.tool_calls, plain.tool_calls, strict=True)):
        if _arguments(a) != _arguments(b):
            return "arguments", f"call {number} ({names[0][number]}) has other arguments"
    if _text(streamed) != _text(plain):
        return "text", "the visible text differs"
    return None
