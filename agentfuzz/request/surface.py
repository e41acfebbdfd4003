"""The request surface: every optional part of a request, named as a generator dimension.

A dimension is one thing a client may put in a request or leave out (a ``stop`` list, a token
budget, a response format…). The strategies draw each from ``strategies._surface``; this module
only names them, says which api carries them, and reads back which ones a case used, so a run
can count how the target answered each (the coverage table). Knobs older than this catalogue
(``tool_choice``, ``seed``/``temperature``, leaving ``tools`` out) are dimensions too.
"""

from __future__ import annotations

from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    ForeignItem,
    ReasoningItem,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from agentfuzz.request._dimensions import CATALOGUE, Dimension
from agentfuzz.request._values import Fields, with_the_request
from agentfuzz.request.ids import recognize

__all__ = [
    "DEFAULT_DIMENSIONS",
    "DIMENSIONS",
    "FILLER",
    "FORMS",
    "HISTORY_DIMENSIONS",
    "KNOBS",
    "MALFORMED",
    "PLAIN",
    "Dimension",
    "Fields",
    "applies",
    "features",
    "used",
    "with_the_request",
    "without",
]

# The knobs the ``knob`` oracle holds an answer to (its signatures are ``knob:<name>…``); a
# profile's ``knobs`` names those its target claims to honour.
KNOBS = (
    "n",
    "stop",
    "budget",
    "include_usage",
    "parallel_tool_calls",
    "logprobs",
    "response_format",
    "max_tool_calls",
)

# The row of the coverage table for requests that used no dimension at all.
PLAIN = "plain"

# How a body can go out broken, plainest first (``dialects._malformed`` breaks it): JSON cut
# short, not JSON, nothing, the right object in an array, a huge number, nesting deep enough to
# break a recursive parser; then JSON objects of the wrong shape.
MALFORMED = (
    "truncated",
    "not_json",
    "empty",
    "array",
    "huge_number",
    "deep_nesting",
    "no_model",
    "items_object",
    "items_number",
    "tools_string",
)


# How messages may be spelled (``dialects._forms`` writes them), plainest first: text as an
# array of parts, an assistant turn with calls and ``content`` "" or left out, a ``name`` on
# user messages, an assistant turn without calls that says ``tool_calls: []`` or ``null`` (what
# real clients send after a turn with no calls), a lone Responses user message as a bare
# ``input`` string; then a part no server reads as text added to the last user message.
FORMS: dict[Api, tuple[str, ...]] = {
    "chat": (
        "parts",
        "content_empty",
        "content_absent",
        "names",
        "calls_empty",
        "calls_null",
        "image_part",
        "unknown_part",
        "untyped_part",
    ),
    "responses": ("parts", "input_string", "image_part", "unknown_part", "untyped_part"),
}


DIMENSIONS: dict[str, Dimension] = {d.name: d for d in CATALOGUE}
# The dimensions drawn onto the history (``strategies._foreign``) rather than as fields.
HISTORY_DIMENSIONS = (
    "strict_tools",
    "custom_tools",
    "hosted_tools",
    "legacy_functions",
    "long_text",
)
# The sentence ``long_text`` pads a message with, over and over (how ``used`` tells it).
FILLER = "This sentence is here to make the message long. "
DEFAULT_DIMENSIONS: tuple[str, ...] = tuple(d.name for d in CATALOGUE if not d.extension)
_BY_FIELD = {(api, f): d.name for d in CATALOGUE for api in d.apis for f in d.fields}
# The order ``used`` names dimensions in: the older knobs, the catalogue, each way of breaking.
_ORDER = (
    "tool_choice",
    "tools_omitted",
    "sampling",
    *DIMENSIONS,
    *(f"message_forms:{form}" for form in dict.fromkeys(FORMS["chat"] + FORMS["responses"])),
    "custom_tools:history",
    "hosted_tools:history",
    "legacy_functions:history",
    *(f"malformed:{kind}" for kind in MALFORMED),
)


def applies(name: str, api: Api, stream: bool = True) -> bool:
    """Whether dimension ``name`` exists on ``api`` (and in that stream mode) at all."""
    dimension = DIMENSIONS[name]
    return api in dimension.apis and (stream or not dimension.streaming)


def _spells(form: str, case: Case) -> bool:
    """Whether a message form changes anything in ``case``'s body (a bare ``input`` string
    needs one user message; an empty or absent content needs a call without text; an empty or
    null ``tool_calls`` needs an assistant turn without calls)."""
    items = case.history.items
    if form == "input_string":
        return len(items) == 1 and isinstance(items[0], UserMessage)
    if form in ("content_empty", "content_absent"):
        return any(
            isinstance(i, AssistantMessage) and i.tool_calls and i.text is None for i in items
        )
    if form in ("calls_empty", "calls_null"):
        return any(isinstance(i, AssistantMessage) and not i.tool_calls for i in items)
    return True


def _foreign(case: Case) -> set[str]:
    """Rows for the tools that are not functions and the history entries agentfuzz does not
    model: ``custom_tools``, ``hosted_tools:<type>``, and ``…:history`` for a past call."""
    # Declarations count when they went out: not when the request left its tools out.
    sent = case.options.include_tools and case.options.fields.get("tools") is None
    found = {
        "custom_tools" if t.get("type") == "custom" else f"hosted_tools:{t.get('type')}"
        for t in (case.history.foreign_tools if sent else ())
    }
    for item in case.history.items:
        if isinstance(item, ForeignItem):
            body = item.body
            kind = str(body.get("type") or body.get("role"))
            if "function_call" in body or kind == "function":
                found.add("legacy_functions:history")
            elif kind.startswith("custom") or kind in ("assistant", "tool"):
                found.add("custom_tools:history")
            else:
                found.add("hosted_tools:history")
    if sent and any(t.strict for t in case.history.tools):
        found.add("strict_tools")
    if any(isinstance(i, UserMessage) and FILLER in i.text for i in case.history.items):
        found.add("long_text")
    return found


def used(case: Case) -> tuple[str, ...]:
    """The dimensions ``case`` uses, in catalogue order; ``(PLAIN,)`` when it uses none.

    A wire field no dimension names (one a captured request carried) counts under its own name.
    """
    opts = case.options
    found: set[str] = set()
    if opts.max_tokens is not None:
        found.add("budget")
    if opts.seed is not None or opts.temperature is not None:
        found.add("sampling")
    if not opts.include_tools and case.history.tools:
        found.add("tools_omitted")
    elif opts.tool_choice is not None and case.history.tools:
        found.add("tool_choice")
    for field in opts.fields:
        found.add(_BY_FIELD.get((case.api, field), field))
    found.update(f"message_forms:{form}" for form in opts.forms if _spells(form, case))
    found.update(_foreign(case))
    if opts.malformed is not None:
        found.add(f"malformed:{opts.malformed}")
    known = [name for name in _ORDER if name in found]
    return (*known, *sorted(found - set(known))) or (PLAIN,)


def without(case: Case, dimension: str) -> Case | None:
    """``case`` with ``dimension`` taken out and all else kept, or None where it cannot be (a
    foreign history entry or declaration is the history itself)."""
    opts = case.options
    update: dict[str, object] = {}
    if dimension == "budget":
        update["max_tokens"] = None
    elif dimension == "sampling":
        update.update(seed=None, temperature=None)
    elif dimension == "tools_omitted":
        update["include_tools"] = True
    elif dimension == "tool_choice":
        update["tool_choice"] = None
    elif dimension.startswith("message_forms:"):
        update["forms"] = tuple(f for f in opts.forms if f != dimension.partition(":")[2])
    elif dimension.startswith("malformed:"):
        update["malformed"] = None
    else:
        kept = {
            f: v for f, v in opts.fields.items() if _BY_FIELD.get((case.api, f), f) != dimension
        }
        update["fields"] = kept
    smaller = case.model_copy(update={"options": opts.model_copy(update=update)})
    return None if dimension in used(smaller) else smaller


# The family of the ids the reducer renames calls to (``call_N``): a call id of another family
# left in a reduced repro is one the failure needs.
_PLAIN_IDS = recognize("call_0")


def features(case: Case) -> tuple[str, ...]:
    """What ``case`` is made of, as names a signature can carry: the dimensions it uses
    (``used``, without ``plain``), ``tools`` when it sends function declarations, the kinds of
    history entry it holds beyond a user message (``history:results``, ``history:orphan_result``,
    ``history:parallel_calls``…) and the shapes of its call ids other than the plain ``call_N``
    (``ids:kimi_native``). Of a reduced repro, these are what the reducer could not remove:
    what the failure needs."""
    found = [d for d in used(case) if d != PLAIN]
    history = case.history
    if history.tools and case.options.include_tools and "tools" not in case.options.fields:
        found.append("tools")
    kinds: set[str] = set()
    answered = {c.id for c in history.calls}
    for item in history.items:
        if isinstance(item, SystemMessage):
            kinds.add("history:system")
        elif isinstance(item, ReasoningItem):
            kinds.add("history:reasoning")
        elif isinstance(item, ToolResult):
            kinds.add("history:results" if item.call_id in answered else "history:orphan_result")
        elif isinstance(item, AssistantMessage):
            if item.reasoning:
                kinds.add("history:reasoning")
            if len(item.tool_calls) > 1:
                kinds.add("history:parallel_calls")
            elif item.tool_calls:
                kinds.add("history:calls")
            if item.text or not item.tool_calls:
                kinds.add("history:assistant_text")
    shapes = {recognize(c.id) or "unknown" for c in history.calls} - {_PLAIN_IDS}
    return (*found, *sorted(kinds), *sorted(f"ids:{s}" for s in shapes))
