"""Hypothesis strategies that build ``Case`` values from a fuzz ``Profile``.

A thin public face: the strategies live in private modules of this package.
"""

from agentfuzz.strategies._histories import histories, history_items
from agentfuzz.strategies._modes import sessions, synthetic
from agentfuzz.strategies._openings import openings
from agentfuzz.strategies._options import cases, options
from agentfuzz.strategies._plans import plans
from agentfuzz.strategies._puppet import puppet_cases
from agentfuzz.strategies._seeded import seeded
from agentfuzz.strategies._tools import arguments, texts, tool_names, tools

__all__ = [
    "arguments",
    "cases",
    "histories",
    "history_items",
    "openings",
    "options",
    "plans",
    "puppet_cases",
    "seeded",
    "sessions",
    "synthetic",
    "texts",
    "tool_names",
    "tools",
]
