"""A run's openings: the plainest case of each skeleton, sent before Hypothesis draws at random.

A case's first choice is its skeleton (``strategies._options``): a history as drawn, or the
agent loop going on to the user's next ask, naming one tool or two, with its tools declared or
left out, after calls of one id shape. Hypothesis tries the plainest case of a few first
choices before it draws at random (a tenth of its budget), and at random a given skeleton
comes once in as many draws as there are skeletons (16 under the default profile), each draw
followed by mutations of it: a bug that needs one skeleton was met on some seeds within 50
examples and not on others. The openings send each
skeleton's plainest case once, whatever the seed, so every id shape meets every loop ending
early in every run, as a fuzzer's seed corpus does.

Each opening is the strategy's own draw, its first choice fixed and every later one the
simplest: the case the shrinker itself would reach for that skeleton. Drawing it uses
Hypothesis's internals (a prefix of choices with a "simplest" template); a Hypothesis whose
internals moved gives no openings, and the run is as it was without them.
"""

from __future__ import annotations

from typing import Any

from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case
from agentfuzz.model.modes import Mode
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._options import cases, skeletons

__all__ = ["Opening", "openings"]


Opening = tuple[Case, tuple[Any, ...] | None]
"""A case, and the choices that draw it from its strategy (what the example database keeps),
or None for one written by hand."""


def openings(profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...]) -> list[Opening]:
    """The plainest case of every skeleton but the first (a history as drawn: Hypothesis's own
    first example is that one), in the skeletons' order, each with its choices."""
    strategy = cases(profile, api, stream, modes)
    drawn = [_plainest(strategy, first) for first in range(1, skeletons(profile))]
    return [opening for opening in drawn if opening is not None]


def _plainest(strategy: SearchStrategy[Case], first: int) -> Opening | None:
    """``strategy``'s draw with ``first`` as its first choice and the simplest after it."""
    from hypothesis.errors import HypothesisException, StopTest

    try:
        from hypothesis.control import BuildContext
        from hypothesis.internal.conjecture.choice import ChoiceTemplate
        from hypothesis.internal.conjecture.data import ConjectureData

        prefix: tuple[Any, ...] = (first, ChoiceTemplate("simplest", count=None))
        data = ConjectureData(prefix=prefix, random=None)
        with BuildContext(data, wrapped_test=None):  # type: ignore[arg-type]
            case = data.draw(strategy)
    except (ImportError, TypeError, AttributeError, HypothesisException, StopTest):
        # Internals that moved, or a draw the strategy rejects with these choices.
        return None
    return (case, tuple(data.choices)) if isinstance(case, Case) else None
