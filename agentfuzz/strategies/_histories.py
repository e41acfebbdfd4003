"""Agent histories: turns of user message, assistant tool calls and their results.

Turns and calls are drawn with ``st.lists`` so the shrinker deletes them the way it deletes
list elements. Call ids depend on a call index counted over the whole history, so the
element strategies share one ``_Ledger`` created afresh for every example: elements of a
list are drawn in order, which keeps that count (and the set of ids used) deterministic.

Every choice costs: Hypothesis's generation, replay and shrinking all grow with the number of
choices an example takes. So each piece takes as few as it can, always the same ones whatever
its values (the shrinker can then change one without shifting the choices after it):

- a turn: its user message (text, an opening system or developer message, template and
  tool: one choice) and its shape (one
  integer: the lower half is a lone user message, the upper half an assistant reply whose
  extras are the bits set); an assistant reply adds one seed, from which the ID family, its
  texts and any orphan id come, and its list of calls;
- a call: its mutation and tool (one choice, plain first) and one seed, from which the id,
  the argument values and the tool's output come.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    History,
    Item,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.request import ids
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._texts import (
    FOLLOW_UPS,
    MARKUP_OUTPUTS,
    MARKUP_TEMPLATES,
    PREAMBLES,
    SYSTEM_TEXTS,
    TEXT_VARIANTS,
    USER_TEMPLATES,
)
from agentfuzz.strategies._tools import (
    VIOLATIONS,
    derived_text,
    render_arguments,
    tools,
)

__all__ = ["MARKUP_TEMPLATES", "histories", "history_items"]

# Extras of an assistant reply, one bit each (lowest bit first), when the profile allows them.
_ORPHAN, _TEXT, _REASONING, _CLOSING, _REASONING_ITEM, _REASONING_ID = (
    "orphan",
    "text",
    "reasoning",
    "closing",
    "reasoning_item",
    "reasoning_id",
)


@dataclass
class _Ledger:
    """What one history has drawn so far: the next call index and the ids handed out."""

    tools: tuple[Tool, ...]
    family: str | None = None
    next_index: int = 0
    used: list[str] = field(default_factory=list)  # call ids and orphan result ids
    call_ids: list[str] = field(default_factory=list)

    def take_index(self) -> int:
        self.next_index += 1
        return self.next_index - 1

    def fresh_id(self, family: str, name: str, seed: int) -> str:
        """A new id of ``family``; a repeat of a random shape would be an unasked-for
        duplicate, so it moves on to the next seeds (no draw) until the id is new."""
        index = self.take_index()
        new_id = ids.format_id(family, name, index, ids.entropy(seed))
        if family not in ids.REPEATING:
            for bump in range(1, 8):
                if new_id not in self.used:
                    break
                new_id = ids.format_id(family, name, index, ids.entropy(seed + bump))
            assume(new_id not in self.used)
        self.used.append(new_id)
        return new_id


_LEDGER: ContextVar[_Ledger] = ContextVar("agentfuzz_ledger")
"""The ledger of the history being drawn, so turn and call strategies are built once per plan
rather than once per draw (set by ``history_items`` around its draw)."""


@lru_cache(maxsize=64)
def _indexes(size: int) -> SearchStrategy[int]:
    return st.integers(0, size - 1)


def _mutations(profile: Profile) -> tuple[str, ...]:
    """What may happen to one call, plainest first; at most one per call."""
    kinds = ["required", "full"]
    if profile.dropped_calls:
        kinds.append("dropped")
    if profile.duplicate_ids:
        kinds.append("duplicate")
    if profile.adversarial:
        kinds.append("adversarial")
    if profile.schema_violating_arguments:
        kinds += VIOLATIONS
    if profile.malformed_arguments:
        kinds.append("malformed")
    return tuple(kinds)


def _extras(profile: Profile, api: Api) -> tuple[str, ...]:
    flags = [_ORPHAN] if profile.orphan_results else []
    flags.append(_TEXT)
    if profile.reasoning:
        flags.append(_REASONING)
    flags.append(_CLOSING)
    if profile.reasoning and api == "responses":
        flags += [_REASONING_ITEM, _REASONING_ID]
    return tuple(flags)


class _Plan:
    """The strategies one (profile, api) combination draws from, built once."""

    def __init__(self, profile: Profile, api: Api) -> None:
        self.profile = profile
        self.extras = _extras(profile, api)
        # Twice the range of the extras: the lower half is a turn without an assistant reply.
        self.shape = _indexes(2 << len(self.extras))
        self.mutations = _mutations(profile)
        self.templates = USER_TEMPLATES + (MARKUP_TEMPLATES if profile.markup_texts else ())
        self.preambles = PREAMBLES if profile.system_messages else PREAMBLES[:1]
        self.strata = profile.family_strata
        self.calls = st.lists(_call(self), max_size=profile.max_parallel_calls)
        self.turns = st.lists(_turn(self), min_size=1, max_size=profile.max_turns)
        # The agent loop's last reply (``looped``): its extras one choice, one call or more.
        self.replies = _indexes(1 << len(self.extras))
        self.some_calls = st.lists(
            _call(self), min_size=1, max_size=max(1, profile.max_parallel_calls)
        )


_PLANS: dict[tuple[int, Api], tuple[Profile, _Plan]] = {}


def _plan(profile: Profile, api: Api) -> _Plan:
    # Profiles hold a dict, so they do not hash: key on identity, and keep the profile alive.
    hit = _PLANS.get((id(profile), api))
    if hit is None or hit[0] is not profile:
        if len(_PLANS) >= 256:
            _PLANS.clear()
        hit = _PLANS[(id(profile), api)] = (profile, _Plan(profile, api))
    return hit[1]


@st.composite
def _call(draw: st.DrawFn, plan: _Plan) -> tuple[ToolCall, bool, int]:
    """A call, whether its result is dropped, and its seed (for the result's output)."""
    ledger = _LEDGER.get()
    profile = plan.profile
    tools = ledger.tools
    # Mutation and tool in one choice, the tool varying fastest: 0 is a plain call to tool 0.
    pick = draw(_indexes(len(plan.mutations) * len(tools)))
    mutation, tool = plan.mutations[pick // len(tools)], tools[pick % len(tools)]
    seed = draw(ids.SEEDS)
    if mutation == "duplicate" and ledger.call_ids:
        call_id = ledger.call_ids[seed % len(ledger.call_ids)]
    else:
        family = ledger.family
        assert family is not None
        if mutation == "adversarial":
            family = profile.adversarial[seed % len(profile.adversarial)]
        call_id = ledger.fresh_id(family, tool.flat_name, seed)
    ledger.call_ids.append(call_id)
    kind = mutation if mutation in (*VIOLATIONS, "malformed", "full") else "required"
    call = ToolCall(
        id=call_id,
        name=tool.name,
        namespace=tool.namespace,
        arguments=render_arguments(tool, kind, seed),
    )
    return call, mutation == "dropped", seed


def _reasoning_id(seed: int) -> str:
    return "rs_" + ids.entropy(seed)[:16].hex()


def _ask(draw: st.DrawFn, plan: _Plan, tools: tuple[Tool, ...]) -> tuple[list[Item], Tool]:
    """A turn's opening: the user's message (after a system message where drawn), and the tool
    it names. Text, preamble, template and tool are one choice, the tool varying fastest: 0 is
    "Use <tool 0>." with nothing before it."""
    profile = plan.profile
    templates, preambles = plan.templates, plan.preambles
    user = draw(_indexes(TEXT_VARIANTS * len(preambles) * len(templates) * len(tools)))
    variant, rest = divmod(user, len(templates) * len(tools))
    variant, preamble = divmod(variant, len(preambles))
    template = templates[rest // len(tools)]
    tool = tools[rest % len(tools)]
    other = tools[(rest + 1) % len(tools)]
    text = derived_text(variant, 0, profile.max_text_size)
    message = template.format(tool=tool.flat_name, other=other.flat_name, text=text)
    items: list[Item] = [UserMessage(text=message)]
    role = preambles[preamble]
    if role is not None:
        system = SYSTEM_TEXTS[variant % len(SYSTEM_TEXTS)]
        if not profile.markup_texts and "<" in system:
            system = SYSTEM_TEXTS[0]
        items.insert(0, SystemMessage(text=system, role=role))
    return items, tool


@st.composite
def _turn(draw: st.DrawFn, plan: _Plan) -> list[Item]:
    ledger = _LEDGER.get()
    items, tool = _ask(draw, plan, ledger.tools)
    shape = draw(plan.shape)
    if shape < (1 << len(plan.extras)):
        return items
    return items + _reply(draw, plan, ledger, shape, tool, plan.calls)


def _reply(
    draw: st.DrawFn,
    plan: _Plan,
    ledger: _Ledger,
    shape: int,
    tool: Tool,
    calls: SearchStrategy[list[tuple[ToolCall, bool, int]]],
    stratum: int | None = None,
) -> list[Item]:
    """An assistant reply whose extras are the bits of ``shape`` set, its calls drawn from
    ``calls``, and their results; an orphan result answers a call to ``tool``. Its ids take a
    family of the id shape ``stratum`` names (an index into the profile's strata) where given
    and the profile lets a turn take a family of its own, else of one the seed draws."""
    profile = plan.profile
    extras = {flag for bit, flag in enumerate(plan.extras) if shape >> bit & 1}
    seed = draw(ids.SEEDS)
    size = profile.max_text_size
    if profile.mix_families or ledger.family is None:
        # A shape first, then a family of it (one seed: the shrinker reaches the first family).
        strata = plan.strata if stratum is None else plan.strata[stratum : stratum + 1]
        families = strata[seed % len(strata)]
        ledger.family = families[seed // len(strata) % len(families)]
    items: list[Item] = []
    if _REASONING_ITEM in extras:
        item_id = _reasoning_id(seed) if _REASONING_ID in extras else None
        items.append(ReasoningItem(text=derived_text(seed, 1, size), id=item_id))
    drawn = draw(calls)
    made = tuple(call for call, _, _ in drawn)
    items.append(
        AssistantMessage(
            text=derived_text(seed, 2, size) if _TEXT in extras else None,
            reasoning=derived_text(seed, 3, size) if _REASONING in extras else None,
            tool_calls=made,
        )
    )
    for call, dropped, call_seed in drawn:
        if not dropped:
            output = derived_text(call_seed, 4, size)
            if profile.markup_texts and call_seed % 8 == 7:
                output = MARKUP_OUTPUTS[call_seed // 8 % len(MARKUP_OUTPUTS)]
            items.append(ToolResult(call_id=call.id, output=output))
    if _ORPHAN in extras:
        family = ledger.family
        if family in ids.REPEATING:
            family = "openai_chat"
        # The orphan takes a call index of its own, as if its call had been cut from the history.
        orphan = ledger.fresh_id(family, tool.flat_name, seed)
        items.append(ToolResult(call_id=orphan, output=derived_text(seed, 5, size)))
    if made and _CLOSING in extras:
        # The assistant's closing answer after its tools returned; dropped on the last turn.
        items.append(AssistantMessage(text=derived_text(seed, 6, size)))
    return items


def _ends_open(items: list[Item]) -> list[Item]:
    """Trim trailing assistant output so the server, not the history, speaks next."""
    while not isinstance(items[-1], UserMessage | ToolResult):
        items.pop()
    return items


def _follow_up(
    draw: st.DrawFn, profile: Profile, tools: tuple[Tool, ...], items: list[Item]
) -> list[Item]:
    """``items``, and half the time when they end on a tool result, the user's next ask (one
    tool or two named): the request an agent loop sends once its tools have answered, where a
    server must write a new call after the ids it already saw. The ask is a turn of its own,
    so only where ``max_turns`` leaves room for one. Shrinks toward no ask."""
    turns = sum(isinstance(i, UserMessage) for i in items)
    if not isinstance(items[-1], ToolResult) or turns >= profile.max_turns:
        return items
    if not draw(st.booleans()):
        return items
    pick = draw(_indexes(len(FOLLOW_UPS) * len(tools)))
    template, tool = FOLLOW_UPS[pick // len(tools)], pick % len(tools)
    other = tools[(tool + 1) % len(tools)]
    text = template.format(tool=tools[tool].flat_name, other=other.flat_name)
    return [*items, UserMessage(text=text)]


def _draw_items(draw: st.DrawFn, profile: Profile, api: Api, tools: tuple[Tool, ...]) -> list[Item]:
    token = _LEDGER.set(_Ledger(tools=tools))
    try:
        turns = draw(_plan(profile, api).turns)
    finally:
        _LEDGER.reset(token)
    return _follow_up(draw, profile, tools, _ends_open([item for turn in turns for item in turn]))


@st.composite
def history_items(
    draw: st.DrawFn, profile: Profile, api: Api, tools: tuple[Tool, ...]
) -> tuple[Item, ...]:
    """The conversation items of a history over ``tools``, ending on a user message or a tool
    result; shrinks toward fewer turns, fewer calls, no mutations and the plainest ID family.
    """
    return tuple(_draw_items(draw, profile, api, tools))


@st.composite
def _histories(
    draw: st.DrawFn, profile: Profile, api: Api, declarations: SearchStrategy[tuple[Tool, ...]]
) -> History:
    declared = draw(declarations)
    return History(tools=declared, items=tuple(_draw_items(draw, profile, api, declared)))


def histories(profile: Profile, api: Api, least: int = 1) -> SearchStrategy[History]:
    """Declared tools (``least`` or more, within the profile's) plus a multi-turn agent
    history the server must answer next.

    Shrinks toward one plain tool and a single user message naming it.
    """
    return _histories(profile, api, tools(profile, api, least))
