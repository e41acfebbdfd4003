"""Session plans for ``--mode session --puppet FORMAT``: an agent loop whose model writes, each
turn, what the turn's script says (``puppet.scripted.carry_turn``).

A turn whose user asks for a tool calls that tool, in the format, with one plain argument or
none; in a format whose calls carry ids the call is headed as a model imitating its history
heads it: by the last call id the prompt shows where that id is foreign to the family (seed
000's ``call_<hex>``), else by the family's own id for its place in the conversation. A turn
that asks for none, or whose request leaves the tools out (the turn after a ``strip-tools``
step), is answered in plain text. Everything else of a session (the results, the ID policies, the
interjections, the request surface: the dimensions allowed once per session, each turn's fields
and message forms) is drawn as ``strategies._plans`` draws it; mode switches and relations are
left for later.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Tool
from agentfuzz.model.plan import RESULT_KINDS, Chain, Plan, Policy, ResultKind, Step
from agentfuzz.puppet.formats import Call, Format, Script
from agentfuzz.puppet.scripted import FIELD, carry_turn
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._plans import SessionSurface
from agentfuzz.strategies._puppet import NAMES
from agentfuzz.strategies._scripts import tools_for
from agentfuzz.strategies._surface import allowed_dimensions

__all__ = ["puppet_plans"]

# Each tool's one parameter, and the values a turn may give it (none first).
_PARAMETERS = {"get_weather": "city", "search": "query"}
_VALUES: SearchStrategy[str | None] = st.one_of(st.none(), st.sampled_from(("Paris", "")))
_ASKS: SearchStrategy[int | None] = st.one_of(st.integers(0, len(NAMES) - 1), st.none())


def _call(name: str, value: str | None) -> Call:
    return Call(name, {} if value is None else {_PARAMETERS[name]: value})


@lru_cache(maxsize=64)
def _tools(fmt: Format) -> tuple[Tool, ...]:
    """Both tools, each declaring its parameter as a string."""
    return tuple(tools_for(fmt, Script((_call(name, "Paris"),)))[0] for name in NAMES)


# One turn as drawn: the tool asked (an index into ``NAMES``) or None, the argument's value,
# whether the user interjects, the tool's result, the client's ID policy.
_Drawn = tuple[int | None, str | None, bool, ResultKind, Policy]


@lru_cache(maxsize=64)
def _turns(policies: tuple[Policy, ...]) -> SearchStrategy[_Drawn]:
    return st.tuples(
        _ASKS, _VALUES, st.booleans(), st.sampled_from(RESULT_KINDS), st.sampled_from(policies)
    )


# A turn's request surface as drawn: its fields, its message forms, what it chains onto.
_Surfaced = tuple[dict[str, object], tuple[str, ...], Chain | None]


def _plan(fmt: Format, api: Api, stream: bool, drawn: list[tuple[_Drawn, _Surfaced]]) -> Plan:
    steps: list[Step] = []
    omitted = False  # whether this turn's request leaves the tools out
    calls = 0  # the calls the conversation holds before this turn, as scripted
    for (ask, value, interject, result, policy), (surface, forms, chain) in drawn:
        script = None if ask is None or omitted else Script((_call(NAMES[ask], value),))
        fields = {**surface, FIELD: carry_turn(fmt, script, calls)}
        calls += script is not None
        drawn_for = api if surface or forms else None
        steps.append(
            Step(
                ask=ask,
                interject=interject,
                result=result,
                policy=policy,
                fields=fields,
                forms=forms,
                surface_api=drawn_for,
                chain=chain,
            )
        )
        omitted = policy == "strip-tools"
    return Plan(tools=_tools(fmt), steps=tuple(steps), api=api, stream=stream)


@st.composite
def _surfaced(draw: st.DrawFn, surface: SessionSurface) -> _Surfaced:
    return surface.draw(draw)


@st.composite
def _puppet_plan(draw: st.DrawFn, fmt: Format, profile: Profile, api: Api, stream: bool) -> Plan:
    allowed = allowed_dimensions(draw, profile)
    mode = (api, stream)
    surface = SessionSurface(profile, _tools(fmt), allowed, mode, (mode,))
    turn = st.tuples(_turns(profile.session_policies), _surfaced(surface))
    drawn = draw(st.lists(turn, min_size=1, max_size=profile.session_turns))
    return _plan(fmt, api, stream, drawn)


def puppet_plans(fmt: Format, profile: Profile, api: Api, stream: bool) -> SearchStrategy[Plan]:
    """Sessions in ``api``/``stream`` whose turns script the model in ``fmt``: up to
    ``profile.session_turns`` turns under ``profile.session_policies``, each with the request
    surface of the dimensions the session allowed.

    Turns are drawn as a list, so the shrinker deletes them as list elements; the whole
    shrinks toward one turn calling ``get_weather`` with no argument, a JSON result, the
    profile's first policy, no interjection and no field of the surface.
    """
    return _puppet_plan(fmt, profile, api, stream)
