"""Session plans: the tools, and per turn what the user asks, what the tool returns, which
client ID policy the answer is appended under, and the request surface the turn carries.

Each step is a handful of choices, always the same ones, so the shrinker can change one
without shifting the rest; steps are drawn with ``st.lists``, so the shrinker deletes turns
the way it deletes list elements. The surface is swarm-drawn per session: a session first
draws which field dimensions its turns may use at all (one in four), then each turn draws
them as a synthetic request does (each left out seven times in eight), for the api and stream
mode the session is in at that turn. Most sessions carry no field; every draw shrinks toward
none. Last, each step may name a relation of the profile's, paired with its request where it
fits (``session.run_session``); that too shrinks toward none.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Tool
from agentfuzz.model.modes import ALL_MODES
from agentfuzz.model.plan import CHAINS, RESULT_KINDS, Chain, Plan, Policy, Step
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._relations import allowed
from agentfuzz.strategies._surface import allowed_dimensions, surface_fields
from agentfuzz.strategies._tools import tools

__all__ = ["SessionSurface", "plans"]

Mode = tuple[Api, bool]


@lru_cache(maxsize=64)
def _asks(count: int) -> SearchStrategy[int | None]:
    # Tool 0 first: the shrinker moves toward asking for the first tool; None names none.
    return st.one_of(st.integers(0, count - 1), st.none())


@lru_cache(maxsize=64)
def _switches(modes: tuple[Mode, ...]) -> SearchStrategy[Mode | None]:
    return st.one_of(st.none(), st.sampled_from(modes))


# ``previous_response_id`` in a session: the unknown id first, then an answer of its own or
# another session's.
_CHAINS: SearchStrategy[Chain | None] = st.sampled_from((None, *CHAINS))


class SessionSurface:
    """What a session's steps draw their surface from: the dimensions the session allowed,
    and the mode the steps drawn so far left it in (a step may switch it)."""

    def __init__(
        self,
        profile: Profile,
        tools: tuple[Tool, ...],
        allowed: tuple[str, ...],
        mode: Mode,
        reach: tuple[Mode, ...],
    ) -> None:
        self.profile, self.tools, self.allowed, self.mode = profile, tools, allowed, mode
        # The run's modes: a related request never goes out in another.
        self.reach = reach

    def draw(self, draw: st.DrawFn) -> tuple[dict[str, object], tuple[str, ...], Chain | None]:
        if not self.allowed:
            return {}, (), None
        api, stream = self.mode
        forms: list[str] = []
        fields = surface_fields(draw, self.profile, api, stream, self.tools, forms, self.allowed)
        chain = draw(_CHAINS) if "previous_response_id" in fields else None
        return fields, tuple(forms), chain


@lru_cache(maxsize=64)
def _relations(names: tuple[str, ...]) -> SearchStrategy[str | None]:
    # None first: the shrinker moves toward a turn sent alone.
    return st.one_of(st.none(), st.sampled_from(names)) if names else st.none()


@st.composite
def _step(
    draw: st.DrawFn,
    count: int,
    policies: tuple[Policy, ...],
    modes: tuple[Mode, ...],
    surface: SessionSurface,
) -> Step:
    ask = draw(_asks(count))
    interject = draw(st.booleans())
    result = draw(st.sampled_from(RESULT_KINDS))
    policy = draw(st.sampled_from(policies))
    switch = draw(_switches(modes)) if len(modes) > 1 else None
    api, stream = switch if switch is not None else (None, None)
    if switch is not None:
        surface.mode = switch
    fields, forms, chain = surface.draw(draw)
    relation = draw(_relations(allowed(surface.profile, *surface.mode, surface.reach)))
    choices = surface.profile.session_choices
    # Drawn only where the profile names some, so other profiles' sessions draw as before.
    choice = draw(st.sampled_from((None, *choices))) if choices else None
    return Step(
        ask=ask,
        interject=interject,
        result=result,
        policy=policy,
        api=api,
        stream=stream,
        fields=fields,
        forms=forms,
        surface_api=surface.mode[0] if fields or forms else None,
        chain=chain,
        relation=relation,
        choice=choice,
    )


def _tidy(profile: Profile) -> Profile:
    """The profile with tools any server takes: a session's turns may leave the tools out or
    switch api, and a tool refused on one turn only (an odd name, a ``$ref`` schema, two names
    flattening to one) would read as the server refusing its own answer (``self_rejection``).
    """
    off = {"adversarial_names": False, "colliding_names": False, "adversarial_schemas": False}
    return profile.model_copy(update=off)


@st.composite
def _plans(
    draw: st.DrawFn, profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...]
) -> Plan:
    declared: tuple[Tool, ...] = draw(tools(_tidy(profile), api))
    switchable = modes if profile.switch_modes else ()
    allowed = allowed_dimensions(draw, profile)
    # Made for this draw alone: the steps keep it up to date with the mode they switch to.
    surface = SessionSurface(profile, declared, allowed, (api, stream), modes or ALL_MODES)
    steps = draw(
        st.lists(
            _step(len(declared), profile.session_policies, switchable, surface),
            min_size=1,
            max_size=profile.session_turns,
        )
    )
    return Plan(tools=declared, steps=tuple(steps), api=api, stream=stream)


def plans(
    profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...] = ()
) -> SearchStrategy[Plan]:
    """Sessions that start in ``api``/``stream`` and may switch among ``modes`` between turns.
    A turn's related request stays among ``modes`` too (empty: no switch, any related request).

    Shrinks toward one step asking for the first of as few plain tools as the profile allows,
    a JSON result, the ``passthrough`` policy (the profile's first), no switch and no field.
    """
    return _plans(profile, api, stream, tuple(modes))
