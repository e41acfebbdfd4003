"""Request intake: raw chat or Responses JSON read into one neutral ``Intake`` for the pipeline.

Both endpoints end up as a chat-style message list, the way vLLM builds chat messages from a
Responses ``input`` before templating. Input that no server could answer is refused with a
``BadRequest`` (a 400 with a JSON body); odd but well-typed histories (orphan results, calls
without results, empty or duplicate ids, malformed arguments) are accepted as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .knobs import Knobs, read_knobs
from .refusal import BadRequest, need
from .script import Script, read_script

__all__ = [
    "BadRequest",
    "Call",
    "Choice",
    "Intake",
    "Message",
    "ToolSpec",
    "parse_chat",
    "parse_responses",
]

Api = Literal["chat", "responses"]
_CHAT_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


@dataclass(frozen=True)
class ToolSpec:
    """A declared function; ``name`` is the flat name templates and parsers use."""

    name: str
    inner: str
    namespace: str | None
    description: str
    parameters: dict[str, Any]


@dataclass
class Call:
    """One tool call in history, as the chat template sees it."""

    id: str
    name: str
    arguments: str


@dataclass
class Message:
    """One chat-style message: system, user, assistant (maybe with calls) or tool."""

    role: str
    content: str = ""
    tool_calls: list[Call] = field(default_factory=list)
    tool_call_id: str | None = None
    reasoning: str | None = None


@dataclass(frozen=True)
class Choice:
    """The request's ``tool_choice``; ``name`` is the flat name when ``mode`` is ``named``;
    ``allowed`` the flat names an ``allowed_tools`` choice offers the model (None: all)."""

    mode: Literal["auto", "none", "required", "named"] = "auto"
    name: str | None = None
    allowed: tuple[str, ...] | None = None
    raw: Any = None


@dataclass
class Intake:
    """Everything the pipeline needs from one request."""

    api: Api
    model: str
    messages: list[Message]
    tools: list[ToolSpec] | None
    choice: Choice
    stream: bool
    knobs: Knobs = field(default_factory=Knobs)
    # What the puppet model writes, when the request carries a script (``vllm_xargs``).
    script: Script | None = None


_TEXT_PARTS = ("text", "input_text", "output_text", "summary_text", "reasoning_text")


def _text(content: Any, where: str) -> str:
    """Flatten string-or-parts content; text parts are joined, any other part is refused
    (this model reads text only), as is a part without a type."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    need(isinstance(content, list), f"{where}: content must be a string or a list of parts")
    texts = []
    for part in content:
        need(isinstance(part, dict), f"{where}: bad part")
        kind = part.get("type")
        need(isinstance(kind, str), f"{where}: a content part needs a type")
        need(kind in _TEXT_PARTS, f"{where}: content part {kind!r} is not supported")
        need(isinstance(part.get("text"), str), f"{where}: a {kind} part needs its text")
        texts.append(part["text"])
    return "".join(texts)


def _arguments(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    need(isinstance(value, dict), f"{where}: arguments must be a string")
    return json.dumps(value, ensure_ascii=False)


def _common(body: Any) -> tuple[str, bool]:
    need(isinstance(body, dict), "request body must be a JSON object")
    model = body.get("model", "reference")
    need(isinstance(model, str), "model must be a string")
    stream = body.get("stream", False)
    need(isinstance(stream, bool) or stream is None, "stream must be a boolean")
    temperature = body.get("temperature")
    need(
        temperature is None
        or (isinstance(temperature, int | float) and not isinstance(temperature, bool)),
        "temperature must be a number",
    )
    for knob in ("max_tokens", "max_output_tokens", "max_completion_tokens", "seed"):
        value = body.get(knob)
        need(
            value is None or (isinstance(value, int) and not isinstance(value, bool)),
            f"{knob} must be an integer",
        )
    return model, bool(stream)


# What this server takes as a function name: 1 to 64 characters, none of them space or the
# brackets and bar its chat template's special tokens are made of.
_NAME = re.compile(r"[^\s<>|｜]{1,64}")


def _function_spec(fn: Any, namespace: str | None, where: str) -> ToolSpec:
    need(isinstance(fn, dict) and isinstance(fn.get("name"), str), f"{where}: name is required")
    need(
        _NAME.fullmatch(fn["name"]) is not None,
        f"{where}: {fn['name'][:80]!r} is not a function name this server takes"
        " (1 to 64 characters, no spaces, no < > |)",
    )
    params = fn.get("parameters")
    need(params is None or isinstance(params, dict), f"{where}: parameters must be an object")
    desc = fn.get("description")
    name = fn["name"]
    return ToolSpec(
        name=f"{namespace}__{name}" if namespace else name,
        inner=name,
        namespace=namespace,
        description=desc if isinstance(desc, str) else "",
        parameters=params or {"type": "object", "properties": {}},
    )


def _declared(wanted: Any, tools: list[ToolSpec] | None, where: str) -> str:
    """The flat name of the declared tool ``wanted`` names: by its flat name, or by its own
    name inside a namespace when just one tool has it."""
    need(isinstance(wanted, str), f"{where}: function name is required")
    specs = tools or []
    if any(spec.name == wanted for spec in specs):
        return str(wanted)
    inner = [spec.name for spec in specs if spec.inner == wanted]
    need(len(inner) < 2, f"{where}: {wanted!r} is in more than one namespace")
    if not inner:
        raise BadRequest(f"{where} names {wanted!r}, which is not a declared tool")
    return inner[0]


def _allowed(raw: dict[str, Any], tools: list[ToolSpec] | None, api: Api) -> Choice:
    spec: Any = raw.get("allowed_tools") if api == "chat" else raw
    need(isinstance(spec, dict), "tool_choice.allowed_tools must be an object")
    mode: Any = spec.get("mode")
    need(mode in ("auto", "required"), "tool_choice: allowed_tools mode is auto or required")
    refs = spec.get("tools")
    need(isinstance(refs, list) and bool(refs), "tool_choice: allowed_tools needs tools")
    need(bool(tools), "tool_choice: allowed_tools needs declared tools")
    names = []
    for ref in refs:
        need(isinstance(ref, dict) and ref.get("type") == "function", "allowed_tools: bad tool")
        fn: Any = ref.get("function") if api == "chat" else ref
        need(isinstance(fn, dict), "allowed_tools: bad tool")
        names.append(_declared(fn.get("name"), tools, "tool_choice.allowed_tools"))
    return Choice(mode, allowed=tuple(dict.fromkeys(names)), raw=raw)


def _choice(raw: Any, tools: list[ToolSpec] | None, api: Api) -> Choice:
    if raw is None:
        return Choice("auto")
    if raw in ("auto", "none", "required"):
        need(raw != "required" or bool(tools), "tool_choice 'required' needs tools")
        return Choice(raw)
    need(isinstance(raw, dict), "unsupported tool_choice")
    if raw.get("type") == "allowed_tools":
        return _allowed(raw, tools, api)
    need(raw.get("type") == "function", "unsupported tool_choice")
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    return Choice("named", _declared(fn.get("name"), tools, "tool_choice"), raw=raw)


# The reference model's context: 8192 tokens of four characters each, counted on the texts.
CONTEXT_CHARS = 32768


def _within_context(messages: list[Message]) -> None:
    size = sum(len(m.content) for m in messages)
    need(
        size <= CONTEXT_CHARS,
        f"the messages hold {size} characters; this model's context holds {CONTEXT_CHARS}",
    )


def parse_chat(body: Any) -> Intake:
    """Read a ``/v1/chat/completions`` body."""
    model, stream = _common(body)
    raw_messages = body.get("messages")
    need(isinstance(raw_messages, list) and bool(raw_messages), "messages must be a non-empty list")
    messages = [_chat_message(m, i) for i, m in enumerate(raw_messages)]
    raw_tools = body.get("tools")
    need(raw_tools is None or isinstance(raw_tools, list), "tools must be a list")
    tools = None
    if raw_tools:
        tools = []
        for i, tool in enumerate(raw_tools):
            where = f"tools[{i}]"
            need(isinstance(tool, dict) and tool.get("type") == "function", f"{where}: bad tool")
            tools.append(_function_spec(tool.get("function"), None, where))
    choice = _choice(body.get("tool_choice"), tools, "chat")
    _within_context(messages)
    script = read_script(body)
    knobs = read_knobs(body, "chat", stream, scripted=script is not None)
    return Intake("chat", model, messages, tools, choice, stream, knobs, script)


def _chat_message(raw: Any, i: int) -> Message:
    where = f"messages[{i}]"
    need(isinstance(raw, dict), f"{where} must be an object")
    role = raw.get("role")
    if role == "tool":
        need(isinstance(raw.get("tool_call_id"), str), f"{where}: tool_call_id is required")
        return Message("tool", _text(raw.get("content"), where), tool_call_id=raw["tool_call_id"])
    need(role in _CHAT_ROLES, f"{where}: unknown role {role!r}")
    msg = Message(_CHAT_ROLES[role], _text(raw.get("content"), where))
    if role != "assistant":
        return msg
    reasoning = raw.get("reasoning_content", raw.get("reasoning"))
    need(reasoning is None or isinstance(reasoning, str), f"{where}: reasoning must be a string")
    msg.reasoning = reasoning or None
    calls = raw.get("tool_calls") or []
    need(isinstance(calls, list), f"{where}: tool_calls must be a list")
    for j, call in enumerate(calls):
        cw = f"{where}.tool_calls[{j}]"
        need(isinstance(call, dict) and isinstance(call.get("id"), str), f"{cw}: id is required")
        fn = call.get("function")
        need(isinstance(fn, dict) and isinstance(fn.get("name"), str), f"{cw}: name is required")
        msg.tool_calls.append(Call(call["id"], fn["name"], _arguments(fn.get("arguments"), cw)))
    return msg


def parse_responses(body: Any) -> Intake:
    """Read a ``/v1/responses`` body (stateless: ``previous_response_id`` is refused)."""
    model, stream = _common(body)
    need(body.get("previous_response_id") is None, "previous_response_id is not supported")
    messages: list[Message] = []
    instructions = body.get("instructions")
    need(instructions is None or isinstance(instructions, str), "instructions must be a string")
    if instructions:
        messages.append(Message("system", instructions))
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        messages.append(Message("user", raw_input))
    else:
        need(isinstance(raw_input, list) and bool(raw_input), "input must be a string or a list")
        _input_items(raw_input, messages)
    tools = _responses_tools(body.get("tools"))
    choice = _choice(body.get("tool_choice"), tools, "responses")
    script = read_script(body)
    knobs = read_knobs(body, "responses", stream, scripted=script is not None)
    _within_context(messages)
    return Intake("responses", model, messages, tools, choice, stream, knobs, script)


def _input_items(items: list[Any], messages: list[Message]) -> None:
    pending_reasoning: list[str] = []
    for i, item in enumerate(items):
        where = f"input[{i}]"
        need(isinstance(item, dict), f"{where} must be an object")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            need(role in _CHAT_ROLES, f"{where}: unknown role {role!r}")
            messages.append(Message(_CHAT_ROLES[role], _text(item.get("content"), where)))
        elif kind == "function_call":
            for key in ("call_id", "name"):
                need(isinstance(item.get(key), str), f"{where}: {key} is required")
            ns = item.get("namespace")
            name = f"{ns}__{item['name']}" if isinstance(ns, str) and ns else item["name"]
            call = Call(item["call_id"], name, _arguments(item.get("arguments", ""), where))
            if not messages or messages[-1].role != "assistant":
                messages.append(Message("assistant"))
            messages[-1].tool_calls.append(call)
        elif kind == "function_call_output":
            need(isinstance(item.get("call_id"), str), f"{where}: call_id is required")
            output = item.get("output")
            out = output if isinstance(output, str) else _text(output, where)
            messages.append(Message("tool", out, tool_call_id=item["call_id"]))
        elif kind == "reasoning":
            text = _text(item.get("content"), where) or _text(item.get("summary"), where)
            pending_reasoning.append(text)
            continue
        else:
            raise BadRequest(f"{where}: unsupported input item type {kind!r}")
        if pending_reasoning and messages[-1].role == "assistant":
            messages[-1].reasoning = "\n".join(pending_reasoning)
            pending_reasoning = []
    if pending_reasoning:
        messages.append(Message("assistant", reasoning="\n".join(pending_reasoning)))


def _responses_tools(raw: Any) -> list[ToolSpec] | None:
    need(raw is None or isinstance(raw, list), "tools must be a list")
    if not raw:
        return None
    tools: list[ToolSpec] = []
    for i, tool in enumerate(raw):
        where = f"tools[{i}]"
        need(isinstance(tool, dict), f"{where} must be an object")
        if tool.get("type") == "function":
            tools.append(_function_spec(tool, None, where))
        elif tool.get("type") == "namespace":
            ns = tool.get("name")
            inner = tool.get("tools")
            need(isinstance(ns, str) and bool(ns), f"{where}: namespace name is required")
            need(isinstance(inner, list), f"{where}: namespace tools must be a list")
            for j, fn in enumerate(inner):
                fw = f"{where}.tools[{j}]"
                need(isinstance(fn, dict) and fn.get("type") == "function", f"{fw}: bad tool")
                tools.append(_function_spec(fn, ns, fw))
        else:
            raise BadRequest(f"{where}: unsupported tool type {tool.get('type')!r}")
    flat = [t.name for t in tools]
    clash = next((n for n in flat if flat.count(n) > 1), None)
    need(clash is None, f"tools: two tools flatten to the one name {clash!r}")
    return tools or None
