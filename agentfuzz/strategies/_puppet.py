"""Cases for ``--puppet FORMAT``: a request whose answer the puppet model writes from a script.

Each case is the plainest request a script needs: one user message asking for the first tool
the script calls, the tools it calls declared with their parameters typed, ``tool_choice`` left
to the model, and the script itself in ``vllm_xargs`` (``puppet.scripted``), which also names
the format and holds what the text was written from, so the oracle knows the truth. The
script is the case's one drawn part (``strategies._scripts``); the history, the rest of the
request surface and sessions whose model imitates its history come later.
"""

from __future__ import annotations

from functools import lru_cache, partial

from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Case, History, Options, UserMessage
from agentfuzz.puppet.formats import Format, Script
from agentfuzz.puppet.scripted import FIELD, carry
from agentfuzz.strategies._scripts import scripts, tools_for

__all__ = ["NAMES", "puppet_cases", "scripted_case"]

# The tools a script calls, plainest first: plain names every format spells.
NAMES = ("get_weather", "search")


@lru_cache(maxsize=64)
def puppet_cases(fmt: Format, api: Api, stream: bool) -> SearchStrategy[Case]:
    """Requests on ``api`` (streamed or not) whose answer is ``fmt``'s rendering of a drawn
    script. Shrinks toward one call of ``get_weather`` with no arguments."""
    return scripts(fmt, NAMES).map(partial(scripted_case, fmt, api, stream))


def scripted_case(fmt: Format, api: Api, stream: bool, script: Script) -> Case:
    """The plainest request that makes the model write ``script`` in ``fmt`` on ``api``."""
    first = script.calls[0].name
    history = History(tools=tools_for(fmt, script), items=(UserMessage(text=f"Use {first}."),))
    options = Options(fields={FIELD: carry(fmt, script)})
    return Case(history=history, options=options, api=api, stream=stream)
