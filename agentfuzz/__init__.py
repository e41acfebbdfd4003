"""agentfuzz: a record-and-replay session fuzzer for multi-turn tool calling.

The public face re-exports the data model; everything else lives in its own layer
(see ARCHITECTURE.md).
"""

from agentfuzz.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    ReasoningItem,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.observation import Exchange, Observation, Violation

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
    "Case",
    "Exchange",
    "History",
    "Observation",
    "Options",
    "ReasoningItem",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "Violation",
    "__version__",
]
