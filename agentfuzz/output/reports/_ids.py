"""Tool-call ids as a report shows them: each classified by ``request.ids`` into the family
whose shape it has, so a reader sees at a glance that a server minted ``call_<16 hex>`` where
Kimi's template expects ``functions.NAME:IDX``.

An id is judged by the API it was sent on: on chat completions only the chat families apply,
so a chat ``call_0`` (a plain id the reducer wrote) is no Responses ``call_id``."""

from __future__ import annotations

import re

from agentfuzz.request.ids import ADVERSARIAL, recognize

__all__ = ["ID_IN_TEXT", "RESPONSES_ONLY", "family", "group"]

# Families only the Responses API mints (DESIGN.md's id table): never a chat id's family.
RESPONSES_ONLY = frozenset({"openai_responses", "vllm_responses", "vllm_responses_stream"})

# Id-like tokens inside free text (leaked markup, an error message, evidence).
ID_IN_TEXT = re.compile(
    r"functions[.][\w.\-/]+:\d+"
    r"|(?:call|fc|toolu|tooluse)_[A-Za-z0-9_\-]+(?::\d+)?"
    r"|chatcmpl-tool-[0-9a-f]+"
)


def family(id: str, api: object = None) -> str:
    """The id family ``agentfuzz.request.ids.recognize`` names, or ``unknown shape``; on
    ``api`` ``chat``, a Responses-only family is no answer: the id then has no known chat
    shape, and only its length can still be odd."""
    name = recognize(id)
    if api == "chat" and name in RESPONSES_ONLY:
        name = "over_64" if len(id) > 64 else "over_40" if len(id) > 40 else None
    return name or "unknown shape"


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
