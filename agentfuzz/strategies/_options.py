"""Request knobs and whole cases: a history plus the options of the request that follows it."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.history import Api, Case, Options, Tool
from agentfuzz.profiles import Profile
from agentfuzz.strategies._histories import histories

__all__ = ["cases", "options"]


@st.composite
def _options(draw: st.DrawFn, profile: Profile, tools: tuple[Tool, ...]) -> Options:
    # Leaving tools out is what clients do on a closing turn; tool_choice then goes too,
    # since a tool_choice without tools is a request any server may refuse.
    include_tools = not (profile.omit_tools_last and draw(st.booleans()))
    tool_choice: str | None = None
    if include_tools:
        kind = draw(st.sampled_from((None, *profile.tool_choices)))
        tool_choice = (
            draw(st.sampled_from([t.flat_name for t in tools])) if kind == "named" else kind
        )
    return Options(
        include_tools=include_tools,
        tool_choice=tool_choice,
        seed=draw(st.sampled_from((None, *profile.seeds))),
        temperature=draw(st.sampled_from((None, *profile.temperatures))),
        max_tokens=draw(st.sampled_from((None, *profile.max_tokens))),
    )


def options(profile: Profile, tools: tuple[Tool, ...]) -> SearchStrategy[Options]:
    """Knobs for the request after a history declaring ``tools``, within the profile's choices.

    Shrinks toward the default ``Options()``: tools included, every knob left out.
    """
    return _options(profile, tools)


@st.composite
def _cases(draw: st.DrawFn, profile: Profile, api: Api, stream: bool) -> Case:
    history = draw(histories(profile, api))
    return Case(
        history=history, options=draw(options(profile, history.tools)), api=api, stream=stream
    )


def cases(profile: Profile, api: Api, stream: bool) -> SearchStrategy[Case]:
    """Requests to fuzz with: a history, its options, and the fixed ``api`` and ``stream``.

    Shrinks toward one plain tool, one user message naming it and default options.
    """
    return _cases(profile, api, stream)
