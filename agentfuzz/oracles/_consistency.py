"""``consistency``: an answer that contradicts itself, whatever the model wrote.

Each check compares two parts of one answer that the spec ties together, so none of them depends
on what a (tiny) model chose to say:

- a chat ``finish_reason: "tool_calls"`` promises calls: an answer with none is the server's
  fault (typically a parser that dropped them and kept the reason);
- ``usage`` adds up: ``total_tokens`` is ``prompt_tokens + completion_tokens`` on chat, and
  ``input_tokens + output_tokens`` on Responses, by the spec's own definition of the total;
- the call ids of one answer are distinct (an empty id is another oracle's business).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from agentfuzz.history import Case
from agentfuzz.observation import Observation, Violation
from agentfuzz.oracles._common import is_answer, usages
from agentfuzz.oracles._registry import clip, register

__all__ = ["consistency"]

# The usage fields whose sum is the total, per api.
_PARTS = {
    "chat": ("prompt_tokens", "completion_tokens"),
    "responses": ("input_tokens", "output_tokens"),
}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage_sums(case: Case, obs: Observation) -> Iterator[Violation]:
    first, second = _PARTS["responses" if case.api == "responses" else "chat"]
    for usage in usages(obs):
        a, b, total = (_count(usage.get(k)) for k in (first, second, "total_tokens"))
        if a is None or b is None or total is None or a + b == total:
            continue
        yield Violation(
            oracle="consistency",
            message=f"usage.total_tokens is {total}, but {first} + {second} is {a + b}",
            evidence=clip(str(usage)),
            signature="consistency:usage_sum",
        )
        return


@register("consistency")
def consistency(case: Case, obs: Observation) -> Iterator[Violation]:
    """An answer contradicting itself: "tool_calls" with no call, usage not adding up, a shared id.

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
