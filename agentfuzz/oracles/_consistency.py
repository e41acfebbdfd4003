"""``consistency``: an answer that contradicts itself, whatever the model wrote.

Each check compares two parts of one answer that the spec ties together, so none of them depends
on what a (tiny) model chose to say:

- a chat ``finish_reason: "tool_calls"`` promises calls: an answer with none is the server's
  fault (typically a parser that dropped them and kept the reason); and calls the model chose
  freely (``tool_choice`` omitted or ``auto``) end with ``tool_calls``, not ``stop``
  (``calls_with_stop``). A forced call (``required``, a named function) may say ``stop``, as
  OpenAI's own API does for a named one, so it is not judged;
- ``usage`` adds up: ``total_tokens`` is ``prompt_tokens + completion_tokens`` on chat, and
  ``input_tokens + output_tokens`` on Responses, by the spec's own definition of the total;
- the call ids of one answer are distinct, and so are its Responses output item ids (an empty
  id is another oracle's business);
- a Responses answer whose status is ``completed`` finished each of its items: an item still
  ``in_progress`` (or ``incomplete``) in it contradicts the response's own word
  (``item_status``; an ``incomplete`` response's last item is ``wire_schema``'s);
- a Responses stream's ``response.created`` and ``response.in_progress`` snapshots agree with its
  terminal response on what the request fixed and the server cannot change mid-answer:
  ``model``, ``tool_choice``, ``parallel_tool_calls``, ``store``, ``instructions``, ``tools``
  (``envelope:<field>``; a field one of them leaves out is not judged);
- the answer names the model the client asked for, in every chunk (``model_echo``): a proxy
  that answers with its backend's name leaks it, and a client that checks the name fails. A
  dated snapshot of the name asked (``gpt-4o`` answered as ``gpt-4o-2024-08-06``) is accepted,
  as hosted APIs answer an alias so. A one-model server that ignores the name asked and
  answers with its own is reported too; a profile that accepts that lists the signature in
  ``model_signatures``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import TERMINAL_EVENTS, integer, is_answer, usages
from agentfuzz.oracles._registry import clip, register

__all__ = ["consistency"]

# The usage fields whose sum is the total, per api.
_PARTS = {
    "chat": ("prompt_tokens", "completion_tokens"),
    "responses": ("input_tokens", "output_tokens"),
}


def _usage_sums(case: Case, obs: Observation) -> Iterator[Violation]:
    first, second = _PARTS["responses" if case.api == "responses" else "chat"]
    for usage in usages(obs):
        a, b, total = (integer(usage.get(k)) for k in (first, second, "total_tokens"))
        if a is None or b is None or total is None or a + b == total:
            continue
        yield Violation(
            oracle="consistency",
            message=f"usage.total_tokens is {total}, but {first} + {second} is {a + b}",
            evidence=clip(str(usage)),
            signature="consistency:usage_sum",
        )
        return


# What a Responses stream's early snapshots fix and its terminal response must repeat.
_ENVELOPE = ("model", "tool_choice", "parallel_tool_calls", "store", "instructions", "tools")
_EARLY = frozenset({"response.created", "response.in_progress"})


def _violation(how: str, message: str, evidence: str) -> Violation:
    return Violation("consistency", message, clip(evidence), f"consistency:{how}")


def _responses(obs: Observation) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """A Responses answer's early snapshots (streams only) and its final response object."""
    early: list[dict[str, Any]] = []
    final: dict[str, Any] | None = None
    for payload in obs.payloads:
        if not isinstance(payload, dict):
            continue
        response = payload.get("response")
        if payload.get("object") == "response" and not obs.exchange.stream:
            final = payload
        elif isinstance(response, dict) and payload.get("type") in _EARLY:
            early.append(response)
        elif isinstance(response, dict) and payload.get("type") in TERMINAL_EVENTS:
            final = response
    return early, final


def _items(final: dict[str, Any] | None) -> list[dict[str, Any]]:
    output = final.get("output") if final is not None else None
    return [o for o in output if isinstance(o, dict)] if isinstance(output, list) else []


def _item_checks(final: dict[str, Any] | None) -> Iterator[Violation]:
    items = _items(final)
    ids = Counter(i for o in items if isinstance(i := o.get("id"), str) and i)
    shared = sorted(i for i, n in ids.items() if n > 1)
    if shared:
        message = f"{len(shared)} output item id(s) shared by two items of one response"
        yield _violation("shared_item_id", message, ", ".join(shared))
    if final is None or final.get("status") != "completed":
        return
    unfinished = [
        o for o in items if isinstance(o.get("status"), str) and o["status"] != "completed"
    ]
    if unfinished:
        first = unfinished[0]
        message = f"a completed response holds a {first.get('type')} item that is {first['status']}"
        yield _violation("item_status", message, str(first))


def _envelope(early: list[dict[str, Any]], final: dict[str, Any] | None) -> Iterator[Violation]:
    if final is None:
        return
    for snapshot in early:
        for field in _ENVELOPE:
            if field in snapshot and field in final and snapshot[field] != final[field]:
                message = f"{field} in the stream's first snapshot differs from the final response"
                evidence = f"{snapshot[field]!r} → {final[field]!r}"
                yield _violation(f"envelope:{field}", message, evidence)
                return


def _named(obs: Observation) -> Iterator[str]:
    """Each model name the answer gives (every chunk's, every response snapshot's)."""
    for payload in obs.payloads:
        if not isinstance(payload, dict):
            continue
        response = payload.get("response")
        for holder in (payload, response if isinstance(response, dict) else {}):
            if isinstance(holder.get("model"), str):
                yield holder["model"]


def _model_echo(obs: Observation) -> Iterator[Violation]:
    request = obs.exchange.request
    asked = request.get("model") if isinstance(request, dict) else None
    if not isinstance(asked, str) or not asked:
        return
    for name in _named(obs):
        if name != asked and not (
            name.startswith(asked + "-") and name[len(asked) + 1 :][:1].isdigit()
        ):
            message = f"the request asked for model {asked!r}, the answer names {name!r}"
            yield _violation("model_echo", message, name)
            return


@register(
    "consistency",
    expected="An answer agrees with itself and with its request: finish_reason with its "
    "calls, item status with the response's, the stream's first word with its last, usage "
    "that adds up, the model asked for.",
    look_for="two parts of the answer that contradict each other: finish_reason and the "
    "calls, usage and its total, a call or item id used twice, an item's status and the "
    "response's, the first and the last snapshot, the model named and the one asked for",
)
def consistency(case: Case, obs: Observation) -> Iterator[Violation]:
    """An answer contradicting itself or its request: "tool_calls" with no call, usage not adding
    up, a shared id, a completed response with unfinished items, snapshots that disagree, a
    model name other than the one asked for.

    Model behaviour cannot cause any of these: each compares parts of one answer the server
    assembles itself. It judges 2xx answers only (a refusal or a protocol fault is another
    oracle's)."""
    if not is_answer(obs):
        return
    # A custom tool's call is a call too, though not in ``tool_calls``.
    no_call = not obs.tool_calls and not obs.others
    if case.api == "chat" and obs.finish_reason == "tool_calls" and no_call:
        yield Violation(
            oracle="consistency",
            message='finish_reason "tool_calls" but the answer has no tool call',
            evidence=clip(f"text={obs.text!r}"),
            signature="consistency:tool_calls_without_calls",
        )
    # As the wire says it: a surface field (allowed_tools…) may set the choice too.
    request = obs.exchange.request
    free = isinstance(request, dict) and request.get("tool_choice", "auto") in (None, "auto")
    if case.api == "chat" and obs.finish_reason == "stop" and obs.tool_calls and free:
        names = ", ".join(str(c.name) for c in obs.tool_calls)
        message = f'{len(obs.tool_calls)} call(s) the model chose, but finish_reason "stop"'
        yield _violation("calls_with_stop", message, names)
    yield from _usage_sums(case, obs)
    ids = Counter(i for c in obs.tool_calls if (i := c.call_id or c.id))
    shared = sorted(i for i, n in ids.items() if n > 1)
    if shared:
        yield Violation(
            oracle="consistency",
            message=f"{len(shared)} call id(s) shared by two calls of one answer",
            evidence=clip(", ".join(shared)),
            signature="consistency:shared_call_id",
        )
    yield from _model_echo(obs)
    if case.api == "responses":
        early, final = _responses(obs)
        yield from _item_checks(final)
        yield from _envelope(early, final)
