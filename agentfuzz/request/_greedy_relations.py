"""The ``greedy`` relations: each pairs a request at temperature 0 with one whose answer, as
the model writes it, must be the same kind of turn (or hold no fewer tool calls)."""

from __future__ import annotations

from agentfuzz.model.history import Case, UserMessage
from agentfuzz.request._pairing import (
    Relation,
    choice_given,
    functions_sent,
    greedy_ready,
    with_fields,
    with_greedy,
    with_items,
)


def _unforced(case: Case) -> bool:
    """Whether no tool choice forces the answer: none given, or ``auto`` as an option."""
    options = case.options
    return "tool_choice" not in options.fields and options.tool_choice in (None, "auto")


def _auto_toggled(case: Case) -> Case:
    choice = "auto" if not choice_given(case) else None
    return case.model_copy(
        update={"options": case.options.model_copy(update={"tool_choice": choice})}
    )


def _auto_ready(case: Case) -> bool:
    return greedy_ready(case) and functions_sent(case) and _unforced(case)


def _fit_auto(case: Case, _: int) -> Case | None:
    if not functions_sent(case) or not _unforced(case):
        return None
    return with_greedy(case)


def _two_named(case: Case) -> bool:
    """Whether the last item is a user message that names two declared tools."""
    items = case.history.items
    if not items or not isinstance(items[-1], UserMessage):
        return False
    names = {t.flat_name for t in case.history.tools}
    return sum(1 for name in names if name and name in items[-1].text) >= 2


def _required(case: Case) -> Case:
    return case.model_copy(
        update={"options": case.options.model_copy(update={"tool_choice": "required"})}
    )


def _required_ready(case: Case) -> bool:
    return greedy_ready(case) and functions_sent(case) and _unforced(case) and _two_named(case)


def _fit_required(case: Case, _: int) -> Case | None:
    tools = [t for t in case.history.tools if t.flat_name]
    if not functions_sent(case) or len({t.flat_name for t in tools}) < 2:
        return None
    if not _unforced(case):
        return None
    if not _two_named(case):
        items = list(case.history.items)
        ask = UserMessage(text=f"Use {tools[0].flat_name} and {tools[1].flat_name}.")
        if items and isinstance(items[-1], UserMessage):
            items[-1] = ask
        else:
            items.append(ask)
        case = with_items(case, items)
        if not _two_named(case):
            return None  # one name holds the other: the ask cannot name two apart
    return with_greedy(case)


def _flipped(case: Case) -> Case:
    flipped = case.model_copy(update={"stream": not case.stream})
    if flipped.stream:
        return flipped
    # What only a stream means (the usage chunk) goes: servers refuse it on a plain request.
    return with_fields(flipped, {}, ("stream_options",))


def _fit_stream(case: Case, _: int) -> Case | None:
    return with_greedy(case)


GREEDY_RELATIONS = (
    Relation(
        "choice_auto",
        "greedy",
        'tool_choice left out vs "auto" beside tools: the same kind of answer',
        _fit_auto,
        _auto_toggled,
        _auto_ready,
    ),
    Relation(
        "required_calls",
        "greedy",
        'tool_choice "required" vs "auto" on a message asking for two tools: no fewer calls',
        _fit_required,
        _required,
        _required_ready,
    ),
    Relation(
        "stream",
        "greedy",
        "the same request with stream flipped: the same turn as a client sees it",
        _fit_stream,
        _flipped,
        greedy_ready,
    ),
)
