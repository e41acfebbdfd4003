"""Agent histories: turns of user message, assistant tool calls and their results.

Turns and calls are drawn with ``st.lists`` so the shrinker deletes them the way it deletes
list elements. Call ids depend on a call index counted over the whole history, so the
element strategies share one ``_Ledger`` created afresh for every example: elements of a
list are drawn in order, which keeps that count (and the set of ids used) deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz import ids
from agentfuzz.history import (
    Api,
    AssistantMessage,
    History,
    Item,
    ReasoningItem,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.profiles import Profile
from agentfuzz.strategies._tools import arguments, texts, tools

__all__ = ["histories", "history_items"]

_USER_TEMPLATES = (
    "Use {tool}.",
    "Please call {tool} now.",
    "{text}",
    "Use {tool}, then answer: {text}",
    "Call {tool} twice if needed. {text}",
)


@dataclass
class _Ledger:
    """What one history has drawn so far: the next call index and the ids handed out."""

    family: str | None = None
    next_index: int = 0
    used: list[str] = field(default_factory=list)  # call ids and orphan result ids
    call_ids: list[str] = field(default_factory=list)

    def take_index(self) -> int:
        self.next_index += 1
        return self.next_index - 1


@st.composite
def _fresh_id(draw: st.DrawFn, ledger: _Ledger, family: str, name: str) -> str:
    strategy = ids.id_strategy(family, name, ledger.take_index())
    new_id = draw(strategy)
    # A repeat of a random shape would be an unasked-for duplicate id: redraw, as
    # ``.filter`` would, without building a filtered strategy on every call.
    for _ in range(3):
        if family in ids.REPEATING or new_id not in ledger.used:
            break
        new_id = draw(strategy)
    assume(family in ids.REPEATING or new_id not in ledger.used)
    ledger.used.append(new_id)
    return new_id


@st.composite
def _orphan_id(draw: st.DrawFn, ledger: _Ledger, name: str) -> str:
    """An id in the turn's family that no call has; constant-id families borrow openai_chat."""
    family = ledger.family
    if family is None or family in ids.REPEATING:
        family = "openai_chat"
    # The orphan takes a call index of its own, as if its call had been cut from the history.
    return draw(_fresh_id(ledger, family, name))


@st.composite
def _call(draw: st.DrawFn, ledger: _Ledger, profile: Profile, tools: tuple[Tool, ...]) -> ToolCall:
    tool = draw(st.sampled_from(tools))
    family = ledger.family
    assert family is not None
    if len(profile.adversarial) > 0 and draw(st.booleans()):
        family = draw(st.sampled_from(profile.adversarial))
    if profile.duplicate_ids and ledger.call_ids and draw(st.booleans()):
        call_id = draw(st.sampled_from(ledger.call_ids))
    else:
        call_id = draw(_fresh_id(ledger, family, tool.flat_name))
    ledger.call_ids.append(call_id)
    return ToolCall(
        id=call_id,
        name=tool.name,
        namespace=tool.namespace,
        arguments=draw(arguments(tool, profile)),
    )


@lru_cache(maxsize=64)
def _optional_text(max_size: int) -> SearchStrategy[str | None]:
    return st.none() | texts(max_size)


_REASONING_ID = st.none() | st.text("0123456789abcdef", min_size=32, max_size=32).map(
    lambda h: "rs_" + h
)
_TEMPLATES = st.sampled_from(_USER_TEMPLATES)


@st.composite
def _turn(
    draw: st.DrawFn, ledger: _Ledger, profile: Profile, api: Api, tools: tuple[Tool, ...]
) -> list[Item]:
    if profile.mix_families or ledger.family is None:
        ledger.family = draw(st.sampled_from(profile.weighted_families))
    text = draw(texts(profile.max_text_size))
    tool = draw(st.sampled_from(tools))
    template = draw(_TEMPLATES)
    items: list[Item] = [UserMessage(text=template.format(tool=tool.flat_name, text=text))]
    if not draw(st.booleans()):
        return items
    if profile.reasoning and api == "responses" and draw(st.booleans()):
        items.append(ReasoningItem(text=draw(texts(profile.max_text_size)), id=draw(_REASONING_ID)))
    calls = draw(
        st.lists(_call(ledger, profile, tools), max_size=profile.max_parallel_calls).map(tuple)
    )
    reasoning = draw(_optional_text(profile.max_text_size)) if profile.reasoning else None
    items.append(
        AssistantMessage(
            text=draw(_optional_text(profile.max_text_size)), reasoning=reasoning, tool_calls=calls
        )
    )
    output = texts(profile.max_text_size)
    for call in calls:
        if profile.dropped_calls and draw(st.booleans()):
            continue
        items.append(ToolResult(call_id=call.id, output=draw(output)))
    if profile.orphan_results and draw(st.booleans()):
        orphan = draw(_orphan_id(ledger, tool.flat_name))
        items.append(ToolResult(call_id=orphan, output=draw(output)))
    if len(calls) > 0 and draw(st.booleans()):
        # The assistant's closing answer after its tools returned; dropped on the last turn.
        items.append(AssistantMessage(text=draw(texts(profile.max_text_size))))
    return items


def _ends_open(items: list[Item]) -> list[Item]:
    """Trim trailing assistant output so the server, not the history, speaks next."""
    while not isinstance(items[-1], UserMessage | ToolResult):
        items.pop()
    return items


@st.composite
def history_items(
    draw: st.DrawFn, profile: Profile, api: Api, tools: tuple[Tool, ...]
) -> tuple[Item, ...]:
    """The conversation items of a history over ``tools``, ending on a user message or a tool
    result; shrinks toward fewer turns, fewer calls, no mutations and the plainest ID family.
    """
    ledger = _Ledger()
    turns = draw(
        st.lists(_turn(ledger, profile, api, tools), min_size=1, max_size=profile.max_turns)
    )
    return tuple(_ends_open([item for turn in turns for item in turn]))


@st.composite
def _histories(
    draw: st.DrawFn, profile: Profile, api: Api, declarations: SearchStrategy[tuple[Tool, ...]]
) -> History:
    declared = draw(declarations)
    return History(tools=declared, items=draw(history_items(profile, api, declared)))


def histories(profile: Profile, api: Api) -> SearchStrategy[History]:
    """Declared tools plus a multi-turn agent history the server must answer next.

    Shrinks toward one plain tool and a single user message naming it.
    """
    return _histories(profile, api, tools(profile, api))
