"""The ``prompt`` relations: each pairs a request with one whose prompt must be larger, or of
the same size, as the server counts it (``usage.prompt_tokens``, ``usage.input_tokens``)."""

from __future__ import annotations

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    Item,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from agentfuzz.request._pairing import (
    Relation,
    functions_sent,
    prompt_ready,
    users,
    with_fields,
    with_items,
    with_usage,
)
from agentfuzz.request._special_tokens import SPECIAL_TOKENS, miss_all, special_count

# A system prompt long enough to outweigh any default one a chat template puts in its place
# (the with-system side must grow whatever the template did without one).
EXTRA_SYSTEM = (
    "You are a careful assistant working for a small team. Answer every question briefly, "
    "use the tools you are given when they help, and say so plainly when you cannot help. "
    "Never invent a tool result; quote the tool's own words when you report one. Keep lists "
    "short, name units, and prefer plain sentences to tables. " * 2
).strip()

# What a tool result grows by: plain words, so every tokenizer counts them as more tokens.
EXTRA_RESULT = " ".join(f"row {n}: the value stayed within its usual range." for n in range(12))

# The fields that only mean something beside declared tools.
_TOOL_FIELDS = (
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "functions",
    "function_call",
    "max_tool_calls",
)


def _without_tools(case: Case) -> Case:
    options = case.options.model_copy(update={"include_tools": False, "tool_choice": None})
    return with_fields(case.model_copy(update={"options": options}), {}, _TOOL_FIELDS)


def _tools_ready(case: Case) -> bool:
    return prompt_ready(case) and functions_sent(case)


def _fit_tools(case: Case, _: int) -> Case | None:
    return with_usage(case) if functions_sent(case) else None


def _with_system(case: Case) -> Case:
    items = list(case.history.items)
    first = items[0] if items else None
    if isinstance(first, SystemMessage):
        items[0] = first.model_copy(update={"text": f"{EXTRA_SYSTEM}\n\n{first.text}"})
    else:
        items.insert(0, SystemMessage(text=EXTRA_SYSTEM))
    return with_items(case, items)


def _has_user(case: Case) -> bool:
    return bool(users(case))


def _system_ready(case: Case) -> bool:
    return prompt_ready(case) and _has_user(case)


def _fit_system(case: Case, _: int) -> Case | None:
    return with_usage(case) if _has_user(case) else None


def _paired_result(case: Case) -> int | None:
    """The position of the last tool result that answers exactly one call of the history
    under an id no other result or call shares: the one result every server must render."""
    items = case.history.items
    calls = [c.id for c in case.history.calls]
    results = [i.call_id for i in items if isinstance(i, ToolResult)]
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if not isinstance(item, ToolResult) or not item.call_id.strip():
            continue
        if calls.count(item.call_id) == 1 and results.count(item.call_id) == 1:
            return at
    return None


def _longer_result(case: Case) -> Case:
    at = _paired_result(case)
    assert at is not None
    items = list(case.history.items)
    result = items[at]
    assert isinstance(result, ToolResult)
    items[at] = result.model_copy(update={"output": f"{result.output} {EXTRA_RESULT}"})
    return with_items(case, items)


def _result_ready(case: Case) -> bool:
    return prompt_ready(case) and _paired_result(case) is not None


def _fit_result(case: Case, _: int) -> Case | None:
    return with_usage(case) if _paired_result(case) is not None else None


# Forms that add a part beside the text, or turn a lone message into a bare string: with any of
# them, text as a string and as one part are no longer the only difference.
_PART_FORMS = ("image_part", "unknown_part", "untyped_part", "input_string")


def _has_text(case: Case) -> bool:
    for item in case.history.items:
        if isinstance(item, UserMessage | SystemMessage) and item.text.strip():
            return True
        if isinstance(item, AssistantMessage) and (item.text or "").strip():
            return True
    return False


def _parts_toggled(case: Case) -> Case:
    forms = case.options.forms
    toggled = tuple(f for f in forms if f != "parts") if "parts" in forms else (*forms, "parts")
    return case.model_copy(update={"options": case.options.model_copy(update={"forms": toggled})})


def _part_ready(case: Case) -> bool:
    forms = case.options.forms
    return prompt_ready(case) and _has_text(case) and not set(forms) & set(_PART_FORMS)


def _fit_part(case: Case, _: int) -> Case | None:
    if set(case.options.forms) & set(_PART_FORMS) or not _has_text(case):
        return None
    return with_usage(case)


def _missed(case: Case) -> Case:
    items = [
        i.model_copy(update={"text": miss_all(i.text)}) if isinstance(i, UserMessage) else i
        for i in case.history.items
    ]
    return with_items(case, items)


def _special_ready(case: Case) -> bool:
    return prompt_ready(case) and special_count(case) > 0


def _fit_special(case: Case, pick: int) -> Case | None:
    at_users = [at for at, i in enumerate(case.history.items) if isinstance(i, UserMessage)]
    if not at_users:
        return None
    if special_count(case) == 0:
        items = list(case.history.items)
        last = items[at_users[-1]]
        assert isinstance(last, UserMessage)
        token = SPECIAL_TOKENS[pick % len(SPECIAL_TOKENS)]
        items[at_users[-1]] = last.model_copy(update={"text": f"{last.text} {token}".lstrip()})
        case = with_items(case, items)
    return with_usage(case)


def _context(case: Case) -> tuple[Item, ...]:
    """The conversation a request chained onto its session's own last answer stands for, when
    the session vouches for it (``Provenance.context``); empty otherwise."""
    if case.api != "responses" or not case.options.fields.get("previous_response_id"):
        return ()
    return case.session.context if case.session is not None else ()


def _chain_ready(case: Case) -> bool:
    return prompt_ready(case) and bool(_context(case)) and not case.options.forms


def _fit_chain(case: Case, _: int) -> Case | None:
    return with_usage(case) if _context(case) else None


def _unchained(case: Case) -> Case:
    """The same conversation sent whole: the stored context written out before the request's
    own items, and no ``previous_response_id``. Its own instructions and tools stay: by the
    spec those of the stored answer are not carried over."""
    whole = with_items(case, [*_context(case), *case.history.items])
    session = case.session.model_copy(update={"context": ()}) if case.session else None
    return with_fields(whole, {}, ("previous_response_id",)).model_copy(update={"session": session})


PROMPT_RELATIONS = (
    Relation(
        "tools",
        "prompt",
        "the same request without its tools: the prompt's size must differ",
        _fit_tools,
        _without_tools,
        _tools_ready,
    ),
    Relation(
        "system",
        "prompt",
        "the same request with a long system message first: the prompt must grow",
        _fit_system,
        _with_system,
        _system_ready,
    ),
    Relation(
        "tool_result",
        "prompt",
        "the same request with one tool result made longer: the prompt must grow",
        _fit_result,
        _longer_result,
        _result_ready,
    ),
    Relation(
        "text_part",
        "prompt",
        "the same request with text as one text part instead of a string (or back): the "
        "prompt's size must not change",
        _fit_part,
        _parts_toggled,
        _part_ready,
    ),
    Relation(
        "special_token",
        "prompt",
        "the same request with each special token in user text misspelt by one character: "
        "the real spelling must not cost fewer tokens than its near miss",
        _fit_special,
        _missed,
        _special_ready,
    ),
    Relation(
        "chain",
        "prompt",
        "a request chained onto the session's own last answer (previous_response_id) vs the "
        "same conversation sent whole: the prompt's size must not change",
        _fit_chain,
        _unchained,
        _chain_ready,
    ),
)
