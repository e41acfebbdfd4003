"""Request knobs and whole cases: a history plus the options of the request that follows it.

Knobs take two choices whatever the profile: one for tools (included with a ``tool_choice``,
or left out) and one for the sampling knobs together (seed, temperature, max_tokens), each a
``sampled_from`` whose first entry is the default, so the shrinker drops knobs in one step.
The rest of the request surface follows (``strategies._surface``), one dimension at a time,
after the dimensions that change the history (``strategies._foreign``); last, the related
request the judge sends with the case, if any (``strategies._relations``).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case, History, Options, Tool
from agentfuzz.model.modes import ALL_MODES, Mode
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies._foreign import extend_history
from agentfuzz.strategies._histories import histories
from agentfuzz.strategies._relations import allowed, with_relation
from agentfuzz.strategies._surface import malformed_kind, surface_fields

__all__ = ["cases", "options"]

_OMIT = "omit"


@lru_cache(maxsize=64)
def _tool_knobs(kinds: tuple[str, ...], omit: bool) -> SearchStrategy[str | None]:
    # Leaving tools out is what clients do on a closing turn; tool_choice then goes too,
    # since a tool_choice without tools is a request any server may refuse. Twice the weight
    # of one tool_choice: a turn without tools after calls is half of what an agent loop sends.
    return st.sampled_from((None, *kinds, *((_OMIT, _OMIT) if omit else ())))


@lru_cache(maxsize=64)
def _sampling_knobs(
    seeds: tuple[int, ...], temperatures: tuple[float, ...], max_tokens: tuple[int, ...]
) -> SearchStrategy[tuple[int | None, float | None, int | None]]:
    combos = itertools.product((None, *seeds), (None, *temperatures), (None, *max_tokens))
    # Fewest knobs set first, so the shrinker reaches the defaults through smaller indexes.
    ordered = sorted(combos, key=lambda c: sum(v is not None for v in c))
    return st.sampled_from(ordered)


@lru_cache(maxsize=64)
def _named(size: int) -> SearchStrategy[int]:
    return st.integers(0, size - 1)


def _draw_options(
    draw: st.DrawFn, profile: Profile, tools: tuple[Tool, ...], api: Api, stream: bool
) -> Options:
    kind = draw(_tool_knobs(profile.tool_choices, profile.omit_tools_last))
    tool_choice = kind if kind != _OMIT else None
    if kind == "named":
        tool_choice = tools[draw(_named(len(tools)))].flat_name
    seed, temperature, max_tokens = draw(
        _sampling_knobs(profile.seeds, profile.temperatures, profile.max_tokens)
    )
    forms: list[str] = []
    fields = surface_fields(draw, profile, api, stream, tools, forms)
    return Options(
        include_tools=kind != _OMIT,
        tool_choice=tool_choice,
        seed=seed,
        temperature=temperature,
        max_tokens=max_tokens,
        fields=fields,
        forms=tuple(forms),
        malformed=malformed_kind(draw, profile),
    )


@st.composite
def _options(
    draw: st.DrawFn, profile: Profile, tools: tuple[Tool, ...], api: Api, stream: bool
) -> Options:
    return _draw_options(draw, profile, tools, api, stream)


def options(
    profile: Profile, tools: tuple[Tool, ...], api: Api = "chat", stream: bool = False
) -> SearchStrategy[Options]:
    """Knobs for the request after a history declaring ``tools``, within the profile's choices.

    Two or three choices, then the request surface by swarm (``strategies._surface``).
    Shrinks toward the default ``Options()``: tools included, every knob and field left out.
    """
    return _options(profile, tools, api, stream)


@st.composite
def _cases(
    draw: st.DrawFn,
    profile: Profile,
    api: Api,
    stream: bool,
    drawn: SearchStrategy[History],
    modes: tuple[Mode, ...],
) -> Case:
    history, fields = extend_history(draw, profile, api, stream, draw(drawn))
    options = _draw_options(draw, profile, history.tools, api, stream)
    if fields:
        options = options.model_copy(update={"fields": fields | options.fields})
    case = Case(history=history, options=options, api=api, stream=stream)
    relations = allowed(profile, api, stream, modes)
    return with_relation(draw, relations, case) if relations else case


def cases(
    profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...] = ALL_MODES
) -> SearchStrategy[Case]:
    """Requests to fuzz with: a history, its options, the fixed ``api`` and ``stream``, and
    maybe a relation (a related request the judge sends with it). ``modes`` are the run's: a
    relation whose partner would leave them (``stream`` under ``--no-stream``) is not drawn.

    Shrinks toward one plain tool, one user message naming it, default options and no
    relation.
    """
    return _cases(profile, api, stream, histories(profile, api), tuple(modes))
