"""Oracles on the tool calls themselves: ``bad_arguments``, ``unknown_tool``, ``tool_choice``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from agentfuzz.model.history import Case, Tool
from agentfuzz.model.observation import Observation, ObservedCall, Violation
from agentfuzz.oracles._common import (
    budgeted,
    declared_tools,
    find_tool,
    forced,
    format_constrained,
    is_answer,
    is_cut,
    one_line,
    stop_requested,
)
from agentfuzz.oracles._registry import clip, register
from agentfuzz.puppet.scripted import carried

__all__ = ["bad_arguments", "tool_choice", "unknown_tool"]

_VALIDATORS: dict[str, Draft202012Validator | None] = {}
_CACHE_LIMIT = 512


def _validator(schema: dict[str, Any]) -> Draft202012Validator | None:
    """A compiled validator per distinct schema; None when the client's schema is itself invalid."""
    key = json.dumps(schema, sort_keys=True, default=repr)
    if key not in _VALIDATORS:
        if len(_VALIDATORS) >= _CACHE_LIMIT:
            _VALIDATORS.clear()
        try:
            Draft202012Validator.check_schema(schema)
            _VALIDATORS[key] = Draft202012Validator(schema)
        except Exception:
            # A fuzzed schema the client sent is not the server's fault: check JSON-ness only.
            _VALIDATORS[key] = None
    return _VALIDATORS[key]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _argument_fault(call: ObservedCall, tool: Tool | None) -> tuple[str, str] | None:
    """What is wrong with a call's arguments, as (signature suffix, detail), or None."""
    try:
        value = json.loads(call.arguments, parse_constant=_reject_constant)
    except ValueError as exc:
        return "not_json", str(exc)
    if isinstance(value, str) and _is_object(value):
        return "double_encoded", "arguments are a JSON string holding a JSON object"
    if not isinstance(value, dict):
        return "not_object", f"arguments are a JSON {type(value).__name__}, not an object"
    validator = _validator(tool.parameters) if tool is not None else None
    if validator is None:
        return None
    try:
        worst = best_match(validator.iter_errors(value))
    except Exception:
        # Unresolvable $ref, bad regex in "pattern"…: again the client's schema, not the answer.
        return None
    if worst is None:
        return None
    return f"schema:{worst.validator}", f"{worst.json_path}: {worst.message}"


@register(
    "bad_arguments",
    expected="Tool-call arguments are a JSON object that matches the tool's schema.",
    look_for="arguments that are not a JSON object matching the schema",
    rank=90,
)
def bad_arguments(case: Case, obs: Observation) -> Iterator[Violation]:
    """Arguments must be a JSON object matching the declared tool's ``parameters`` schema.

    Skipped for turns the client's limits may have cut (the token limit, stop strings): a
    truncated call there is what was asked for.
    Only JSON-ness is a promise every server makes; an object, and one matching the schema,
    is a promise only where the server constrains the arguments (structured outputs,
    ``strict``). Against a real model that writes its arguments freely,
    ``bad_arguments:schema`` and ``bad_arguments:not_object`` (a string, a number) are the
    model's answer, and this oracle cannot tell them from a server's fault: a target's fuzz
    profile says which they are. A JSON string that holds a JSON object is
    ``bad_arguments:double_encoded``: arguments encoded twice, which is a server's doing. A
    call to a tool declared ``strict: true`` is signed ``bad_arguments:strict:…``: there the
    server promised the schema, whoever writes the arguments.
    """
    if not is_answer(obs) or is_cut(case, obs):
        return
    tools = declared_tools(case)
    for n, call in enumerate(obs.tool_calls):
        tool = find_tool(call, tools, obs.api)
        fault = _argument_fault(call, tool)
        if fault is None:
            continue
        kind, detail = fault
        if tool is not None and tool.strict:
            kind = f"strict:{kind}"
        yield Violation(
            oracle="bad_arguments",
            message=f"tool call {n} ({call.name!r}) arguments rejected: {one_line(detail)}",
            evidence=clip(f"{call.name}: {call.arguments!r} — {detail}"),
            signature=f"bad_arguments:{kind}",
        )


def _unknown_kind(call: ObservedCall, tools: tuple[Tool, ...]) -> str:
    """How an undeclared name relates to the declared ones: the shape of the bug."""
    name = call.name or ""
    if not tools:
        return "no_tools_sent"
    if not name.strip():
        return "empty_name"
    if any(t.namespace and name in (t.name, f"{t.namespace}.{t.name}") for t in tools):
        return "namespace_mismatch"
    if any(t.flat_name.endswith((f".{name}", f"/{name}", f"__{name}")) for t in tools):
        return "truncated"
    return "undeclared"


@register(
    "unknown_tool",
    expected="Calls name only tools the request declared.",
    look_for="a call to a tool the request did not declare",
    rank=80,
    # A call to a name never declared is, under a tool_choice that names or allows declared
    # tools, a call to another tool: that complaint says nothing more than this one does.
    implies={
        f"unknown_tool:{kind}": ("tool_choice:named:other_name", "tool_choice:allowed:other_name")
        for kind in ("truncated", "undeclared", "namespace_mismatch", "empty_name")
    },
)
def unknown_tool(case: Case, obs: Observation) -> Iterator[Violation]:
    """A call to a name the request never declared (dotted names cut to their last segment…).

    A name a puppet script made the model write (``--puppet``) is the model's doing: what a
    server does with it is ``puppet_truth``'s question, and an open one. So is, under a token
    budget or stop strings, a name the cut may have left of a written one (a prefix of it):
    ``puppet_cut`` judges whether the answer said it was cut. Not when the request sent no
    tools: then no parser was to take a call out at all, whatever the model wrote."""
    if not is_answer(obs):
        return
    tools = declared_tools(case)
    declared = ", ".join(t.flat_name for t in tools) or "no tools sent"
    scripted = carried(case.options.fields) if tools else None
    written = {c.name for c in scripted[1].calls} if scripted is not None else set()
    cut = bool(written) and (stop_requested(case) or budgeted(case))
    for n, call in enumerate(obs.tool_calls):
        if find_tool(call, tools, obs.api) is not None or call.flat_name in written:
            continue
        if cut and any(name.startswith(call.flat_name or "") for name in written):
            continue
        shown = f"{call.namespace}/{call.name}" if call.namespace else call.name
        yield Violation(
            oracle="unknown_tool",
            message=f"tool call {n} names {shown!r}, which was never declared",
            evidence=clip(f"called {shown!r}; declared: {declared}"),
            signature=f"unknown_tool:{_unknown_kind(call, tools)}",
        )


def _flat(call: ObservedCall) -> str:
    return f"{call.namespace}__{call.name}" if call.namespace else call.name or ""


@register(
    "tool_choice",
    expected="`tool_choice` is honoured: no call under `none`, at least one under "
    "`required`, the named tool when one is named.",
    look_for="calls that break the request's tool_choice",
    rank=100,
)
def tool_choice(case: Case, obs: Observation) -> Iterator[Violation]:
    """Calls must honour ``tool_choice``: none means none, required means one, a name means it.

    Only ``finish_reason`` is not judged: OpenAI itself ends a forced named call with "stop".
    Turns cut by the token limit are not judged either: a forced call that ran out of tokens
    has no whole call to give back, and what the server shows instead (raw markup, nothing)
    is ``leaked_markup``'s and ``empty_turn``'s to report, with ``:truncated`` signatures.
    Nor are requests with stop strings (a stop can end the turn before its call), nor those
    asking for a response format besides tools (the two asks conflict, and servers differ
    on which wins).

    ``allowed_tools`` is judged in ``required`` mode only: a call must come back, to an allowed
    tool. In ``auto`` mode a model may write any name it read in the history, and only a
    server that constrains the names could promise otherwise. Forms no answer can honour
    (an undeclared function…) are the ``error`` oracle's: the server should refuse them.
    """
    wanted = forced(case)
    if wanted is None or wanted.mode == "auto" or not is_answer(obs):
        return
    if is_cut(case, obs) or format_constrained(case):
        return
    called = [_flat(c) for c in obs.tool_calls]
    choice = wanted.name if wanted.mode == "named" else wanted.mode
    if wanted.allowed is not None:
        yield from _allowed(wanted.allowed, called, obs)
    elif choice == "none" and called:
        yield _choice(
            "none", f'tool_choice "none" but {len(called)} call(s) came back', f"calls: {called}"
        )
    elif choice == "required" and not called:
        yield _choice(
            "required", 'tool_choice "required" but no call came back', f"text: {obs.text!r}"
        )
    elif choice not in ("none", "required"):
        others = [c.name for c in obs.tool_calls if choice not in (c.name, _flat(c))]
        if not called:
            yield _choice(
                "named:no_call",
                f"tool_choice {choice!r} but no call came back",
                f"text: {obs.text!r}",
            )
        elif others:
            yield _choice(
                "named:other_name",
                f"tool_choice {choice!r} but the turn called another tool",
                f"forced {choice!r}; called {called}",
            )


def _allowed(allowed: tuple[str, ...], called: list[str], obs: Observation) -> Iterator[Violation]:
    """``allowed_tools`` in ``required`` mode: at least one call, each to an allowed tool."""
    if not called:
        yield _choice(
            "allowed:no_call",
            f"allowed_tools {list(allowed)} required but no call came back",
            f"text: {obs.text!r}",
        )
    elif others := [c for c in called if c not in allowed]:
        yield _choice(
            "allowed:other_name",
            f"allowed_tools {list(allowed)} required but the turn called {others}",
            f"allowed {list(allowed)}; called {called}",
        )


def _choice(kind: str, message: str, evidence: str) -> Violation:
    return Violation(
        oracle="tool_choice",
        message=message,
        evidence=clip(evidence),
        signature=f"tool_choice:{kind}",
    )
