"""Cases for ``--puppet FORMAT``: a request whose answer the puppet model writes from a script.

Each case is the plainest request a script needs: one user message asking for the first tool
the script calls, the tools it calls declared with their parameters typed, ``tool_choice`` left
to the model, and the script itself in ``vllm_xargs`` (``puppet.scripted``), which also names
the format and holds what the text was written from, so the oracle knows the truth. The
script is drawn first (``strategies._scripts``, calling tools by odd names too: namespaced ones,
ones the request leaves undeclared), then a cut that may end the writing early
(``strategies._puppet_cuts``: a token budget or a stop string); the history, the rest of the
request surface and sessions whose model imitates its history come later.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case, History, Options, UserMessage
from agentfuzz.puppet.formats import Format, Script
from agentfuzz.puppet.scripted import FIELD, carry
from agentfuzz.strategies._puppet_cuts import cut_case, cuts
from agentfuzz.strategies._scripts import scripts, tools_for

__all__ = ["NAMES", "puppet_cases", "scripted_case"]

# The tools a script calls, plainest first: plain names every format spells.
NAMES = ("get_weather", "search")


@lru_cache(maxsize=64)
def puppet_cases(fmt: Format, api: Api, stream: bool) -> SearchStrategy[Case]:
    """Requests on ``api`` (streamed or not) whose answer is ``fmt``'s rendering of a drawn
    script, which a drawn budget or stop string may cut. Shrinks toward one call of
    ``get_weather`` with no arguments and no cut."""
    return _puppet_case(fmt, api, stream)


@st.composite
def _puppet_case(draw: st.DrawFn, fmt: Format, api: Api, stream: bool) -> Case:
    script = draw(scripts(fmt, NAMES, undeclared=True))
    # Every name called is declared (the plainest), or only the first call's and the plain
    # ones: a call to any other name is then one the request never declared. An empty name
    # is never declared (a tool so named is a request a server may refuse outright), and a
    # request whose calls are all nameless declares the first plain tool, so it has tools.
    called = tuple(dict.fromkeys(call.name for call in script.calls))
    declared = (tuple(n for n in called if n) or NAMES[:1]) if "" in called else None
    if draw(st.booleans()):
        first = script.calls[0].name
        declared = tuple(n for n in called if n and (n == first or n in NAMES)) or NAMES[:1]
    case = scripted_case(fmt, api, stream, script, declared)
    return cut_case(case, draw(cuts(fmt.write(script), fmt.markers, api)))


def scripted_case(
    fmt: Format, api: Api, stream: bool, script: Script, declared: tuple[str, ...] | None = None
) -> Case:
    """The plainest request that makes the model write ``script`` in ``fmt`` on ``api``,
    declaring every tool it calls (or only ``declared``, as ``tools_for`` says)."""
    first = script.calls[0].name
    tools = tools_for(fmt, script, declared)
    history = History(tools=tools, items=(UserMessage(text=f"Use {first}."),))
    options = Options(fields={FIELD: carry(fmt, script)})
    return Case(history=history, options=options, api=api, stream=stream)
