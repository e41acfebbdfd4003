"""Which related request a case is sent with: one relation (``request.relations``), or none.

Two choices near the end of a case (only an agent loop's come after them): whether it has a
partner at all, then which of the profile's relations that can apply to it; ``special_token``
takes a third, the token it puts in the last user message when the text holds none. The
relation's own preparation (temperature 0 for a greedy one, the usage chunk on a chat stream) is
applied to the case, so what is sent is what the relation judges.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case
from agentfuzz.model.modes import ALL_MODES, Mode
from agentfuzz.request.profiles import Profile
from agentfuzz.request.relations import RELATIONS, SPECIAL_TOKENS, prepared

__all__ = ["allowed", "relation_for", "with_relation"]

_TOKENS = st.integers(0, len(SPECIAL_TOKENS) - 1)


@lru_cache(maxsize=256)
def _names(names: tuple[str, ...]) -> SearchStrategy[str]:
    return st.sampled_from(names)


def allowed(
    profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...] = ALL_MODES
) -> tuple[str, ...]:
    """The profile's relations whose preparation stays within what the profile sends: a greedy
    one only where temperature 0 is among its temperatures (or its default), a prompt one on a
    chat stream only where it sends ``stream_options``, ``special_token`` only with
    ``markup_texts``, ``chain`` only on Responses where ``previous_response_id`` is sent.

    ``stream`` only where its partner's mode (the stream flipped) is among the run's ``modes``:
    ``--no-stream`` means no streamed request is sent, a partner included."""
    greedy_ok = 0.0 in profile.temperatures or profile.knob_defaults.temperature == 0
    usage_ok = api != "chat" or not stream or "stream_options" in profile.surface
    kept = []
    for name in profile.relations:
        kind = RELATIONS[name].kind
        if (kind == "greedy" and not greedy_ok) or (kind == "prompt" and not usage_ok):
            continue
        if name == "stream" and (api, not stream) not in modes:
            continue
        if name == "special_token" and not profile.markup_texts:
            continue
        if name == "chain" and (
            api != "responses" or "previous_response_id" not in profile.surface
        ):
            continue
        kept.append(name)
    return tuple(kept)


def relation_for(draw: st.DrawFn, relations: tuple[str, ...], case: Case) -> tuple[str, int] | None:
    """Half the time, a relation of ``relations`` that fits ``case`` and its pick (the special
    token), for ``with_relation`` to prepare. Shrinks toward none, then toward the first of
    the profile's that fits."""
    fitting = tuple(name for name in relations if prepared(name, case) is not None)
    if not fitting or not draw(st.booleans()):
        return None
    name = draw(_names(fitting))
    return name, draw(_TOKENS) if name == "special_token" else 0


def with_relation(chosen: tuple[str, int] | None, case: Case) -> Case:
    """``case`` with the ``chosen`` relation prepared, or as it is when none was chosen or the
    relation does not fit it."""
    if chosen is None:
        return case
    return prepared(chosen[0], case, chosen[1]) or case
