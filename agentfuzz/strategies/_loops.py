"""The agent loop going on: after a history, one more assistant reply with calls, their
results, and the user's next ask (``strategies._options`` draws it as a case's skeleton)."""

from __future__ import annotations

from typing import Literal

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, History, ToolResult, UserMessage
from agentfuzz.request import ids
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._histories import _LEDGER, _indexes, _Ledger, _plan, _reply
from agentfuzz.strategies._texts import FOLLOW_UPS
from agentfuzz.strategies._tools import another_tool

__all__ = ["Ending", "looped", "loops"]

Ending = Literal["next_ask", "next_ask_two"]
"""How ``looped`` ends a history: the user's next ask naming one tool, or two."""


def loops(profile: Profile, history: History) -> bool:
    """Whether ``looped`` may end ``history``: the profile allows calls, and one more turn."""
    turns = sum(isinstance(i, UserMessage) for i in history.items)
    return profile.max_parallel_calls > 0 and turns < profile.max_turns


def _ledger_after(profile: Profile, history: History) -> _Ledger:
    """A ledger that goes on counting where ``history``'s calls (and orphans) left off, in
    their family when the profile keeps one family per history."""
    calls = [c.id for c in history.calls]
    results = [i.call_id for i in history.items if isinstance(i, ToolResult)]
    orphans = [r for r in results if r not in calls]
    family = None if profile.mix_families or not calls else ids.recognize(calls[-1])
    return _Ledger(
        tools=history.tools,
        family=family if family in profile.id_families else None,
        next_index=len(calls) + len(orphans),
        used=calls + orphans,
        call_ids=calls,
    )


@st.composite
def _looped(
    draw: st.DrawFn,
    profile: Profile,
    api: Api,
    history: History,
    ending: Ending,
    stratum: int | None,
) -> History:
    plan = _plan(profile, api)
    two = ending == "next_ask_two" and (len(history.tools) > 1 or profile.max_tools > 1)
    if two and len(history.tools) == 1:
        # Two tools to name: the agent also has a plain second one (where the profile allows).
        history = history.model_copy(
            update={"tools": (*history.tools, another_tool(history.tools))}
        )
    tools = history.tools
    ledger = _ledger_after(profile, history)
    token = _LEDGER.set(ledger)
    try:
        shape = draw(plan.replies)
        reply = _reply(draw, plan, ledger, shape, tools[0], plan.some_calls, stratum)
    finally:
        _LEDGER.reset(token)
    tool = draw(_indexes(len(tools)))
    other = tools[(tool + 1) % len(tools)]
    template = FOLLOW_UPS[1 if two else 0]
    ask = UserMessage(text=template.format(tool=tools[tool].flat_name, other=other.flat_name))
    return history.model_copy(update={"items": (*history.items, *reply, ask)})


def looped(
    profile: Profile, api: Api, history: History, ending: Ending, stratum: int | None = None
) -> SearchStrategy[History]:
    """``history`` as an agent loop goes on: an assistant reply with one call or more, their
    results, and the user's next ask as ``ending`` says. That request is where a server writes
    a new call after ids it already saw (seeds 000, 001 and 004 live there), and with two tools
    named, where a server that calls each named tool answers with parallel calls (seed 000's
    index gap). The reply's ids are of the id shape ``stratum`` (an index into the profile's
    ``family_strata``) where the profile mixes families or the history has no call to go on
    from. Needs ``loops(profile, history)``; the reply counts calls on from the history's, so
    its ids are new ones."""
    if not loops(profile, history) or not history.tools:
        raise ValueError("looped needs a declared tool, calls allowed and a turn to spare")
    return _looped(profile, api, history, ending, stratum)
