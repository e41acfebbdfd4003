"""Tool-call ids as a report shows them: each classified by ``request.ids`` into the family
whose shape it has, so a reader sees at a glance that a server minted ``call_<16 hex>`` where
Kimi's template expects ``functions.NAME:IDX``."""

from __future__ import annotations

import re

from agentfuzz.request.ids import ADVERSARIAL, recognize

__all__ = ["ID_IN_TEXT", "family", "group"]

# Id-like tokens inside free text (leaked markup, an error message, evidence).
ID_IN_TEXT = re.compile(
    r"functions[.][\w.\-/]+:\d+"
    r"|(?:call|fc|toolu|tooluse)_[A-Za-z0-9_\-]+(?::\d+)?"
    r"|chatcmpl-tool-[0-9a-f]+"
)


def family(id: str) -> str:
    """The id family ``agentfuzz.request.ids.recognize`` names, or ``unknown shape``."""
    return recognize(id) or "unknown shape"


def group(name: str) -> str:
    """The colour group of a family: who mints ids of that shape."""
    if name.startswith("openai"):
        return "openai"
    if name.startswith("vllm"):
        return "vllm"
    if name.startswith("kimi"):
        return "kimi"
    if name in ADVERSARIAL or name == "unknown shape":
        return "odd"
    return "other"
