"""Whether a repro is a conversation the API itself would accept, and repairs toward one.

A shrunk repro is smallest, not necessarily valid: an empty user turn, a call nobody answered,
a result whose call is gone. A maintainer who sees such a request dismisses it as malformed
input. So after reduction each repro is repaired toward the API's own rules, one flaw at a time,
and a repair is kept only when the failure still fires; a flaw the failure needs stays, and the
bundle says so in words (``NEEDS``).

The rules, the same for chat completions and Responses except where noted:

- every user message has visible text;
- every call has an id that is not blank, and no two calls share one;
- every call is answered by a tool result (Responses: a ``function_call_output``);
- every result answers a call made before it;
- chat only: the results of an assistant message's calls come right after it, before any
  other message (Responses orders items freely).

A deliberately malformed body (``Options.malformed``) is judged by none of this: breaking the
body is the point of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from agentfuzz.model.history import AssistantMessage, Case, Item, ToolResult, UserMessage
from agentfuzz.reduce.reduction import well_formed, with_items

__all__ = ["NEEDS", "flaws", "repair"]

# What a flaw the failure needs is called in a bundle.
NEEDS: dict[str, str] = {
    "empty_user_text": "a user message with no text",
    "blank_call_id": "a call with a blank id",
    "shared_call_id": "two calls that share one id",
    "call_without_result": "a call with no result",
    "result_without_call": "a tool result whose call is not in the history",
    "result_not_next": "a tool result that does not follow its call (chat requires it)",
}

# What a repair writes where the repro left a blank: plain, and clearly not the trigger.
USER_TEXT = "Please use the tools you have to answer."
RESULT_TEXT = '{"status": "ok"}'


def flaws(case: Case) -> tuple[str, ...]:
    """The rules ``case`` breaks, in ``NEEDS`` order; none for a malformed body."""
    if case.options.malformed is not None:
        return ()
    found = set(_flaws(case))
    return tuple(code for code in NEEDS if code in found)


def _flaws(case: Case) -> Iterator[str]:
    items = case.history.items
    ids = [c.id for c in case.history.calls]
    if any(isinstance(it, UserMessage) and not it.text.strip() for it in items):
        yield "empty_user_text"
    if any(not i.strip() for i in ids):
        yield "blank_call_id"
    if len(set(ids)) < len(ids):
        yield "shared_call_id"
    made: set[str] = set()
    answered: set[str] = set()
    # A Responses request that names a stored answer sends only what is new since it: its
    # results answer calls that answer made, which the request rightly leaves out.
    chained = case.api == "responses" and "previous_response_id" in case.options.fields
    for it in items:
        if isinstance(it, AssistantMessage):
            made |= {c.id for c in it.tool_calls}
        elif isinstance(it, ToolResult):
            if it.call_id not in made and not chained:
                yield "result_without_call"
            answered.add(it.call_id)
    if made - answered:
        yield "call_without_result"
    if case.api == "chat" and not _results_follow(items):
        yield "result_not_next"


def _results_follow(items: tuple[Item, ...]) -> bool:
    """Chat's rule: after an assistant message with calls, their results and nothing else (a
    call with no result at all is ``call_without_result``, not this)."""
    given = {it.call_id for it in items if isinstance(it, ToolResult)}
    waiting: set[str] = set()
    for it in items:
        if isinstance(it, ToolResult):
            if it.call_id in waiting:
                waiting.discard(it.call_id)
            continue
        if waiting:
            return False
        if isinstance(it, AssistantMessage):
            waiting = {c.id for c in it.tool_calls} & given
    return True


def _texts(case: Case) -> Case:
    """Every blank user message says something, and every empty result too."""
    items: list[Item] = []
    for it in case.history.items:
        if isinstance(it, UserMessage) and not it.text.strip():
            it = it.model_copy(update={"text": USER_TEXT})
        elif isinstance(it, ToolResult) and not it.output:
            it = it.model_copy(update={"output": RESULT_TEXT})
        items.append(it)
    return with_items(case, items)


def _answered(case: Case) -> Case:
    """Each call's results right after its assistant message (missing ones made up), and no
    result left that answers no call."""
    items = case.history.items
    results: dict[str, list[ToolResult]] = {}
    for it in items:
        if isinstance(it, ToolResult):
            results.setdefault(it.call_id, []).append(it)
    out: list[Item] = []
    for it in items:
        if isinstance(it, ToolResult):
            continue
        out.append(it)
        if isinstance(it, AssistantMessage):
            for call in it.tool_calls:
                given = results.pop(call.id, None)
                out.extend(given or [ToolResult(call_id=call.id, output=RESULT_TEXT)])
    return with_items(case, out)


def _ids(case: Case) -> Case:
    """Blank or shared call ids made distinct (``call_fix<k>``), their results renamed along."""
    seen: set[str] = set()
    items: list[Item] = []
    renamed: dict[str, str] = {}
    for it in case.history.items:
        if isinstance(it, AssistantMessage) and it.tool_calls:
            calls = []
            for k, call in enumerate(it.tool_calls):
                new = call.id
                if not new.strip() or new in seen:
                    new = f"call_fix{len(seen)}{k}"
                    renamed.setdefault(call.id, new)
                seen.add(new)
                calls.append(call.model_copy(update={"id": new}))
            it = it.model_copy(update={"tool_calls": tuple(calls)})
        elif isinstance(it, ToolResult) and it.call_id in renamed:
            it = it.model_copy(update={"call_id": renamed[it.call_id]})
        items.append(it)
    return with_items(case, items)


# Each repair, and the flaws it takes away.
_REPAIRS: tuple[tuple[Callable[[Case], Case], frozenset[str]], ...] = (
    (_texts, frozenset({"empty_user_text"})),
    (_ids, frozenset({"blank_call_id", "shared_call_id"})),
    (
        _answered,
        frozenset({"call_without_result", "result_without_call", "result_not_next"}),
    ),
)


def repair(case: Case, fails: Callable[[Case], bool]) -> tuple[Case, tuple[str, ...]]:
    """``case`` repaired toward a valid conversation while ``fails`` holds, and the flaws it
    still has: the ones the failure needs. Every repair at once first (one try when the fault
    does not care), then each repair alone. Empty tool outputs are filled too, though the API
    allows them: a result that says something reads as a real one."""
    fixes = [fix for fix, _ in _REPAIRS]
    whole = case
    for fix in fixes:
        whole = fix(whole)
    if whole == case:
        return case, flaws(case)
    if well_formed(whole) and fails(whole):
        return whole, flaws(whole)
    for fix in fixes:
        candidate = fix(case)
        if candidate != case and well_formed(candidate) and fails(candidate):
            case = candidate
    return case, flaws(case)
