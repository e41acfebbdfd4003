"""Request knobs and whole cases: a history plus the options of the request that follows it.

A case's first choice is its skeleton: a history as drawn, or one the agent loop goes on from
(``strategies._loops``: a reply with calls, their results, the user's next ask naming one
tool or two, with the tools declared or, as a closing turn, without). Its own choices come
last, after the relation's, so with the skeleton lowered they are left over and the shrinker
drops the loop in one step; the relation is prepared on the case with the loop in it.

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
from agentfuzz.strategies._loops import Ending, looped, loops
from agentfuzz.strategies._relations import allowed, relation_for, with_relation
from agentfuzz.strategies._surface import malformed_kind, surface_fields

__all__ = ["cases", "options", "skeletons"]

_OMIT = "omit"


@lru_cache(maxsize=64)
def _tool_knobs(kinds: tuple[str, ...], omit: bool) -> SearchStrategy[str | None]:
    # Leaving tools out is what clients do on a closing turn; tool_choice then goes too,
    # since a tool_choice without tools is a request any server may refuse.
    return st.sampled_from((None, *kinds, *((_OMIT,) if omit else ())))


# A request's skeleton: None for a history as drawn, or how the agent loop goes on after it
# (``histories.looped``), whether that closing request declares its tools, and the id shape of
# the calls it goes on from (an index into the profile's ``family_strata``).
Skeleton = tuple[Ending, bool, int] | None


def _skeleton_list(loop: bool, omit: bool, strata: int) -> list[Skeleton]:
    # A case's first choice, so a run's first examples (one choice random, the rest the
    # simplest) hold the plainest request of each: the next ask naming one tool, or two, with
    # the tools declared, and as a client's closing turn, without them (seeds 000, 001 and
    # 004 live there), each after calls of every id shape: the matrix this tool exists for,
    # one choice each rather than the product of several unlikely ones.
    endings: list[tuple[Ending, bool]] = [("next_ask", True), ("next_ask_two", True)]
    if omit:
        endings.append(("next_ask", False))
    shapes: list[Skeleton] = [None]
    if loop:
        shapes += [(e, declared, k) for k in range(strata) for e, declared in endings]
    return shapes


@lru_cache(maxsize=64)
def _skeletons(loop: bool, omit: bool, strata: int) -> SearchStrategy[Skeleton]:
    return st.sampled_from(_skeleton_list(loop, omit, strata))


def _skeleton_args(profile: Profile) -> tuple[bool, bool, int]:
    loop = profile.max_parallel_calls > 0 and profile.max_turns > 1
    # One id shape per skeleton where a turn's family is its own; else the history's calls
    # decide it and the reply's seed draws it where there are none.
    strata = len(profile.family_strata) if profile.mix_families else 1
    return loop, profile.omit_tools_last, strata


def skeletons(profile: Profile) -> int:
    """How many values a case's first choice, its skeleton, takes under ``profile``."""
    return len(_skeleton_list(*_skeleton_args(profile)))


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
    draw: st.DrawFn,
    profile: Profile,
    tools: tuple[Tool, ...],
    api: Api,
    stream: bool,
    omit: bool | None = None,
) -> Options:
    """The knobs; ``omit``: whether leaving the tools out is a choice (the profile's
    ``omit_tools_last`` unless said)."""
    omit = profile.omit_tools_last if omit is None else omit
    kind = draw(_tool_knobs(profile.tool_choices, omit))
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
    modes: tuple[Mode, ...],
) -> Case:
    skeleton = draw(_skeletons(*_skeleton_args(profile)))
    drawn: History = draw(histories(profile, api))
    history, fields = extend_history(draw, profile, api, stream, drawn)
    # A skeleton says whether the loop's ask declares its tools: no other way to leave them out.
    omit = profile.omit_tools_last and skeleton is None
    options = _draw_options(draw, profile, history.tools, api, stream, omit)
    if fields:
        options = options.model_copy(update={"fields": fields | options.fields})
    case = Case(history=history, options=options, api=api, stream=stream)
    relations = allowed(profile, api, stream, modes)
    chosen = relation_for(draw, relations, case) if relations else None
    if skeleton is not None and loops(profile, history):
        # The loop's choices come last: with the skeleton lowered to none they are left over,
        # so the shrinker drops the loop in one step. The relation is prepared after it.
        ending, declared, stratum = skeleton
        shaped = stratum if profile.mix_families else None
        history = draw(looped(profile, api, history, ending, shaped))
        if not declared:
            options = options.model_copy(update={"include_tools": False, "tool_choice": None})
        case = case.model_copy(update={"history": history, "options": options})
    return with_relation(chosen, case)


def cases(
    profile: Profile, api: Api, stream: bool, modes: tuple[Mode, ...] = ALL_MODES
) -> SearchStrategy[Case]:
    """Requests to fuzz with: a history, its options, the fixed ``api`` and ``stream``, and
    maybe a relation (a related request the judge sends with it). ``modes`` are the run's: a
    relation whose partner would leave them (``stream`` under ``--no-stream``) is not drawn.

    Shrinks toward one plain tool, one user message naming it, default options and no
    relation.
    """
    return _cases(profile, api, stream, tuple(modes))
