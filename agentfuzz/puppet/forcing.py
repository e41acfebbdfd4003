"""The pure half of the puppet processor: what token a scripted request must write next, and
which request sits at which row of the batch.

Nothing here knows vLLM or torch; the processor (``vllm_processor.py``) feeds this module token
ids and batch changes and applies its answers to the logits. Stdlib only, so the server's
Python imports it beside the processor.

A ``Forcer`` walks one request through its script, then its end token. It reads the request's
running output (vLLM hands the processor a reference to that list, kept current), so its place
is always the output's length: a step whose sampled token is thrown away (a chunked prefill)
does not move it. ``Slots`` keeps one state per batch row through vLLM's ``BatchUpdate``s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, TypeVar

from agentfuzz.puppet.channel import Mimic, Script

__all__ = ["Forcer", "Phase", "Slots", "text_to_write"]

T = TypeVar("T")


class Phase(StrEnum):
    """Where a request stands in its script."""

    FORCING = "forcing"  # writing the script, or its end token after it
    ABANDONED = "abandoned"  # the script could not be written whole: the model is free again
    RELEASED = "released"  # the script was written whole; the model is free again


@dataclass
class Forcer:
    """One request's script as token ids, then ``end`` (the end-of-sequence token, forced at
    every step after the script; None forces nothing after it).

    ``output`` is the request's running output. ``why`` says, once the phase is not FORCING,
    what ended the forcing; ``tag`` and ``prompt_length`` name the request in the server's log.
    """

    script: Sequence[int]
    end: int | None
    output: Sequence[int]
    tag: str = ""
    prompt_length: int = 0
    phase: Phase = Phase.FORCING
    why: str = ""
    _checked: int = field(default=0, repr=False)

    def next_token(self) -> int | None:
        """The token this request must write now, or None to leave its row as it is."""
        if self.phase is not Phase.FORCING:
            return None
        place = len(self.output)
        for index in range(self._checked, place):
            if self.output[index] != self._expected(index):
                self._stop(Phase.ABANDONED, f"the output left the script at token {index}")
                return None
        self._checked = place
        if place < len(self.script):
            return self.script[place]
        if self.end is None:
            self._stop(Phase.RELEASED, "the script is written and no end token was asked for")
            return None
        return self.end

    def refused(self, token: int) -> None:
        """The row forbids ``token`` (a grammar, a mask, ``min_tokens``): stop forcing rather
        than force an impossible token, and say why."""
        place = len(self.output)
        if place < len(self.script):
            why = f"token {token} at place {place} of {len(self.script)} is forbidden by the row"
            self._stop(Phase.ABANDONED, why)
        else:
            self._stop(Phase.RELEASED, f"the script is written; its end token {token} is forbidden")

    def _expected(self, index: int) -> int | None:
        return self.script[index] if index < len(self.script) else self.end

    def _stop(self, phase: Phase, why: str) -> None:
        self.phase, self.why = phase, why


def text_to_write(script: Script, prompt: Callable[[], str]) -> str:
    """The text a script says to write; ``prompt`` gives the prompt's text, asked for only by a
    mimic script (decoding a long prompt is not free)."""
    if isinstance(script, Mimic):
        return script.text_for(prompt())
    return script.text


class Slots(Generic[T]):
    """One state per batch row, kept through vLLM's batch updates.

    A ``BatchUpdate`` is read in the order vLLM documents: removed rows, then added ones (an
    added row replaces whatever sat there, and a request with no state empties its row), then
    moves: ``(a, b, swap)`` swaps rows a and b when ``swap``, else moves a's state to b and
    empties a.
    """

    def __init__(self) -> None:
        self._rows: dict[int, T] = {}

    def update(
        self,
        removed: Iterable[int],
        added: Iterable[tuple[int, T | None]],
        moved: Iterable[tuple[int, int, bool]],
    ) -> None:
        for index in removed:
            self._rows.pop(index, None)
        for index, state in added:
            if state is None:
                self._rows.pop(index, None)
            else:
                self._rows[index] = state
        for a, b, swap in moved:
            at_a, at_b = self._rows.pop(a, None), self._rows.pop(b, None)
            if at_a is not None:
                self._rows[b] = at_a
            if swap and at_b is not None:
                self._rows[a] = at_b

    def get(self, index: int) -> T | None:
        return self._rows.get(index)

    def items(self) -> Iterator[tuple[int, T]]:
        return iter(list(self._rows.items()))

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)
