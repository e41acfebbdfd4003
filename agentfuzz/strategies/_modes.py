"""What one mode of a run draws from: a synthetic mode's cases and the openings it judges
first, a session mode's plans."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case
from agentfuzz.model.modes import Mode
from agentfuzz.model.plan import Plan
from agentfuzz.puppet.formats import format_named
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._openings import Opening, openings
from agentfuzz.strategies._options import cases
from agentfuzz.strategies._plans import plans
from agentfuzz.strategies._puppet import puppet_cases
from agentfuzz.strategies._puppet_openings import puppet_openings
from agentfuzz.strategies._puppet_sessions import puppet_plans
from agentfuzz.strategies._seeded import seeded

__all__ = ["sessions", "synthetic"]


def synthetic(
    profile: Profile,
    api: Api,
    stream: bool,
    modes: tuple[Mode, ...],
    seeds: tuple[Case, ...] = (),
    puppet: str | None = None,
    opened: bool = True,
) -> tuple[SearchStrategy[Case], list[Opening]]:
    """The strategy of one mode's examples, and the openings it sends first (none unless
    ``opened``): with ``puppet``, scripted cases in that format (what the model writes is the
    case's to say), opened by the plainest script of each trap its parser meets; with captured
    ``seeds``, those mutated first (the shrinker leans toward the first branch: they are the
    run's openings); else the profile's cases, opened by each skeleton's plainest case."""
    if puppet is not None:
        fmt = format_named(puppet)
        scripted: list[Opening] = list(puppet_openings(fmt, api, stream)) if opened else []
        return puppet_cases(fmt, api, stream, profile), scripted
    strategy = cases(profile, api, stream, modes)
    if seeds:
        return st.one_of(seeded(seeds, profile, api, stream), strategy), []
    return strategy, openings(profile, api, stream, modes) if opened else []


def sessions(
    profile: Profile,
    api: Api,
    stream: bool,
    modes: tuple[Mode, ...] = (),
    puppet: str | None = None,
) -> SearchStrategy[Plan]:
    """The plans of one session mode: with ``puppet``, sessions whose every turn scripts the
    model in that format (``strategies._puppet_sessions``); else the profile's, which may
    switch among ``modes``."""
    if puppet is not None:
        return puppet_plans(format_named(puppet), profile, api, stream)
    return plans(profile, api, stream, modes)
