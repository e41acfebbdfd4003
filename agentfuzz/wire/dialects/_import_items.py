"""What a captured body's history and tools are, read back: chat ``messages`` and Responses
``input`` as ``Item``s, declared tools as ``Tool``s, and which ``tool_choice`` the knob holds.
Errors say where they are (``messages[2].content``) and are raised as ``InputError``."""

from __future__ import annotations

from typing import Any

from agentfuzz.model.history import (
    AssistantMessage,
    ForeignItem,
    Item,
    ReasoningItem,
    SystemMessage,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.wire.dialects import _fields as _f
from agentfuzz.wire.dialects._wire import is_foreign_call

_MODES = ("auto", "none", "required")
_ROLES = ("user", "system", "developer", "assistant")


def _message(role: Any, content: Any, at: str) -> Item:
    if role not in _ROLES:
        _f.fail(at, f"unknown role {role!r:.40}")
    text = _f.text(content, f"{at}.content")
    if role == "user":
        return UserMessage(text=text)
    if role == "assistant":
        return AssistantMessage(text=text)
    return SystemMessage(text=text, role=role)


def _chat_call(raw: Any, at: str) -> ToolCall:
    call = _f.want(raw, dict, at)
    if call.get("type", "function") != "function":
        _f.fail(at, f"unsupported tool call type {call.get('type')!r:.40}")
    fn = _f.want(call.get("function"), dict, f"{at}.function")
    return ToolCall(
        id=_f.str_(call, "id", at, default=""),
        name=_f.str_(fn, "name", f"{at}.function"),
        arguments=_f.arguments(fn.get("arguments")),
    )


def _foreign_calls(msg: dict[str, Any]) -> bool:
    """Whether a chat assistant message calls a tool that is not a function (a custom one), or
    makes a legacy ``function_call``."""
    if msg.get("function_call") is not None:
        return True
    calls = msg.get("tool_calls")
    return isinstance(calls, list) and any(
        isinstance(c, dict) and is_foreign_call(c) for c in calls
    )


def chat_items(messages: list[Any], where: str) -> list[Item]:
    """Chat ``messages`` as history items; a custom or legacy call is kept as it came."""
    items: list[Item] = []
    for i, raw in enumerate(messages):
        at = f"{where}[{i}]"
        msg = _f.want(raw, dict, at)
        role, content = msg.get("role"), msg.get("content")
        if role == "tool":
            output = _f.text(content, f"{at}.content")
            items.append(ToolResult(call_id=_f.str_(msg, "tool_call_id", at, ""), output=output))
        elif role == "function" or (role == "assistant" and _foreign_calls(msg)):
            items.append(ForeignItem(body=msg))  # a custom or legacy call, kept as it came
        elif role == "assistant":
            key = "reasoning_content" if msg.get("reasoning_content") is not None else "reasoning"
            calls = _f.want(_f.get(msg, "tool_calls", []), list, f"{at}.tool_calls")
            items.append(
                AssistantMessage(
                    text=None if content is None else _f.text(content, f"{at}.content"),
                    reasoning=_f.opt_str(msg, key, at),
                    tool_calls=tuple(
                        _chat_call(c, f"{at}.tool_calls[{j}]") for j, c in enumerate(calls)
                    ),
                )
            )
        else:
            items.append(_message(role, content, at))
    return items


def _responses_item(obj: dict[str, Any], at: str, items: list[Item]) -> None:
    kind = obj.get("type", "message" if "role" in obj else None)
    if kind == "message":
        items.append(_message(obj.get("role"), obj.get("content"), at))
    elif kind == "function_call":
        call = ToolCall(
            id=_f.str_(obj, "call_id", at, default=""),
            name=_f.str_(obj, "name", at),
            namespace=_f.opt_str(obj, "namespace", at) or None,
            arguments=_f.arguments(obj.get("arguments")),
            item_id=_f.opt_str(obj, "id", at),
        )
        last = items[-1] if items else None
        # The builder sends an assistant turn as its message, then its calls: one item again.
        if isinstance(last, AssistantMessage):
            items[-1] = last.model_copy(update={"tool_calls": (*last.tool_calls, call)})
        else:
            items.append(AssistantMessage(tool_calls=(call,)))
    elif kind == "function_call_output":
        output = _f.text(obj.get("output"), f"{at}.output")
        items.append(ToolResult(call_id=_f.str_(obj, "call_id", at, default=""), output=output))
    elif kind == "reasoning":
        texts = [_f.text(_f.get(obj, k, []), f"{at}.{k}", "\n\n") for k in ("summary", "content")]
        text = "\n\n".join(t for t in texts if t)
        items.append(ReasoningItem(text=text, id=_f.opt_str(obj, "id", at)))
    elif isinstance(kind, str):
        # A hosted tool's call, a custom tool's call or output…: sent on as it came.
        items.append(ForeignItem(body=obj))
    else:
        _f.fail(at, "an input item needs a type")


def responses_items(value: Any, where: str) -> list[Item]:
    """A Responses ``input`` (a string, or an array of items) as history items."""
    if isinstance(value, str):
        return [UserMessage(text=value)]
    items: list[Item] = []
    for i, raw in enumerate(_f.want(value, list, where)):
        _responses_item(_f.want(raw, dict, f"{where}[{i}]"), f"{where}[{i}]", items)
    return items


def foreign_tool(raw: Any) -> bool:
    """Whether a declared tool is not a function nor a namespace (a hosted or custom tool)."""
    kind = raw.get("type", "function") if isinstance(raw, dict) else None
    return isinstance(kind, str) and kind not in ("function", "namespace")


def read_tools(raw: Any, where: str, namespace: str | None = None) -> list[Tool]:
    """The functions one declared tool stands for: itself, or a namespace's members."""
    spec = _f.want(raw, dict, where)
    kind = spec.get("type", "function")
    if kind == "namespace" and namespace is None:
        group = _f.str_(spec, "name", where)
        members = _f.want(spec.get("tools"), list, f"{where}.tools")
        return [
            t for j, m in enumerate(members) for t in read_tools(m, f"{where}.tools[{j}]", group)
        ]
    if kind != "function":
        _f.fail(where, f"unsupported tool type {kind!r:.40} inside a namespace")
    # Chat nests the function; Responses (and some chat clients) put it flat.
    at = f"{where}.function" if "function" in spec else where
    fn = _f.want(spec["function"], dict, at) if "function" in spec else spec
    params = fn.get("parameters")
    extra: dict[str, Any] = {}
    if params is not None:
        extra["parameters"] = _f.want(params, dict, f"{at}.parameters")
    strict = fn.get("strict")
    if strict is not None:
        extra["strict"] = _f.want(strict, bool, f"{at}.strict")
    name, description = _f.str_(fn, "name", at), _f.str_(fn, "description", at, default="")
    return [Tool(name=name, namespace=namespace, description=description, **extra)]


def knob_choice(value: Any) -> bool:
    """Whether a ``tool_choice`` is one the knob holds (a mode, a function by name); any other
    form (``allowed_tools``, a hosted tool, a function without a name) stays a wire field."""
    if value is None or value in _MODES:
        return True
    if not isinstance(value, dict) or value.get("type") != "function":
        return False
    named = value.get("function", value)
    return isinstance(named, dict) and isinstance(named.get("name"), str)


def tool_choice(value: Any) -> str | None:
    """The knob's value for a ``tool_choice`` it holds (``knob_choice``): a mode or a name."""
    if value is None or value in _MODES:
        return value  # type: ignore[no-any-return]
    named = value.get("function", value)
    return str(named["name"])
