"""Cases that start from captured real sessions (``fuzz --seed-sessions``) and mutate them.

A seed is a request a real client sent (a proxy's session, a ``session.json``, JSONL). The
mutations are what real clients do differently: rewrite the server's call ids under a client
ID policy, drop a call but keep its result (an orphan), drop a result, leave ``tools`` out,
ask for another ``tool_choice``, and the request surface's dimensions. The api and stream are
the mode's: a seed sent on the other api keeps its history and loses its api's own fields.
Every mutation is a draw whose simplest value is "no change", so a failure shrinks back toward
the recorded request itself.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    ForeignItem,
    Item,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.plan import Policy
from agentfuzz.request.policies import rewrite_calls
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._surface import surface_fields

__all__ = ["fits", "seeded"]


def fits(case: Case, api: Api) -> bool:
    """Whether a seed can be sent on ``api``: its own, or any history with nothing in the
    other api's wire form (foreign items and tools are sent as they came)."""
    history = case.history
    foreign = any(isinstance(item, ForeignItem) for item in history.items)
    return case.api == api or not (history.foreign_tools or foreign)


def _on(case: Case, api: Api, stream: bool) -> Case:
    """``case`` sent on ``api`` with ``stream``: on another api without its fields and forms,
    and with no provenance (its history is no longer sure to be the server's own)."""
    options = case.options
    if case.api != api:
        options = options.model_copy(update={"fields": {}, "forms": ()})
    return case.model_copy(
        update={"api": api, "stream": stream, "options": options, "session": None}
    )


def _rewritten(items: tuple[Item, ...], policy: Policy) -> tuple[Item, ...]:
    """Every call id under a client ID ``policy``, its results following it."""
    renamed: dict[str, str] = {}
    out: list[Item] = []
    index = 0
    for item in items:
        if isinstance(item, AssistantMessage) and item.tool_calls:
            calls = rewrite_calls(policy, item.tool_calls, index)
            index += len(calls)
            renamed |= {old.id: new.id for old, new in zip(item.tool_calls, calls, strict=True)}
            item = item.model_copy(update={"tool_calls": calls})
        elif isinstance(item, ToolResult) and item.call_id in renamed:
            item = item.model_copy(update={"call_id": renamed[item.call_id]})
        out.append(item)
    return tuple(out)


def _without_call(items: tuple[Item, ...], k: int) -> tuple[Item, ...]:
    """The ``k``-th call (cyclically) taken out of its message; its result stays, orphaned."""
    where = [
        (i, j)
        for i, it in enumerate(items)
        if isinstance(it, AssistantMessage)
        for j in range(len(it.tool_calls))
    ]
    if not where:
        return items
    i, j = where[k % len(where)]
    message = items[i]
    assert isinstance(message, AssistantMessage)
    calls = message.tool_calls[:j] + message.tool_calls[j + 1 :]
    if not calls and not message.text:
        return items[:i] + items[i + 1 :]
    return (*items[:i], message.model_copy(update={"tool_calls": calls}), *items[i + 1 :])


def _without_result(items: tuple[Item, ...], k: int) -> tuple[Item, ...]:
    """The ``k``-th tool result (cyclically) left out: its call goes unanswered."""
    where = [i for i, it in enumerate(items) if isinstance(it, ToolResult)]
    if not where:
        return items
    i = where[k % len(where)]
    return items[:i] + items[i + 1 :]


# The policies that rewrite ids; dropping calls, results and tools are mutations of their own.
_ID_POLICIES: tuple[Policy, ...] = ("sanitize", "remint", "renumber-native")


@st.composite
def _mutated(
    draw: st.DrawFn, seeds: tuple[Case, ...], profile: Profile, api: Api, stream: bool
) -> Case:
    case = _on(draw(st.sampled_from(seeds)), api, stream)
    items = case.history.items
    if draw(st.booleans()):
        # Cut after an earlier user message: where the session stood a few requests before.
        users = [i for i, it in enumerate(items) if isinstance(it, UserMessage) and i > 0]
        if users:
            items = items[: users[draw(st.integers(0, len(users) - 1))] + 1]
    policies = [p for p in _ID_POLICIES if p in profile.session_policies]
    policy = draw(st.sampled_from((None, *policies)))
    if policy is not None:
        items = _rewritten(items, policy)
    if profile.dropped_calls and draw(st.booleans()):
        items = _without_call(items, draw(st.integers(0, 63)))
    if profile.orphan_results and draw(st.booleans()):
        items = _without_result(items, draw(st.integers(0, 63)))
    options = case.options
    tools = case.history.tools
    if draw(st.booleans()) and tools:
        choice = draw(st.sampled_from(("omit", *profile.tool_choices)))
        if choice == "omit":
            options = options.model_copy(update={"include_tools": False, "tool_choice": None})
        else:
            named = tools[draw(st.integers(0, len(tools) - 1))].flat_name
            picked = named if choice == "named" else choice
            options = options.model_copy(update={"include_tools": True, "tool_choice": picked})
    forms: list[str] = []
    fields = surface_fields(draw, profile, api, stream, tools, forms)
    if fields or forms:
        update = {"fields": options.fields | fields, "forms": options.forms or tuple(forms)}
        options = options.model_copy(update=update)
    history = case.history.model_copy(update={"items": items})
    return case.model_copy(update={"history": history, "options": options})


def _prefix(shorter: Case, longer: Case) -> bool:
    a, b = shorter.history, longer.history
    return a.tools == b.tools and a.items == b.items[: len(a.items)] and a != b


def _longest(seeds: tuple[Case, ...]) -> tuple[Case, ...]:
    """The seeds no other seed continues (a session's earlier requests are prefixes of its
    last: the ``cut`` mutation gives them back), longest first."""
    kept: list[Case] = []
    for seed in seeds:
        if seed not in kept and not any(_prefix(seed, other) for other in seeds):
            kept.append(seed)
    return tuple(sorted(kept, key=lambda s: -s.history.size))


def seeded(
    seeds: tuple[Case, ...], profile: Profile, api: Api, stream: bool
) -> SearchStrategy[Case]:
    """Mutations of the ``seeds`` that fit ``api`` (``fits``), sent with ``stream``; nothing
    when none fits. Shrinks toward a seed as it was recorded, the longest first."""
    usable = _longest(tuple(s for s in seeds if fits(s, api)))
    return _mutated(usable, profile, api, stream) if usable else st.nothing()
