"""Small helpers the oracle families share: declared tools, call lookup, quiet-turn tests."""

from __future__ import annotations

from agentfuzz.history import Case, Tool
from agentfuzz.observation import Observation, ObservedCall

__all__ = [
    "declared_tools",
    "find_tool",
    "format_constrained",
    "is_answer",
    "is_cut",
    "is_truncated",
    "one_line",
    "stop_requested",
]


def declared_tools(case: Case) -> tuple[Tool, ...]:
    """The tools the request actually carried: none when the case leaves ``tools`` out."""
    return case.history.tools if case.options.include_tools else ()


def find_tool(call: ObservedCall, tools: tuple[Tool, ...], api: str) -> Tool | None:
    """The declared tool a call names, by the dialect's own naming rule, or None.

    On Responses the (namespace, name) pair is matched first: a namespaced ``weather``
    ``send_email`` and a plain ``send_email`` can both be declared, with different schemas.
    """
    if api == "responses":
        for tool in tools:
            if (call.namespace, call.name) == (tool.namespace, tool.name):
                return tool
        if call.namespace is not None:
            # Some servers flatten the pair into one name; accept that form too.
            flat = f"{call.namespace}__{call.name}"
            return next((t for t in tools if t.flat_name == flat), None)
    return next((t for t in tools if call.name == t.flat_name), None)


def is_answer(obs: Observation) -> bool:
    """True when the server answered normally: no protocol fault and no legitimate refusal.

    Content oracles only judge such turns; a fault is the ``error`` oracle's to report,
    and judging a half-received turn as well would count one bug twice.
    """
    return not obs.errors and not obs.refused


def is_truncated(obs: Observation) -> bool:
    """True when the token limit cut the turn (chat ``length``, Responses ``incomplete``)."""
    return obs.finish_reason == "length" or obs.status == "incomplete"


def stop_requested(case: Case) -> bool:
    """True when the request carried stop strings: the answer may end wherever one matched."""
    return bool(case.options.fields.get("stop"))


def is_cut(case: Case, obs: Observation) -> bool:
    """True when the client's own limits may have ended the turn: the token budget ran out, or
    the request had stop strings (a stop ends the answer with ``finish_reason: stop``, so it
    cannot be seen in the answer)."""
    return is_truncated(obs) or stop_requested(case)


def format_constrained(case: Case) -> bool:
    """True when the request asked for a response format other than plain text."""
    fields = case.options.fields
    chat = fields.get("response_format")
    text = fields.get("text")
    wanted = [chat, text.get("format") if isinstance(text, dict) else None]
    return any(isinstance(f, dict) and f.get("type") != "text" for f in wanted)


def one_line(text: str, limit: int = 160) -> str:
    """``text`` squeezed onto one line and shortened, for a violation's message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
