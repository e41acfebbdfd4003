"""The differential oracle ``stream_divergence``: the same request, streamed and not.

With ``fuzz --differential`` every observation carries a ``twin``: the answer to the same body
with ``stream`` flipped. At temperature 0 (or scripted by the puppet) both are the same
generation, so what a client sees of them must agree: the kind of turn, the calls and their
arguments, the visible text, and whether the token limit cut it. Ids differ per request and
are left out, as is the wording of ``finish_reason`` beyond the cut, and whitespace (streamed
arguments keep the model's spacing where a non-streamed body re-serialises them).
"""

from __future__ import annotations

from collections.abc import Iterator

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._compare import deterministic, difference, served, side
from agentfuzz.oracles._registry import register

__all__ = ["deterministic", "stream_divergence"]


@register(
    "stream_divergence",
    expected="The same request streamed and not streamed gives the same answer (at temperature 0).",
    look_for="the two answers side by side, streamed and not: the kind of turn, the call "
    "names or arguments, the visible text, or whether the token limit cut it",
    relations=("stream",),
)
def stream_divergence(case: Case, obs: Observation) -> Iterator[Violation]:
    """The streamed and non-streamed answers to one greedy request differ as a client sees them.

    Silent without a twin (``--differential`` off), when either side is not a normal 2xx answer
    (the ``error`` oracle's to report), and when sampling is not greedy (a puppet script leaving
    ``tool_choice`` to the model is: the processor writes every token). One violation at most,
    for the most basic difference: shape (text / calls / nothing), then the cut, then call names,
    arguments (as JSON data) and the whitespace-normalised text.
    """
    twin = obs.twin
    if twin is None or not served(obs) or not served(twin) or not deterministic(case, obs):
        return
    streamed, plain = (obs, twin) if obs.exchange.stream else (twin, obs)
    if streamed.exchange.stream == plain.exchange.stream:
        return
    found = difference(streamed, plain)
    if found is None:
        return
    kind, what = found
    yield Violation(
        oracle="stream_divergence",
        message=f"streamed and non-streamed answers to the same request differ ({kind}): {what}",
        evidence=f"stream: {side(streamed)}\nnon-stream: {side(plain)}",
        signature=f"stream_divergence:{kind}",
    )
