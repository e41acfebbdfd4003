"""What every relation is built from: the ``Relation`` record, the edits a partner is made
with, and the preconditions shared by a kind (a prompt relation needs the usage figure back, a
greedy one needs temperature 0). ``relations`` is the public face over this module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentfuzz.model.history import Case, Item, UserMessage
from agentfuzz.request.surface import FILLER

Kind = Literal["prompt", "greedy"]


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


def users(case: Case) -> list[UserMessage]:
    return [i for i in case.history.items if isinstance(i, UserMessage)]


def with_fields(case: Case, update: dict[str, Any], drop: tuple[str, ...] = ()) -> Case:
    """``case`` with its extra body fields updated by ``update``, those named in ``drop`` gone."""
    fields = {k: v for k, v in case.options.fields.items() if k not in drop} | update
    return case.model_copy(update={"options": case.options.model_copy(update={"fields": fields})})


def with_items(case: Case, items: list[Item]) -> Case:
    """``case`` with its history's items replaced by ``items``."""
    history = case.history.model_copy(update={"items": tuple(items)})
    return case.model_copy(update={"history": history})


def usable(case: Case) -> bool:
    """Whether a pair built on ``case`` can be judged at all: its body goes out whole."""
    return case.options.malformed is None


def _usage_shown(case: Case) -> bool:
    """Whether the answer to ``case`` reports its usage: a chat stream only when it asks for
    the usage chunk."""
    if case.api != "chat" or not case.stream:
        return True
    options = case.options.fields.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def prompt_ready(case: Case) -> bool:
    """A prompt relation's preconditions: the usage figure comes back, and the server has no
    leave to cut the prompt (Responses ``truncation: auto``, a text padded to the context
    limit), which could make two different prompts the same size."""
    if not usable(case) or not _usage_shown(case):
        return False
    if case.options.fields.get("truncation") == "auto":
        return False
    return not any(FILLER in m.text for m in users(case))


def with_usage(case: Case) -> Case | None:
    """``case`` made fit for a prompt relation, or None when it cannot be."""
    if not usable(case) or case.options.fields.get("truncation") == "auto":
        return None
    if any(FILLER in m.text for m in users(case)):
        return None
    if _usage_shown(case):
        return case
    given = case.options.fields.get("stream_options")
    options = (given if isinstance(given, dict) else {}) | {"include_usage": True}
    return with_fields(case, {"stream_options": options})


def greedy(case: Case) -> bool:
    """Whether ``case`` asks for greedy sampling (temperature 0)."""
    temperature = case.options.temperature
    return temperature is not None and temperature == 0


def greedy_ready(case: Case) -> bool:
    """A greedy relation's preconditions: the body goes out whole, at temperature 0."""
    return usable(case) and greedy(case)


def with_greedy(case: Case) -> Case | None:
    """``case`` made fit for a greedy relation (temperature 0), or None when it cannot be."""
    if not usable(case):
        return None
    if greedy(case):
        return case
    return case.model_copy(update={"options": case.options.model_copy(update={"temperature": 0.0})})


def functions_sent(case: Case) -> bool:
    """Whether the request declares functions: tools included, not replaced by ``tools: []``."""
    options = case.options
    return bool(case.history.tools) and options.include_tools and options.fields.get("tools") != []


def choice_given(case: Case) -> bool:
    """Whether the request says a tool choice, as an option or as a raw field."""
    return case.options.tool_choice is not None or "tool_choice" in case.options.fields
