"""agentfuzz: a record-and-replay session fuzzer for multi-turn tool calling.

The public face: the entry points a program or a test uses (``run`` and its ``FuzzConfig``,
``Report`` and ``Summary``, the strategies ``cases`` and ``plans``, the oracles' ``check``,
``register`` and ``oracle_names``, the fuzz profiles, ``Target`` and the ``Judge`` of its
answers, the replay of cassettes and bundles) and the data model they speak. Everything else
lives in its own layer (see ARCHITECTURE.md). The names load on first use: the pytest plugin
imports this package in every pytest run wherever agentfuzz is installed, and should not pay
for pydantic, Hypothesis or httpx there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentfuzz.judge.judge import Judge, Verdict
    from agentfuzz.model.history import (
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
    from agentfuzz.model.observation import Exchange, Observation, Violation
    from agentfuzz.model.summary import Summary
    from agentfuzz.oracles import check, register
    from agentfuzz.oracles import names as oracle_names
    from agentfuzz.output.findings.finding import Finding
    from agentfuzz.output.findings.report import Report
    from agentfuzz.output.findings.status import Status
    from agentfuzz.request.profiles import Profile, list_profiles, load_profile
    from agentfuzz.runs.campaign import run
    from agentfuzz.runs.config import FuzzConfig
    from agentfuzz.strategies import cases, plans
    from agentfuzz.tape.replay import replay_bundle, replay_cassette, resend_bundle
    from agentfuzz.wire.target import Target

__version__ = "0.1.0"

# Public name -> (module, name there).
_HOMES = {
    "AssistantMessage": ("model.history", "AssistantMessage"),
    "Case": ("model.history", "Case"),
    "Exchange": ("model.observation", "Exchange"),
    "Finding": ("output.findings.finding", "Finding"),
    "FuzzConfig": ("runs.config", "FuzzConfig"),
    "History": ("model.history", "History"),
    "Judge": ("judge.judge", "Judge"),
    "Observation": ("model.observation", "Observation"),
    "Options": ("model.history", "Options"),
    "Profile": ("request.profiles", "Profile"),
    "ReasoningItem": ("model.history", "ReasoningItem"),
    "Report": ("output.findings.report", "Report"),
    "Status": ("output.findings.status", "Status"),
    "Summary": ("model.summary", "Summary"),
    "SystemMessage": ("model.history", "SystemMessage"),
    "Target": ("wire.target", "Target"),
    "Tool": ("model.history", "Tool"),
    "ToolCall": ("model.history", "ToolCall"),
    "ToolResult": ("model.history", "ToolResult"),
    "UserMessage": ("model.history", "UserMessage"),
    "Verdict": ("judge.judge", "Verdict"),
    "Violation": ("model.observation", "Violation"),
    "cases": ("strategies", "cases"),
    "check": ("oracles", "check"),
    "list_profiles": ("request.profiles", "list_profiles"),
    "load_profile": ("request.profiles", "load_profile"),
    "oracle_names": ("oracles", "names"),
    "plans": ("strategies", "plans"),
    "register": ("oracles", "register"),
    "replay_bundle": ("tape.replay", "replay_bundle"),
    "replay_cassette": ("tape.replay", "replay_cassette"),
    "resend_bundle": ("tape.replay", "resend_bundle"),
    "run": ("runs.campaign", "run"),
}

__all__ = [
    "AssistantMessage",
    "Case",
    "Exchange",
    "Finding",
    "FuzzConfig",
    "History",
    "Judge",
    "Observation",
    "Options",
    "Profile",
    "ReasoningItem",
    "Report",
    "Status",
    "Summary",
    "SystemMessage",
    "Target",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "Verdict",
    "Violation",
    "__version__",
    "cases",
    "check",
    "list_profiles",
    "load_profile",
    "oracle_names",
    "plans",
    "register",
    "replay_bundle",
    "replay_cassette",
    "resend_bundle",
    "run",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentfuzz' has no attribute {name!r}")
    module, attribute = home
    return getattr(importlib.import_module(f"agentfuzz.{module}"), attribute)
