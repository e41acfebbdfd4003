"""Cases for ``--puppet FORMAT``: a request whose answer the puppet model writes from a script.

Each case is the plainest request a script needs: one user message asking for the first tool
the script calls, the tools it calls declared with their parameters typed, ``tool_choice`` left
to the model, and the script itself in ``vllm_xargs`` (``puppet.scripted``), which also names
the format and holds what the text was written from, so the oracle knows the truth. The
script is drawn first (``strategies._scripts``, calling tools by odd names too: namespaced ones,
ones the request leaves undeclared), then a cut that may end the writing early
(``strategies._puppet_cuts``: a token budget or a stop string), then the profile's request
surface as any request draws it (``strategies._surface``). Sessions, whose model imitates its
history, are drawn in ``strategies._puppet_sessions``.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case, History, Options, UserMessage
from agentfuzz.puppet.formats import Format, Script
from agentfuzz.puppet.scripted import FIELD, carry
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import DIMENSIONS
from agentfuzz.strategies._puppet_cuts import cut_case, cuts
from agentfuzz.strategies._scripts import scripts, tools_for
from agentfuzz.strategies._surface import surface_fields

__all__ = ["NAMES", "puppet_cases", "scripted_case"]

# The tools a script calls, plainest first: plain names every format spells.
NAMES = ("get_weather", "search")
# The surface's fields that may cut the answer: a drawn cut is the only one a case has.
_CUTS = frozenset(DIMENSIONS["budget"].fields + DIMENSIONS["stop"].fields)


def puppet_cases(
    fmt: Format, api: Api, stream: bool, profile: Profile | None = None
) -> SearchStrategy[Case]:
    """Requests on ``api`` (streamed or not) whose answer is ``fmt``'s rendering of a drawn
    script, which a drawn budget or stop string may cut, with ``profile``'s request surface
    (none without one). Shrinks toward one call of ``get_weather`` with no arguments, no cut
    and no field of the surface."""
    return _puppet_case(fmt, api, stream, profile)


@st.composite
def _puppet_case(
    draw: st.DrawFn, fmt: Format, api: Api, stream: bool, profile: Profile | None
) -> Case:
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
    cut = draw(cuts(fmt.write(script), fmt.markers, api))
    case = cut_case(scripted_case(fmt, api, stream, script, declared), cut)
    return case if profile is None else _surfaced(draw, case, profile, cut is not None)


def _surfaced(draw: st.DrawFn, case: Case, profile: Profile, cut: bool) -> Case:
    """``case`` with the profile's request surface drawn over it, as any request's is (the
    message forms among it); the script's field and a cut's stay as they are (``cut``: the
    case has one, and the surface's budgets and stop strings go). Fields that take the
    writing from the script or sway its reading are drawn too: the oracles of the truth
    leave those requests alone (``puppet.surface``), every other oracle judges them."""
    forms: list[str] = []
    tools = case.history.tools
    fields = surface_fields(draw, profile, case.api, case.stream, tools, forms)
    if not fields and not forms:
        return case
    own = case.options.fields
    if cut:
        fields = {k: v for k, v in fields.items() if k not in _CUTS}
    merged = {**fields, **own}
    options = case.options.model_copy(update={"fields": merged, "forms": tuple(forms)})
    return case.model_copy(update={"options": options})


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
