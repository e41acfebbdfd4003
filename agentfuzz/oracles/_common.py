"""Small helpers the oracle families share: declared tools, call lookup, quiet-turn tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentfuzz.model.history import Case, Tool
from agentfuzz.model.observation import Observation, ObservedCall
from agentfuzz.puppet.surface import CONSTRAINTS, format_asked

__all__ = [
    "TERMINAL_EVENTS",
    "Forced",
    "declared_tools",
    "find_tool",
    "forced",
    "format_constrained",
    "integer",
    "is_answer",
    "is_cut",
    "is_truncated",
    "one_line",
    "stop_requested",
    "usages",
]

# The events that end a Responses stream, one of them last.
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def declared_tools(case: Case) -> tuple[Tool, ...]:
    """The tools the request actually carried: none when the case leaves ``tools`` out, or
    when its surface sent an empty list in their place."""
    if not case.options.include_tools or case.options.fields.get("tools") == []:
        return ()
    return case.history.tools


@dataclass(frozen=True)
class Forced:
    """What a request's ``tool_choice`` asks of the answer, as an oracle can judge it.

    ``mode``: ``auto``, ``none``, ``required`` or ``named`` (``name``: the flat name of the one
    tool to call); ``allowed``: the flat names an ``allowed_tools`` choice limits calls to.
    ``None`` from ``forced`` means a form no answer can be held to (an undeclared or nameless
    function, a hosted tool, a choice without tools): the server should refuse it, and only
    the ``error`` oracle judges what it did.
    """

    mode: str
    name: str | None = None
    allowed: tuple[str, ...] | None = None


def _function_name(raw: dict[str, Any], api: str) -> Any:
    fn = raw.get("function") if api == "chat" else raw
    return fn.get("name") if isinstance(fn, dict) else None


def _resolve(name: Any, tools: tuple[Tool, ...]) -> str | None:
    """The flat name of the one declared tool ``name`` means: its flat name, or its own name
    inside its namespace, when only one tool answers to it."""
    if not isinstance(name, str):
        return None
    flat = [t.flat_name for t in tools if t.flat_name == name]
    inner = [t.flat_name for t in tools if t.namespace and t.name == name]
    # A name two tools could own (a plain get_weather and a namespaced one) is not judged: a
    # server may take either.
    meant = flat + inner
    return meant[0] if len(meant) == 1 else None


def forced(case: Case) -> Forced | None:
    """The ``tool_choice`` the request carried, read from its wire field when the surface set
    one (``allowed_tools``, a function named by its namespace-native name…), else the knob.

    With a custom or hosted tool declared beside the functions, only ``none`` and a named
    function are judged: a call to such a tool may answer ``required``, and agentfuzz does
    not read those calls as function calls.
    """
    found = _forced(case)
    if found is None or not case.history.foreign_tools:
        return found
    return found if found.mode in ("none", "named") else None


def _forced(case: Case) -> Forced | None:
    tools = declared_tools(case)
    if "tool_choice" not in case.options.fields:
        choice = case.options.tool_choice
        if choice is None or not tools:
            return Forced("auto") if tools else None
        return Forced(choice) if choice in ("auto", "none", "required") else Forced("named", choice)
    raw = case.options.fields["tool_choice"]
    if not tools:
        return None
    if raw in ("auto", "none", "required"):
        return Forced(str(raw))
    if not isinstance(raw, dict):
        return None
    if raw.get("type") == "function":
        name = _resolve(_function_name(raw, case.api), tools)
        return None if name is None else Forced("named", name)
    if raw.get("type") != "allowed_tools":
        return None
    spec = raw.get("allowed_tools") if case.api == "chat" else raw
    if not isinstance(spec, dict) or spec.get("mode") not in ("auto", "required"):
        return None
    refs = spec.get("tools")
    if not isinstance(refs, list) or not refs:
        return None
    names = [_resolve(_function_name(r, case.api), tools) for r in refs if isinstance(r, dict)]
    if None in names or len(names) != len(refs):
        return None
    return Forced(str(spec["mode"]), allowed=tuple(n for n in names if n is not None))


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


# The request fields that set a token budget: chat's two, Responses' one.
BUDGETS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def budgeted(case: Case) -> bool:
    """True when the request set a token budget (``max_tokens`` or a budget field)."""
    fields = case.options.fields
    return case.options.max_tokens is not None or any(f in fields for f in BUDGETS)


def is_cut(case: Case, obs: Observation) -> bool:
    """True when the client's own limits may have ended the turn: the token budget ran out, or
    the request had stop strings (a stop ends the answer with ``finish_reason: stop``, so it
    cannot be seen in the answer)."""
    return is_truncated(obs) or stop_requested(case)


def format_constrained(case: Case) -> bool:
    """True when the request asked for a response format other than plain text (a response
    format, or a server's own structured-output field)."""
    fields = case.options.fields
    return any(fields.get(key) for key in CONSTRAINTS) or format_asked(fields) is not None


def one_line(text: str, limit: int = 160) -> str:
    """``text`` squeezed onto one line and shortened, for a violation's message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def integer(value: Any) -> int | None:
    """``value`` when it is a JSON integer (a bool is not), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usages(obs: Observation) -> Iterator[dict[str, Any]]:
    """Every ``usage`` object the answer carried: a chat body's or chunk's, or a response's."""
    for payload in obs.payloads:
        if not isinstance(payload, dict):
            continue
        usage = payload.get("usage")
        response = payload.get("response")
        if usage is None and isinstance(response, dict):
            usage = response.get("usage")
        if isinstance(usage, dict):
            yield usage
