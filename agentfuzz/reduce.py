"""Structural reduction: remove turns, items, calls and tools from a failing case while it fails.

Hypothesis shrinks the choices that *generated* a case; that is powerful but can stall when an
earlier draw (the tool list) shapes later ones. This pass works on the history itself, so it
also applies to histories Hypothesis never generated. Every candidate is well formed: a removed
call takes its tool results with it, and the history still ends where the server must speak.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from agentfuzz.history import (
    AssistantMessage,
    Case,
    Item,
    Options,
    SystemMessage,
    ToolResult,
    UserMessage,
)

__all__ = ["candidates", "case_size", "reduce_case"]


def _well_formed(case: Case) -> bool:
    items = case.history.items
    # An agent history opens with the user (after any system prompts) and ends where the
    # server must speak.
    opening = next((it for it in items if not isinstance(it, SystemMessage)), None)
    if not isinstance(opening, UserMessage):
        return False
    if not isinstance(items[-1], UserMessage | ToolResult):
        return False
    if not case.history.tools:
        return False
    choice = case.options.tool_choice
    if choice not in (None, "auto", "none", "required"):
        return any(t.flat_name == choice for t in case.history.tools)
    return True


def _with_items(case: Case, items: tuple[Item, ...]) -> Case:
    return case.model_copy(update={"history": case.history.model_copy(update={"items": items})})


def _drop_calls(items: tuple[Item, ...], at: int, call_ids: set[str]) -> tuple[Item, ...]:
    """Items without the results, after position ``at``, answering one of ``call_ids``."""
    return tuple(
        it
        for i, it in enumerate(items)
        if not (i > at and isinstance(it, ToolResult) and it.call_id in call_ids)
    )


def candidates(case: Case) -> Iterator[Case]:
    """Smaller variants of ``case``, biggest cuts first."""
    items = case.history.items
    # Whole turns: from one user message up to the next.
    starts = [i for i, it in enumerate(items) if isinstance(it, UserMessage)] + [len(items)]
    for a, b in itertools.pairwise(starts):
        yield _with_items(case, items[:a] + items[b:])
    # Single items; an assistant message takes the results of its calls with it.
    for i, it in enumerate(items):
        rest = items[:i] + items[i + 1 :]
        if isinstance(it, AssistantMessage) and it.tool_calls:
            rest = _drop_calls(rest, i - 1, {c.id for c in it.tool_calls})
        yield _with_items(case, rest)
    # Single calls out of a parallel group, with their results.
    for i, it in enumerate(items):
        if isinstance(it, AssistantMessage) and len(it.tool_calls) > 1:
            for j, call in enumerate(it.tool_calls):
                fewer = it.model_copy(
                    update={"tool_calls": it.tool_calls[:j] + it.tool_calls[j + 1 :]}
                )
                rest = _drop_calls((*items[:i], fewer, *items[i + 1 :]), i, {call.id})
                yield _with_items(case, rest)
    # Assistant text and reasoning beside calls: each becomes its own wire item on Responses.
    for i, it in enumerate(items):
        if (
            isinstance(it, AssistantMessage)
            and it.tool_calls
            and (it.text, it.reasoning) != (None, None)
        ):
            bare = it.model_copy(update={"text": None, "reasoning": None})
            yield _with_items(case, (*items[:i], bare, *items[i + 1 :]))
    # Tools nobody refers to.
    used = {c.flat_name for c in case.history.calls} | {str(case.options.tool_choice)}
    tools = case.history.tools
    for i, tool in enumerate(tools):
        if tool.flat_name not in used:
            history = case.history.model_copy(update={"tools": tools[:i] + tools[i + 1 :]})
            yield case.model_copy(update={"history": history})
    # Knobs back to their defaults.
    plain = Options(include_tools=case.options.include_tools, tool_choice=case.options.tool_choice)
    if case.options != plain:
        yield case.model_copy(update={"options": plain})


def case_size(case: Case) -> tuple[int, int, int]:
    """How big a repro is, smallest first: items, calls and tools; then the assistant texts
    and reasoning that become wire items of their own; then the JSON length."""
    history = case.history
    extras = sum(
        (it.text is not None) + (it.reasoning is not None)
        for it in history.items
        if isinstance(it, AssistantMessage)
    )
    return (
        history.size + len(history.tools),
        extras,
        len(case.model_dump_json(exclude_defaults=True)),
    )


def reduce_case(case: Case, fails: Callable[[Case], bool], budget: int = 200) -> Case:
    """The smallest case found from ``case`` for which ``fails`` still holds.

    Greedy: take the first smaller candidate that fails and start over, until none does or
    ``budget`` calls to ``fails`` are spent.
    """
    spent = 0
    improved = True
    while improved and spent < budget:
        improved = False
        for candidate in candidates(case):
            if not _well_formed(candidate) or case_size(candidate) >= case_size(case):
                continue
            spent += 1
            if fails(candidate):
                case, improved = candidate, True
                break
            if spent >= budget:
                break
    return case
