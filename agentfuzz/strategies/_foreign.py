"""The surface dimensions that change the history itself: tools that are not functions,
functions declared ``strict``, and a message long enough to reach the context limit.

``custom_tools`` declares a custom tool (free text, or input held to a Lark or regex
grammar) after the functions, and may add a past call to it and its output at the end of the
history; ``hosted_tools`` (Responses) declares one of the tools the API runs itself (web and
file search, code interpreter, image generation, MCP, computer use, a local shell) and may
add a past call to it; ``strict_tools`` marks one function ``strict: true``, its schema
either made valid for strict mode (every property required, no others allowed) or left as it
is, which strict mode does not accept. Those are written in the case's own wire form
(``History.foreign_tools``, ``ForeignItem``), since no other dialect could carry them.
``legacy_functions`` (chat) declares the tools again the way the API did before ``tools``
(``functions``, ``function_call``), maybe with a past legacy call and its ``role: function``
result. ``long_text`` pads the last user message toward the profile's ``context_chars``: half of it,
just under, at, just over, or twice it (the plainest first).

Each is drawn like the rest of the surface (``strategies._surface``): allowed one time in
four, used one time in two, so left out seven times in eight, and every draw shrinks toward
left out, then toward the first entry of its catalogue and no past call.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agentfuzz.model.history import Api, ForeignItem, History, Item, Tool, UserMessage
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import FILLER, HISTORY_DIMENSIONS, applies
from agentfuzz.strategies._histories import _indexes
from agentfuzz.strategies._surface import ALLOWED

__all__ = ["CUSTOM_NAME", "extend_history", "strict_schema"]

Wire = dict[str, Any]

# Codex CLI's own custom tool: a patch in its envelope, held to a grammar or not.
CUSTOM_NAME = "apply_patch"
_PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch"
_LARK = 'start: "*** Begin Patch" LF body "*** End Patch"\nbody: /(.|\\n)*/\n%import common.LF'
_REGEX = r"\*\*\* Begin Patch\n[\s\S]*\*\*\* End Patch"
# The input formats a custom tool takes, plainest first: none given, free text, a grammar.
_CUSTOM_FORMATS: tuple[Wire | None, ...] = (
    None,
    {"type": "text"},
    {"type": "grammar", "syntax": "lark", "definition": _LARK},
    {"type": "grammar", "syntax": "regex", "definition": _REGEX},
)
_CALL_ID = "call_agentfuzz_custom"


def _custom_tool(api: Api, fmt: Wire | None) -> Wire:
    spec: Wire = {"name": CUSTOM_NAME, "description": "Apply a patch to the working tree."}
    if fmt is not None and api == "chat" and fmt["type"] == "grammar":
        # Chat nests the grammar one level deeper than Responses does.
        grammar = {k: v for k, v in fmt.items() if k != "type"}
        spec["format"] = {"type": "grammar", "grammar": grammar}
    elif fmt is not None:
        spec["format"] = dict(fmt)
    if api == "chat":
        return {"type": "custom", "custom": spec}
    return {"type": "custom", **spec}


def _custom_call(api: Api) -> tuple[Wire, Wire]:
    if api == "chat":
        call = {"id": _CALL_ID, "type": "custom", "custom": {"name": CUSTOM_NAME, "input": _PATCH}}
        return (
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": _CALL_ID, "content": "Done."},
        )
    return (
        {"type": "custom_tool_call", "call_id": _CALL_ID, "name": CUSTOM_NAME, "input": _PATCH},
        {"type": "custom_tool_call_output", "call_id": _CALL_ID, "output": "Done."},
    )


_DONE = {"status": "completed"}
# The hosted tools of the Responses API, plainest first, each with a past call to it when one
# can be written without the tool's own output (a computer call needs a screenshot back).
_HOSTED: tuple[tuple[Wire, tuple[Wire, ...]], ...] = (
    (
        {"type": "web_search_preview"},
        (
            {
                "type": "web_search_call",
                "id": "ws_agentfuzz0001",
                **_DONE,
                "action": {"type": "search", "query": "weather in Paris"},
            },
        ),
    ),
    (
        {"type": "web_search"},
        (
            {
                "type": "web_search_call",
                "id": "ws_agentfuzz0002",
                **_DONE,
                "action": {"type": "search", "query": "weather in Paris"},
            },
        ),
    ),
    (
        {"type": "file_search", "vector_store_ids": ["vs_agentfuzz"]},
        ({"type": "file_search_call", "id": "fs_agentfuzz0001", **_DONE, "queries": ["weather"]},),
    ),
    (
        {"type": "code_interpreter", "container": {"type": "auto"}},
        (
            {
                "type": "code_interpreter_call",
                "id": "ci_agentfuzz0001",
                **_DONE,
                "code": "print(6 * 7)",
                "container_id": "cntr_agentfuzz",
                "outputs": [{"type": "logs", "logs": "42"}],
            },
        ),
    ),
    (
        {"type": "image_generation"},
        ({"type": "image_generation_call", "id": "ig_agentfuzz0001", **_DONE, "result": None},),
    ),
    (
        {
            "type": "mcp",
            "server_label": "agentfuzz",
            "server_url": "https://mcp.agentfuzz.invalid/sse",
            "require_approval": "never",
        },
        (
            {
                "type": "mcp_call",
                "id": "mcp_agentfuzz0001",
                "server_label": "agentfuzz",
                "name": "lookup",
                "arguments": "{}",
                "output": "nothing found",
            },
        ),
    ),
    (
        {
            "type": "computer_use_preview",
            "display_width": 1024,
            "display_height": 768,
            "environment": "linux",
        },
        (),
    ),
    (
        {"type": "local_shell"},
        (
            {
                "type": "local_shell_call",
                "id": "lsh_agentfuzz0001",
                "call_id": "call_agentfuzz_shell",
                **_DONE,
                "action": {"type": "exec", "command": ["ls"], "env": {}},
            },
            {"type": "local_shell_call_output", "id": "call_agentfuzz_shell", "output": "a.txt"},
        ),
    ),
)


# Keywords whose value maps names to schemas (not a schema itself), and those holding values.
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
_VALUES = ("enum", "const", "default", "examples")


def strict_schema(schema: Wire) -> Wire:
    """``schema`` as strict mode wants it: each object's properties all required and no
    others allowed, all the way down (``$defs`` too)."""
    out: Wire = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strict_value(sub) for name, sub in value.items()}
        elif key in _VALUES:
            out[key] = value
        else:
            out[key] = _strict_value(value)
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties")
        out["required"] = list(props) if isinstance(props, dict) else []
        out["additionalProperties"] = False
    return out


def _strict_value(value: Any) -> Any:
    """A sub-schema made strict; a list (``anyOf``, ``items`` tuples) entry by entry."""
    if isinstance(value, dict):
        return strict_schema(value)
    if isinstance(value, list):
        return [_strict_value(v) for v in value]
    return value


def _strict(draw: st.DrawFn, history: History) -> History:
    if not history.tools:
        return history
    at = draw(_indexes(len(history.tools)))
    tool: Tool = history.tools[at]
    valid = draw(st.booleans())
    params = strict_schema(tool.parameters) if valid else tool.parameters
    marked = tool.model_copy(update={"strict": True, "parameters": params})
    return history.model_copy(
        update={"tools": (*history.tools[:at], marked, *history.tools[at + 1 :])}
    )


def _with_past(history: History, past: tuple[Wire, ...]) -> History:
    """``history`` with ``past`` (wire entries) appended as ``ForeignItem``s."""
    items: tuple[Item, ...] = (*history.items, *(ForeignItem(body=dict(b)) for b in past))
    return history.model_copy(update={"items": items})


def _extended(history: History, declared: Wire, past: tuple[Wire, ...]) -> History:
    foreign = (*history.foreign_tools, declared)
    return _with_past(history.model_copy(update={"foreign_tools": foreign}), past)


def _custom(draw: st.DrawFn, api: Api, history: History) -> History:
    fmt = _CUSTOM_FORMATS[draw(_indexes(len(_CUSTOM_FORMATS)))]
    past = _custom_call(api) if draw(st.booleans()) else ()
    return _extended(history, _custom_tool(api, fmt), past)


def _hosted(draw: st.DrawFn, history: History) -> History:
    declared, calls = _HOSTED[draw(_indexes(len(_HOSTED)))]
    with_call: bool = bool(calls) and draw(st.booleans())
    return _extended(history, dict(declared), calls if with_call else ())


def _legacy(draw: st.DrawFn, history: History) -> tuple[History, Wire]:
    """The tools declared again as legacy ``functions``, with a ``function_call`` or not, and
    maybe a past legacy call to the first one and its ``role: function`` result."""
    if not history.tools:
        return history, {}
    functions = [
        {"name": t.flat_name, "description": t.description, "parameters": t.parameters}
        for t in history.tools
    ]
    name = history.tools[0].flat_name
    choices: tuple[Wire, ...] = ({}, {"function_call": "auto"}, {"function_call": "none"})
    choices += ({"function_call": {"name": name}},)
    fields = {"functions": functions, **choices[draw(_indexes(len(choices)))]}
    if not draw(st.booleans()):
        return history, fields
    past = (
        {"role": "assistant", "content": None, "function_call": {"name": name, "arguments": "{}"}},
        {"role": "function", "name": name, "content": '{"ok": true}'},
    )
    return _with_past(history, past), fields


# How long a padded message is, as a share of the profile's context_chars, plainest first.
_SHARES = (0.5, 0.9, 1.0, 1.1, 2.0)


def _long(draw: st.DrawFn, profile: Profile, history: History) -> History:
    users = [i for i, item in enumerate(history.items) if isinstance(item, UserMessage)]
    if not users:
        return history
    share = _SHARES[draw(_indexes(len(_SHARES)))]
    at = users[-1]
    last = history.items[at]
    assert isinstance(last, UserMessage)
    # The padding first, the request itself last, where a model reads it.
    size = int(profile.context_chars * share)
    padded = last.model_copy(
        update={"text": (FILLER * (size // len(FILLER) + 1))[:size] + last.text}
    )
    return history.model_copy(
        update={"items": (*history.items[:at], padded, *history.items[at + 1 :])}
    )


def extend_history(
    draw: st.DrawFn, profile: Profile, api: Api, stream: bool, history: History
) -> tuple[History, Wire]:
    """``history`` with the profile's history dimensions drawn onto it (each left out seven
    times in eight), and the top-level fields they add (legacy ``functions``); shrinks toward
    ``history`` unchanged and no field."""
    names = [n for n in HISTORY_DIMENSIONS if n in profile.surface and applies(n, api, stream)]
    fields: Wire = {}
    for name in names:
        if draw(ALLOWED) != 3 or not draw(st.booleans()):
            continue
        if name == "strict_tools":
            history = _strict(draw, history)
        elif name == "custom_tools":
            history = _custom(draw, api, history)
        elif name == "long_text":
            history = _long(draw, profile, history)
        elif name == "hosted_tools":
            history = _hosted(draw, history)
        elif name == "legacy_functions":
            history, fields = _legacy(draw, history)
    return history, fields
