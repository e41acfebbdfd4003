"""Relations: pairs of requests whose answers must relate in a way the spec fixes.

A relation takes a generated request (the case) and derives its *partner*: the same request
with one thing changed whose effect on the answer is known. The judge sends the partner right
after the case, and the ``relation`` oracle (``stream_divergence`` for the ``stream`` relation)
judges the two answers together. This module only derives requests: every function is pure,
a ``Case`` in and a ``Case`` out, and the strategies draw ``Case.relation`` from it.

Two kinds, by what the judgement reads:

- ``prompt`` relations compare the prompt's size the server reports (chat
  ``usage.prompt_tokens``, Responses ``usage.input_tokens``). That figure depends on the
  rendered prompt alone, never on what the model writes nor on how the server batches, so a
  difference, or the lack of one, is the server's doing;
- ``greedy`` relations compare what the model wrote, at temperature 0. A GPU server's batch can
  still flip a near-tie token, so the judge sends a disagreeing pair a second time and believes
  the disagreement only when each side repeats its own answer.

``prepare`` makes a drawn case fit its relation (a greedy one asks for temperature 0, a prompt
one on a chat stream asks for the usage chunk, ``special_token`` puts a special token in the
last user message); it returns None where the relation cannot apply at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    Item,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from agentfuzz.request.surface import FILLER

__all__ = [
    "EXTRA_RESULT",
    "EXTRA_SYSTEM",
    "RELATIONS",
    "SPECIAL_TOKENS",
    "Relation",
    "near_miss",
    "partner",
    "prepared",
    "special_count",
]

Kind = Literal["prompt", "greedy"]

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

# Special tokens of the chat-template families, each four or more tokens long when it is read
# as text (so reading it as one control token saves at least three). Tokens that some
# tokenizers keep as ordinary vocabulary (``<tool_call>``, ``<think>``) are left out: reading
# those as one token is how such a model spells them, not a control token.
SPECIAL_TOKENS = (
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|begin_of_text|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|im_middle|>",
    "<|channel|>",
    "<|message|>",
    "<|start|>",
    "<|end|>",
    "<|return|>",
    "[TOOL_CALLS]",
    "[INST]",
    "[/INST]",
    "<start_of_turn>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
    "<｜tool▁calls▁begin｜>",
)
# Longest first, so a spelling inside a longer one is never counted twice.
_BY_LENGTH = tuple(sorted(SPECIAL_TOKENS, key=len, reverse=True))


def near_miss(token: str) -> str:
    """``token`` with its second-to-last character taken out (``<|im_end>``): the same text to
    a tokenizer that reads it as text, give or take one token, and no special token at all."""
    return token[:-2] + token[-1]


def _users(case: Case) -> list[UserMessage]:
    return [i for i in case.history.items if isinstance(i, UserMessage)]


def special_count(case: Case) -> int:
    """How many special-token spellings the case's user messages hold."""
    return sum(_count(m.text) for m in _users(case))


def _count(text: str) -> int:
    found = 0
    for token in _BY_LENGTH:
        found += text.count(token)
        text = text.replace(token, "\0")
    return found


def _miss_all(text: str) -> str:
    for token in _BY_LENGTH:
        text = text.replace(token, near_miss(token))
    return text


@dataclass(frozen=True)
class Relation:
    """One relation: what it holds of two answers (``about``), which kind of figure it reads,
    how a case is made to fit it and how its partner is derived."""

    name: str
    kind: Kind
    about: str
    fit: Callable[[Case, int], Case | None]
    derive: Callable[[Case], Case]
    ready: Callable[[Case], bool]


def _fields(case: Case, update: dict[str, Any], drop: tuple[str, ...] = ()) -> Case:
    fields = {k: v for k, v in case.options.fields.items() if k not in drop} | update
    return case.model_copy(update={"options": case.options.model_copy(update={"fields": fields})})


def _items(case: Case, items: list[Item]) -> Case:
    history = case.history.model_copy(update={"items": tuple(items)})
    return case.model_copy(update={"history": history})


def _usable(case: Case) -> bool:
    """Whether a pair built on ``case`` can be judged at all: its body goes out whole."""
    return case.options.malformed is None


def _usage_shown(case: Case) -> bool:
    """Whether the answer to ``case`` reports its usage: a chat stream only when it asks for
    the usage chunk."""
    if case.api != "chat" or not case.stream:
        return True
    options = case.options.fields.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _prompt_ready(case: Case) -> bool:
    """A prompt relation's preconditions: the usage figure comes back, and the server has no
    leave to cut the prompt (Responses ``truncation: auto``, a text padded to the context
    limit), which could make two different prompts the same size."""
    if not _usable(case) or not _usage_shown(case):
        return False
    if case.options.fields.get("truncation") == "auto":
        return False
    return not any(FILLER in m.text for m in _users(case))


def _with_usage(case: Case) -> Case | None:
    """``case`` made fit for a prompt relation, or None when it cannot be."""
    if not _usable(case) or case.options.fields.get("truncation") == "auto":
        return None
    if any(FILLER in m.text for m in _users(case)):
        return None
    if _usage_shown(case):
        return case
    given = case.options.fields.get("stream_options")
    options = (given if isinstance(given, dict) else {}) | {"include_usage": True}
    return _fields(case, {"stream_options": options})


def greedy(case: Case) -> bool:
    """Whether ``case`` asks for greedy sampling (temperature 0)."""
    temperature = case.options.temperature
    return temperature is not None and temperature == 0


def _greedy_ready(case: Case) -> bool:
    return _usable(case) and greedy(case)


def _with_greedy(case: Case) -> Case | None:
    if not _usable(case):
        return None
    if greedy(case):
        return case
    return case.model_copy(update={"options": case.options.model_copy(update={"temperature": 0.0})})


def _functions_sent(case: Case) -> bool:
    """Whether the request declares functions: tools included, not replaced by ``tools: []``."""
    options = case.options
    return bool(case.history.tools) and options.include_tools and options.fields.get("tools") != []


def _choice_given(case: Case) -> bool:
    return case.options.tool_choice is not None or "tool_choice" in case.options.fields


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
    return _fields(case.model_copy(update={"options": options}), {}, _TOOL_FIELDS)


def _tools_ready(case: Case) -> bool:
    return _prompt_ready(case) and _functions_sent(case)


def _fit_tools(case: Case, _: int) -> Case | None:
    return _with_usage(case) if _functions_sent(case) else None


def _with_system(case: Case) -> Case:
    items = list(case.history.items)
    first = items[0] if items else None
    if isinstance(first, SystemMessage):
        items[0] = first.model_copy(update={"text": f"{EXTRA_SYSTEM}\n\n{first.text}"})
    else:
        items.insert(0, SystemMessage(text=EXTRA_SYSTEM))
    return _items(case, items)


def _has_user(case: Case) -> bool:
    return bool(_users(case))


def _system_ready(case: Case) -> bool:
    return _prompt_ready(case) and _has_user(case)


def _fit_system(case: Case, _: int) -> Case | None:
    return _with_usage(case) if _has_user(case) else None


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
    return _items(case, items)


def _result_ready(case: Case) -> bool:
    return _prompt_ready(case) and _paired_result(case) is not None


def _fit_result(case: Case, _: int) -> Case | None:
    return _with_usage(case) if _paired_result(case) is not None else None


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
    return _prompt_ready(case) and _has_text(case) and not set(forms) & set(_PART_FORMS)


def _fit_part(case: Case, _: int) -> Case | None:
    if set(case.options.forms) & set(_PART_FORMS) or not _has_text(case):
        return None
    return _with_usage(case)


def _missed(case: Case) -> Case:
    items = [
        i.model_copy(update={"text": _miss_all(i.text)}) if isinstance(i, UserMessage) else i
        for i in case.history.items
    ]
    return _items(case, items)


def _special_ready(case: Case) -> bool:
    return _prompt_ready(case) and special_count(case) > 0


def _fit_special(case: Case, pick: int) -> Case | None:
    users = [at for at, i in enumerate(case.history.items) if isinstance(i, UserMessage)]
    if not users:
        return None
    if special_count(case) == 0:
        items = list(case.history.items)
        last = items[users[-1]]
        assert isinstance(last, UserMessage)
        token = SPECIAL_TOKENS[pick % len(SPECIAL_TOKENS)]
        items[users[-1]] = last.model_copy(update={"text": f"{last.text} {token}".lstrip()})
        case = _items(case, items)
    return _with_usage(case)


def _auto_toggled(case: Case) -> Case:
    choice = "auto" if not _choice_given(case) else None
    return case.model_copy(
        update={"options": case.options.model_copy(update={"tool_choice": choice})}
    )


def _auto_ready(case: Case) -> bool:
    options = case.options
    unforced = "tool_choice" not in options.fields and options.tool_choice in (None, "auto")
    return _greedy_ready(case) and _functions_sent(case) and unforced


def _fit_auto(case: Case, _: int) -> Case | None:
    options = case.options
    if not _functions_sent(case) or "tool_choice" in options.fields:
        return None
    if options.tool_choice not in (None, "auto"):
        return None
    return _with_greedy(case)


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
    options = case.options
    unforced = "tool_choice" not in options.fields and options.tool_choice in (None, "auto")
    return _greedy_ready(case) and _functions_sent(case) and unforced and _two_named(case)


def _fit_required(case: Case, _: int) -> Case | None:
    options = case.options
    tools = [t for t in case.history.tools if t.flat_name]
    if not _functions_sent(case) or len({t.flat_name for t in tools}) < 2:
        return None
    if "tool_choice" in options.fields or options.tool_choice not in (None, "auto"):
        return None
    if not _two_named(case):
        items = list(case.history.items)
        ask = UserMessage(text=f"Use {tools[0].flat_name} and {tools[1].flat_name}.")
        if items and isinstance(items[-1], UserMessage):
            items[-1] = ask
        else:
            items.append(ask)
        case = _items(case, items)
        if not _two_named(case):
            return None  # one name holds the other: the ask cannot name two apart
    return _with_greedy(case)


def _flipped(case: Case) -> Case:
    flipped = case.model_copy(update={"stream": not case.stream})
    if flipped.stream:
        return flipped
    # What only a stream means (the usage chunk) goes: servers refuse it on a plain request.
    return _fields(flipped, {}, ("stream_options",))


def _fit_stream(case: Case, _: int) -> Case | None:
    return _with_greedy(case)


def _context(case: Case) -> tuple[Item, ...]:
    """The conversation a request chained onto its session's own last answer stands for, when
    the session vouches for it (``Provenance.context``); empty otherwise."""
    if case.api != "responses" or not case.options.fields.get("previous_response_id"):
        return ()
    return case.session.context if case.session is not None else ()


def _chain_ready(case: Case) -> bool:
    return _prompt_ready(case) and bool(_context(case)) and not case.options.forms


def _fit_chain(case: Case, _: int) -> Case | None:
    return _with_usage(case) if _context(case) else None


def _unchained(case: Case) -> Case:
    """The same conversation sent whole: the stored context written out before the request's
    own items, and no ``previous_response_id``. Its own instructions and tools stay: by the
    spec those of the stored answer are not carried over."""
    whole = _items(case, [*_context(case), *case.history.items])
    session = case.session.model_copy(update={"context": ()}) if case.session else None
    return _fields(whole, {}, ("previous_response_id",)).model_copy(update={"session": session})


_CATALOGUE = (
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
        _greedy_ready,
    ),
)

RELATIONS: dict[str, Relation] = {r.name: r for r in _CATALOGUE}


def prepared(name: str, case: Case, pick: int = 0) -> Case | None:
    """``case`` made fit for relation ``name`` (``pick`` chooses among the ways there are, a
    special token for ``special_token``), with ``Case.relation`` set; None when it cannot be."""
    fitted = RELATIONS[name].fit(case, pick)
    if fitted is None or not RELATIONS[name].ready(fitted):
        return None
    return fitted.model_copy(update={"relation": name})


def partner(name: str, case: Case) -> Case | None:
    """The request relation ``name`` pairs with ``case``, or None when ``case`` does not meet
    the relation's preconditions (then there is nothing to judge). The partner carries no
    relation of its own."""
    relation = RELATIONS.get(name)
    if relation is None or not relation.ready(case):
        return None
    return relation.derive(case).model_copy(update={"relation": None})
