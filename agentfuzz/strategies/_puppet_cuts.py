"""Cuts of a scripted answer: a token budget, or a stop string, that ends the model's writing
inside the script (``oracles._puppet_cut`` judges what comes back).

The client cannot know the server's tokenizer, so a budget is drawn over the whole range where
it may fall inside the text: from one token to a token per four characters (about what a
tokenizer gives for markup, and exactly what the reference server counts), each offset a
different cut. A stop string (chat only: Responses has none) is taken from the text itself, so
it lands where it was written: one of the format's markers, or any short piece of the text (of
the markup, an argument, the prose).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case

__all__ = ["MAX_STOP", "Cut", "cut_case", "cuts"]

# The longest stop string taken from the text.
MAX_STOP = 16


@dataclass(frozen=True)
class Cut:
    """A request field that may end the answer early: ``max_tokens`` (the case's own budget,
    chat ``max_tokens`` or Responses ``max_output_tokens``), ``max_completion_tokens`` (chat),
    or ``stop`` (chat), with its value."""

    field: str
    value: int | str


def cut_case(case: Case, cut: Cut | None) -> Case:
    """``case`` with ``cut`` set on its request; ``case`` itself for no cut."""
    if cut is None:
        return case
    if cut.field == "max_tokens":
        assert isinstance(cut.value, int)
        options = case.options.model_copy(update={"max_tokens": cut.value})
    else:
        fields = {**case.options.fields, cut.field: cut.value}
        options = case.options.model_copy(update={"fields": fields})
    return case.model_copy(update={"options": options})


@st.composite
def _pieces(draw: st.DrawFn, text: str) -> str:
    """A piece of ``text``: shrinks toward its first character."""
    start = draw(st.integers(0, len(text) - 1))
    length = draw(st.integers(1, min(MAX_STOP, len(text) - start)))
    return text[start : start + length]


def cuts(text: str, markers: tuple[str, ...], api: Api) -> SearchStrategy[Cut | None]:
    """No cut, a budget that may end ``text`` anywhere, or (chat) a stop string found in it:
    one of ``markers`` it holds, or a piece of it. Shrinks toward no cut, then a budget of
    one token, then a stop string at the text's first marker or character."""
    fields = ("max_tokens", "max_completion_tokens") if api == "chat" else ("max_tokens",)
    budgets = st.builds(Cut, st.sampled_from(fields), st.integers(1, len(text) // 4 + 1))
    if api != "chat":
        return st.none() | budgets
    inside = [marker for marker in markers if marker in text]
    pieces = st.sampled_from(inside) | _pieces(text) if inside else _pieces(text)
    return st.none() | budgets | st.builds(Cut, st.just("stop"), pieces)
