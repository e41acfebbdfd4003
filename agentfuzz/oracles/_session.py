"""Session oracles: ``self_rejection`` and ``id_roundtrip``.

They judge a request by where its history came from (``Case.session``, set only in session
mode), so on synthetic requests they stay silent. Both stay pure: the provenance travels with
the case, and reduction keeps it while it removes items.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentfuzz.model.history import AssistantMessage, Case, ToolResult, UserMessage
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import one_line
from agentfuzz.oracles._registry import clip, register
from agentfuzz.request import ids

__all__ = ["id_roundtrip", "self_rejection"]


def _families(call_ids: list[str]) -> str:
    return ",".join(sorted({ids.recognize(i) or "unknown" for i in call_ids})) or "none"


def _status(obs: Observation) -> int | None:
    return obs.exchange.status


def _what_came_back(obs: Observation) -> str:
    ex = obs.exchange
    detail = obs.errors[0][1] if obs.errors else ex.body
    return clip(f"status={ex.status} {one_line(detail, 300)}")


# How servers say a prompt no longer fits: vLLM's "maximum context length", OpenAI's
# ``context_length_exceeded``, llama.cpp's "exceed context window", the reference server's
# "this model's context holds". Matched in a 4xx's body only.
_TOO_LONG = re.compile(
    r"context[ _]?(length|window|limit)|maximum context|model's context|too many tokens|"
    r"prompt is too long|input is too long",
    re.IGNORECASE,
)


def _too_long(obs: Observation) -> bool:
    """A 4xx that says the prompt outgrew the model's context: a session that grew past it is
    refused rightly, whoever wrote the history."""
    status = _status(obs)
    return status is not None and 400 <= status < 500 and bool(_TOO_LONG.search(obs.exchange.body))


# The judge's control request (``judge/control.py``): the same request, its history cut back
# to its first user message, sent when a session's turn is refused.
_HISTORY_CUT = "history_cut"


def _not_the_history(case: Case, obs: Observation) -> bool:
    """Whether the refusal cannot be blamed on the history: it holds no user message (a
    server may rightly refuse a conversation that opens with its own words), or the control
    request without that history was not accepted either (the tools or the knobs the turn
    carries are what the server refuses). Without a control (a proxied session, which
    agentfuzz only watches) the history is blamed as before."""
    if not any(isinstance(it, UserMessage) for it in case.history.items):
        return True
    control = obs.partner(_HISTORY_CUT)
    if control is None:
        return False
    status = control.exchange.status
    return status is None or not 200 <= status < 300 or bool(control.errors) or control.refused


def _asks_more(case: Case) -> bool:
    """Whether the request carries request-surface fields or message forms: a server may
    refuse those on their own (``n``, ``logprobs``, an image part…), so a refusal of such a
    turn says nothing about its history. The per-request oracles judge the answer still."""
    opts = case.options
    return bool(opts.fields or opts.forms or opts.malformed)


@register(
    "self_rejection",
    expected="The server accepts a history made of its own, unmodified answers.",
    look_for="the error status and message that refuse a history holding only the "
    "server's own answers and the results of their calls",
    rank=30,
)
def self_rejection(case: Case, obs: Observation) -> Iterator[Violation]:
    """The server refuses (4xx or 5xx) a history made only of its own unmodified answers plus
    tool results: the client did nothing but echo what it was given.

    Not when the refusal says the prompt outgrew the context (``_TOO_LONG``): a session grows
    with every turn and a server may refuse it then. Told apart by the error's wording alone,
    so a server that words it otherwise would still be reported; none of the live targets does.
    Nor on a turn that asks for more than the history (``_asks_more``), nor when the same
    request with its history cut back to its first user message is refused too
    (``_not_the_history``): then the tools or knobs it carries are what the server refuses.
    """
    origin = case.session
    status = _status(obs)
    if origin is None or not origin.untouched or status is None or status < 400:
        return
    if _too_long(obs) or _asks_more(case) or _not_the_history(case, obs):
        return
    own = [c.id for c in case.history.calls]
    if not any(isinstance(it, AssistantMessage) for it in case.history.items):
        return  # nothing of the server's own is in the history yet
    yield Violation(
        oracle="self_rejection",
        message=f"HTTP {status} for a history made only of the server's own output",
        evidence=f"own call ids {own[:4]}; {_what_came_back(obs)}",
        signature=f"self_rejection:{status}:{_families(own)}",
    )


def _echoed_and_answered(case: Case) -> list[str]:
    """The echoed ids the request still carries both as a call and as a tool result."""
    origin = case.session
    if origin is None or not origin.echoed:
        return []
    calls = {c.id for c in case.history.calls}
    results = {it.call_id for it in case.history.items if isinstance(it, ToolResult)}
    return [i for i in origin.echoed if i in calls and i in results]


def _ends_with_results(case: Case) -> bool:
    """Whether the server's next word answers the tool results (no user message after them)."""
    items = case.history.items
    return bool(items) and isinstance(items[-1], ToolResult)


@register(
    "id_roundtrip",
    expected="A call id the server minted, sent back unchanged with its tool result, is "
    "accepted and answered: no error status, no error event, no empty turn after the results.",
    look_for="the error status, error event or empty turn that answers tool results sent "
    "back under the call ids the server itself minted",
)
def id_roundtrip(case: Case, obs: Observation) -> Iterator[Violation]:
    """A call id the server minted, sent back with its result, must be accepted and answered.

    A call id the server returned in turn k, sent back unchanged with its result in turn
    k+1, must be accepted and answered: no error status, no error frame, and, when the request
    ends with those results, not an empty turn (after a new user message an empty turn is
    ``empty_turn``'s alone). A rejection of a wholly untouched history is ``self_rejection``'s
    to report, once. Silent on a turn that asks for more than the history (``_asks_more``):
    a stop string may rightly end a turn before a word, a field be rightly refused.
    """
    echoed = _echoed_and_answered(case)
    if not echoed or _asks_more(case):
        return
    status = _status(obs)
    family = _families(echoed)
    if status is not None and status >= 400:
        if (case.session is not None and case.session.untouched) or _too_long(obs):
            return
        if _not_the_history(case, obs):
            return
        what = f"rejected with HTTP {status}"
        signature = f"id_roundtrip:status:{status}:{family}"
    elif obs.errors:
        what = f"answered with a fault ({obs.errors[0][0]})"
        signature = f"id_roundtrip:fault:{obs.errors[0][0]}:{family}"
    elif (
        status is not None
        and _ends_with_results(case)
        and not obs.refused
        and not obs.text.strip()
        and not obs.tool_calls
        and obs.finish_reason != "length"
        and obs.status != "incomplete"
    ):
        what = "accepted but answered with an empty turn"
        signature = f"id_roundtrip:empty:{family}"
    else:
        return
    yield Violation(
        oracle="id_roundtrip",
        message=f"its own call id ({family}) sent back with the tool result: {what}",
        evidence=f"echoed {echoed[:4]}; {_what_came_back(obs)}",
        signature=signature,
    )
