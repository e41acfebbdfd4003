"""agentfuzz: a record-and-replay session fuzzer for multi-turn tool calling.

The public face re-exports the data model; everything else lives in its own layer
(see ARCHITECTURE.md). The names load on first use: the pytest plugin imports this package in
every pytest run wherever agentfuzz is installed, and should not pay for pydantic there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentfuzz.history import (
        AssistantMessage,
        Case,
        History,
        Options,
        ReasoningItem,
        SystemMessage,
        Tool,
        ToolCall,
        ToolResult,
        UserMessage,
    )
    from agentfuzz.observation import Exchange, Observation, Violation

__version__ = "0.1.0"

_HOMES = {
    "AssistantMessage": "history",
    "Case": "history",
    "Exchange": "observation",
    "History": "history",
    "Observation": "observation",
    "Options": "history",
    "ReasoningItem": "history",
    "SystemMessage": "history",
    "Tool": "history",
    "ToolCall": "history",
    "ToolResult": "history",
    "UserMessage": "history",
    "Violation": "observation",
}

__all__ = [
    "AssistantMessage",
    "Case",
    "Exchange",
    "History",
    "Observation",
    "Options",
    "ReasoningItem",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "Violation",
    "__version__",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentfuzz' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentfuzz.{home}"), name)
