"""Structural reduction: remove turns, items, calls and tools from a failing case while it fails.

Hypothesis shrinks the choices that *generated* a case; that is powerful but can stall when an
earlier draw (the tool list) shapes later ones. This pass works on the history itself, so it
also applies to histories Hypothesis never generated (a captured 40-turn session).

Three stages, each keeping the case failing: delta debugging over whole turns, then over items
(an assistant message goes with the results of its calls), both cutting big chunks first so a
long session costs a few dozen tries rather than hundreds; then greedy single steps: one item,
one call of a parallel group, assistant text beside calls, unused tools, each tool that is
not a function, the related request, request knobs (``tool_choice`` too), each surface field
(and each entry of a list-valued one), a body broken in a plainer way, and simplifications
(texts and tool outputs emptied, arguments ``{}``, call ids renamed ``call_N``).
Every candidate is well formed: it opens with the user and ends where the server must speak. A
removed call takes its results with it; a result left orphaned only by removing it alone. A
puppet script (``puppet.scripted``) is never removed: it is what the model writes, not a field
the server reads, and without it the request asks another question (a repro had lost it and
blamed the server for markup its unscripted model wrote).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    ForeignItem,
    Item,
    Options,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from agentfuzz.puppet.scripted import FIELD as SCRIPT
from agentfuzz.request.surface import FORMS, MALFORMED

__all__ = ["candidates", "case_size", "reduce_case", "renamed", "well_formed", "with_items"]


def well_formed(case: Case) -> bool:
    """Opens with the user (unless chained onto a stored answer) and ends where the server must
    speak; a named tool_choice names a declared tool."""
    items = case.history.items
    # An agent history opens with the user (after any system prompts) and ends where the
    # server must speak.
    # (A request chained onto a stored answer goes on from it: it may open with a result.)
    opening = next((it for it in items if not isinstance(it, SystemMessage)), None)
    chained = "previous_response_id" in case.options.fields
    if not isinstance(opening, UserMessage) and not (chained and opening is not None):
        return False
    # (A foreign entry may end it too: a hosted tool's past call, a custom tool's output.)
    if not isinstance(items[-1], UserMessage | ToolResult | ForeignItem):
        return False
    choice = case.options.tool_choice
    if choice not in (None, "auto", "none", "required"):
        return any(t.flat_name == choice for t in case.history.tools)
    return True


def with_items(case: Case, items: Sequence[Item]) -> Case:
    """``case`` with its history's items replaced by ``items``."""
    return case.model_copy(
        update={"history": case.history.model_copy(update={"items": tuple(items)})}
    )


def _drop_calls(items: tuple[Item, ...], at: int, call_ids: set[str]) -> tuple[Item, ...]:
    """Items without the results, after position ``at``, answering one of ``call_ids``."""
    return tuple(
        it
        for i, it in enumerate(items)
        if not (i > at and isinstance(it, ToolResult) and it.call_id in call_ids)
    )


def candidates(case: Case) -> Iterator[Case]:
    """Smaller variants of ``case``, biggest cuts first."""
    yield from _fewer_items(case)
    yield from _fewer_tools(case)
    # The related request, when the failure does not lie between the two.
    if case.relation is not None:
        yield case.model_copy(update={"relation": None})
    yield from _plainer_options(case)
    yield from _simpler(case)


def _fewer_items(case: Case) -> Iterator[Case]:
    """The history cut down: whole turns, single items, single calls, bare calls."""
    items = case.history.items
    # Whole turns: from one user message up to the next.
    starts = [i for i, it in enumerate(items) if isinstance(it, UserMessage)] + [len(items)]
    for a, b in itertools.pairwise(starts):
        yield with_items(case, items[:a] + items[b:])
    # Single items; an assistant message takes the results of its calls with it.
    for i, it in enumerate(items):
        rest = items[:i] + items[i + 1 :]
        if isinstance(it, AssistantMessage) and it.tool_calls:
            rest = _drop_calls(rest, i - 1, {c.id for c in it.tool_calls})
        yield with_items(case, rest)
    # Single calls out of a parallel group, with their results.
    for i, it in enumerate(items):
        if isinstance(it, AssistantMessage) and len(it.tool_calls) > 1:
            for j, call in enumerate(it.tool_calls):
                fewer = it.model_copy(
                    update={"tool_calls": it.tool_calls[:j] + it.tool_calls[j + 1 :]}
                )
                rest = _drop_calls((*items[:i], fewer, *items[i + 1 :]), i, {call.id})
                yield with_items(case, rest)
    # Assistant text and reasoning beside calls: each becomes its own wire item on Responses.
    for i, it in enumerate(items):
        if (
            isinstance(it, AssistantMessage)
            and it.tool_calls
            and (it.text, it.reasoning) != (None, None)
        ):
            bare = it.model_copy(update={"text": None, "reasoning": None})
            yield with_items(case, (*items[:i], bare, *items[i + 1 :]))


def _fewer_tools(case: Case) -> Iterator[Case]:
    """Without each declared tool nobody refers to, then without each foreign tool."""
    used = {c.flat_name for c in case.history.calls} | {str(case.options.tool_choice)}
    tools = case.history.tools
    for i, tool in enumerate(tools):
        if tool.flat_name not in used:
            history = case.history.model_copy(update={"tools": tools[:i] + tools[i + 1 :]})
            yield case.model_copy(update={"history": history})
    foreign = case.history.foreign_tools
    for i in range(len(foreign)):
        history = case.history.model_copy(update={"foreign_tools": foreign[:i] + foreign[i + 1 :]})
        yield case.model_copy(update={"history": history})


def _plainer_options(case: Case) -> Iterator[Case]:
    """Knobs back to their defaults, all at once, then the surface's fields one at a time."""
    opts = case.options
    if opts.malformed is not None:
        yield case.model_copy(update={"options": opts.model_copy(update={"malformed": None})})
        # A body broken in a plainer way (JSON cut short before not JSON at all).
        for kind in _plainer(opts.malformed):
            plainer = opts.model_copy(update={"malformed": kind})
            yield case.model_copy(update={"options": plainer})
    plain = Options(
        include_tools=opts.include_tools,
        tool_choice=opts.tool_choice,
        malformed=opts.malformed,
        fields={k: v for k, v in opts.fields.items() if k == SCRIPT},
    )
    if opts != plain:
        yield case.model_copy(update={"options": plain})
    # Then each knob alone (a fault may need a form or field that resetting all drops).
    for knob in ("tool_choice", "max_tokens", "seed", "temperature"):
        if getattr(opts, knob) is not None:
            yield case.model_copy(update={"options": opts.model_copy(update={knob: None})})
    yield from _fewer_fields(case)
    for form in opts.forms:
        kept = tuple(f for f in opts.forms if f != form)
        yield case.model_copy(update={"options": opts.model_copy(update={"forms": kept})})
        # Or spelled in a plainer form instead (an image part's list as text parts alone).
        forms = FORMS[case.api]
        for simple in forms[: forms.index(form)] if form in forms else ():
            if simple not in kept:
                swapped = tuple(simple if f == form else f for f in opts.forms)
                yield case.model_copy(
                    update={"options": opts.model_copy(update={"forms": swapped})}
                )


def _fewer_fields(case: Case) -> Iterator[Case]:
    """Without each surface field; a list-valued one (``stop``, ``include``) one entry shorter."""
    fields = case.options.fields

    def having(changed: dict[str, Any]) -> Case:
        return case.model_copy(
            update={"options": case.options.model_copy(update={"fields": changed})}
        )

    for key, value in fields.items():
        if key == SCRIPT:
            continue  # what the model writes, not a field the server reads: kept
        yield having({k: v for k, v in fields.items() if k != key})
        if isinstance(value, list) and len(value) > 1:
            for i in range(len(value)):
                yield having(fields | {key: value[:i] + value[i + 1 :]})


def _simpler(case: Case) -> Iterator[Case]:
    """Same structure, plainer content: does the failure need these ids, texts, arguments?"""
    items = case.history.items
    calls = case.history.calls
    plain_ids = {c.id: f"call_{k}" for k, c in enumerate(calls)}
    if any(old != new for old, new in plain_ids.items()) and len(plain_ids) == len(calls):
        yield with_items(case, tuple(renamed(it, plain_ids) for it in items))
    for i, it in enumerate(items):
        simpler: Item | None = None
        if isinstance(it, UserMessage | SystemMessage) and it.text:
            simpler = it.model_copy(update={"text": ""})
        elif isinstance(it, ToolResult) and it.output:
            simpler = it.model_copy(update={"output": ""})
        elif isinstance(it, AssistantMessage) and any(c.arguments != "{}" for c in it.tool_calls):
            bare = tuple(c.model_copy(update={"arguments": "{}"}) for c in it.tool_calls)
            simpler = it.model_copy(update={"tool_calls": bare})
        if simpler is not None:
            yield with_items(case, (*items[:i], simpler, *items[i + 1 :]))


def renamed(item: Item, ids: Mapping[str, str]) -> Item:
    """``item`` with its call ids (or the id it answers) renamed as ``ids`` says."""
    if isinstance(item, ToolResult) and item.call_id in ids:
        return item.model_copy(update={"call_id": ids[item.call_id]})
    if isinstance(item, AssistantMessage) and item.tool_calls:
        calls = tuple(
            c.model_copy(update={"id": ids.get(c.id, c.id), "item_id": None})
            for c in item.tool_calls
        )
        return item.model_copy(update={"tool_calls": calls})
    return item


def case_size(case: Case) -> tuple[int, int, int, int, int]:
    """How big a repro is, smallest first: items, calls and tools; then the assistant texts
    and reasoning that become wire items of their own; then how a broken body is broken (none,
    then ``surface.MALFORMED``'s order, plainest first); then the JSON length; then the sum of
    the surface fields' numbers. That last tells ``n: 2`` from ``n: 3`` (and ``max_tokens: 1``
    from ``5``): without it the two tie, and the store keeps whichever failed first, not the
    plainer value Hypothesis shrank to."""
    history = case.history
    extras = sum(
        (it.text is not None) + (it.reasoning is not None)
        for it in history.items
        if isinstance(it, AssistantMessage)
    )
    numbers = sum(
        abs(v)
        for v in case.options.fields.values()
        if isinstance(v, int) and not isinstance(v, bool)
    )
    return (
        history.size + len(history.tools) + len(history.foreign_tools),
        extras,
        len(_plainer(case.options.malformed)) + (case.options.malformed is not None),
        len(case.model_dump_json(exclude_defaults=True)),
        numbers,
    )


def _plainer(broken: str | None) -> tuple[str, ...]:
    """The ways to break a body plainer than ``broken`` (``surface.MALFORMED``'s order)."""
    return MALFORMED[: MALFORMED.index(broken)] if broken in MALFORMED else ()


class _BudgetSpent(Exception):
    """The budget of calls to ``fails`` is used up."""


T = TypeVar("T")


def _ddmin(units: list[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """Zeller's delta debugging, complements only: drop chunks of ``units`` while it fails,
    from halves down to single units."""
    chunks = 2
    while len(units) >= 2:
        size = -(-len(units) // chunks)
        for start in range(0, len(units), size):
            rest = units[:start] + units[start + size :]
            if rest and fails(rest):
                units, chunks = rest, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(units):
                break
            chunks = min(chunks * 2, len(units))
    return units


def _cut_turns(case: Case, fails: Callable[[Case], bool]) -> Case:
    items = case.history.items
    starts = [i for i, it in enumerate(items) if isinstance(it, UserMessage)]
    if len(starts) < 2:
        return case
    prefix = items[: starts[0]]
    turns = [items[a:b] for a, b in itertools.pairwise([*starts, len(items)])]

    def build(kept: list[tuple[Item, ...]]) -> Case:
        return with_items(case, prefix + tuple(itertools.chain.from_iterable(kept)))

    return build(_ddmin(turns, lambda kept: _tried(build(kept), fails)))


def _groups(items: tuple[Item, ...]) -> list[list[int]]:
    """Item positions in removable groups: an assistant message with the results of its calls."""
    owner: dict[int, int] = {}
    for i, it in enumerate(items):
        if isinstance(it, AssistantMessage) and it.tool_calls:
            ids = {c.id for c in it.tool_calls}
            for j in range(i + 1, len(items)):
                answer = items[j]
                if isinstance(answer, ToolResult) and answer.call_id in ids:
                    owner.setdefault(j, i)
    groups: dict[int, list[int]] = {}
    for i in range(len(items)):
        groups.setdefault(owner.get(i, i), []).append(i)
    return [groups[k] for k in sorted(groups)]


def _cut_items(case: Case, fails: Callable[[Case], bool]) -> Case:
    items = case.history.items

    def build(kept: list[list[int]]) -> Case:
        return with_items(case, tuple(items[i] for i in sorted(itertools.chain(*kept))))

    return build(_ddmin(_groups(items), lambda kept: _tried(build(kept), fails)))


def _tried(candidate: Case, fails: Callable[[Case], bool]) -> bool:
    return well_formed(candidate) and fails(candidate)


def reduce_case(case: Case, fails: Callable[[Case], bool], budget: int = 200) -> Case:
    """The smallest case found from ``case`` for which ``fails`` still holds, within ``budget``
    calls to ``fails``: delta debugging over turns, then items, then greedy single steps (take
    the first smaller candidate that fails and start over, until none does)."""
    spent = 0
    best = case

    def counted(candidate: Case) -> bool:
        nonlocal spent, best
        if spent >= budget:
            raise _BudgetSpent
        spent += 1
        failed = fails(candidate)
        if failed and case_size(candidate) < case_size(best):
            best = candidate
        return failed

    try:
        case = _cut_items(_cut_turns(case, counted), counted)
        improved = True
        while improved:
            improved = False
            for candidate in candidates(case):
                if not well_formed(candidate) or case_size(candidate) >= case_size(case):
                    continue
                if counted(candidate):
                    case, improved = candidate, True
                    break
    except _BudgetSpent:
        return best
    return case
