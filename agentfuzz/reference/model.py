"""The scripted model: reads a rendered prompt and writes the next turn's raw text.

It behaves like the models in the seeds. It calls the tools the last user message names
(else the first declared tool) and answers in text after a tool result. In Kimi format it
writes its call header by imitating the id shape it last saw in the prompt: ``call_<hex>``
gives a new ``call_<hex>``, ``functions_x_0`` gives ``functions_y_1``, a native id gives the
next native index. At temperature 0 that is deterministic; above 0 it imitates with a
probability that grows with the number of foreign ids in the prompt.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .arguments import sample_arguments
from .renumber import STRICT_NATIVE
from .switches import Template

__all__ = ["Constraint", "PromptView", "generate", "imitate", "read_prompt"]

Mode = Literal["auto", "none", "required", "named"]

_KIMI_TOOLS = re.compile(r"<\|im_system\|>tool_declare<\|im_middle\|>(.*?)<\|im_end\|>", re.S)
_KIMI_SEGMENT = re.compile(r"<\|im_(?:system|user|assistant)\|>(\w+)<\|im_middle\|>")
_KIMI_HEADER = re.compile(r"<\|tool_call_begin\|>(.*?)<\|tool_call_argument_begin\|>", re.S)
_HARMONY_TOOL = re.compile(r"^type (.+?) = \(_: (.*)\) => any;$", re.M)
_SANITISED = re.compile(r"functions_(.+)_(\d+)", re.S)
_SUFFIXED = re.compile(r"(.*):(\d+)", re.S)
_NATIVE = re.compile(r"functions\.(.+):(\d+)", re.S)
_HEX = set("0123456789abcdef")


@dataclass(frozen=True)
class Constraint:
    """What the server lets the model write (guided decoding): ``none`` bans tool calls."""

    mode: Mode = "auto"
    name: str | None = None


@dataclass
class PromptView:
    """What the model reads off a prompt."""

    tools: dict[str, Any] = field(default_factory=dict)
    last_role: str = ""
    last_user: str = ""
    headers: list[str] = field(default_factory=list)


def read_prompt(template: Template, prompt: str) -> PromptView:
    """Recover tools, roles and call headers from a rendered prompt."""
    view = PromptView()
    if template == "kimi":
        declared = _KIMI_TOOLS.search(prompt)
        if declared:
            try:
                entries = json.loads(declared.group(1))
            except ValueError:
                entries = []
            for entry in entries if isinstance(entries, list) else []:
                fn = entry.get("function", {}) if isinstance(entry, dict) else {}
                if isinstance(fn.get("name"), str):
                    view.tools[fn["name"]] = fn.get("parameters")
        marks = list(_KIMI_SEGMENT.finditer(prompt))[:-1]  # the last is the generation prompt
        for i, mark in enumerate(marks):
            role = mark.group(1)
            if role == "tool_declare":
                continue
            view.last_role = role
            if role == "user":
                end = marks[i + 1].start() if i + 1 < len(marks) else len(prompt)
                view.last_user = prompt[mark.end() : end].removesuffix("<|im_end|>")
        view.headers = _KIMI_HEADER.findall(prompt)
        return view
    for match in _HARMONY_TOOL.finditer(prompt):
        try:
            view.tools[match.group(1)] = json.loads(match.group(2))
        except ValueError:
            view.tools[match.group(1)] = None
    for chunk in prompt.split("<|start|>")[1:-1]:
        header, _, body = chunk.partition("<|message|>")
        role = re.split(r"[\s<]", header, maxsplit=1)[0]
        if role == "user":
            view.last_user = body.removesuffix("<|end|>")
        view.last_role = {"developer": "system", "functions": "tool"}.get(role.split(".")[0], role)
    return view


def _named_in(text: str, tools: dict[str, Any]) -> list[str]:
    """Declared tools the text mentions, in order of mention; longer names win overlaps."""
    taken: list[tuple[int, int, str]] = []
    for name in sorted(tools, key=len, reverse=True):
        for alias in dict.fromkeys((name, name.rsplit("__", 1)[-1])):
            if not alias:
                continue
            at = text.find(alias)
            while at >= 0 and any(s < at + len(alias) and at < e for s, e, _ in taken):
                at = text.find(alias, at + 1)
            if at >= 0 and name not in (n for _, _, n in taken):
                taken.append((at, at + len(alias), name))
    return [name for _, _, name in sorted(taken)]


def _scramble(text: str, rng: random.Random) -> str:
    """Same shape, fresh characters: keep the prefix up to the last ``_``/``-``."""
    cut = max(text.rfind("_"), text.rfind("-")) + 1
    prefix, body = (text[:cut], text[cut:]) if cut < len(text) else ("", text)
    if body and set(body) <= _HEX:
        return prefix + "".join(rng.choice("0123456789abcdef") for _ in body)
    out = []
    for ch in body:
        if ch.isascii() and ch.isdigit():
            ch = rng.choice("0123456789")
        elif ch.isascii() and ch.islower():
            ch = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif ch.isascii() and ch.isupper():
            ch = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        out.append(ch)
    return prefix + "".join(out)


def imitate(seen: str, name: str, index: int, rng: random.Random) -> str:
    """A new call id in the shape of ``seen``, for a call to ``name`` numbered ``index``."""
    if _NATIVE.fullmatch(seen):
        return f"functions.{name}:{index}"
    if _SANITISED.fullmatch(seen):
        return f"functions_{name}_{index}"
    suffixed = _SUFFIXED.fullmatch(seen)
    if suffixed:
        return f"{_scramble(suffixed.group(1), rng)}:{index}"
    return _scramble(seen, rng)


def _shape_source(headers: list[str], rng: random.Random, temperature: float) -> str | None:
    """The foreign header the next call imitates, or None for the native shape."""
    foreign = [h for h in headers if not STRICT_NATIVE.fullmatch(h)]
    if temperature <= 0:
        return headers[-1] if headers and headers[-1] in foreign else None
    chance = len(foreign) / (len(foreign) + 2)
    return foreign[-1] if foreign and rng.random() < chance else None


def _text_answer(view: PromptView, rng: random.Random) -> str:
    if view.last_role == "tool":
        return rng.choice(("The tool finished; here is the answer.", "Done: the result is in."))
    return rng.choice(("Sure, here is my answer.", "Hello! How can I help?"))


def generate(
    template: Template,
    prompt: str,
    constraint: Constraint,
    rng: random.Random,
    temperature: float = 0.0,
) -> str:
    """The model's raw output for the next assistant turn, special tokens included."""
    view = read_prompt(template, prompt)
    targets: list[str] = []
    if constraint.mode == "named" and constraint.name:
        targets = [constraint.name]
    elif (
        constraint.mode != "none"
        and view.tools
        and (constraint.mode == "required" or view.last_role == "user")
    ):
        targets = _named_in(view.last_user, view.tools) or [next(iter(view.tools))]
    if template == "harmony":
        return _harmony(view, targets, rng)
    if constraint.mode != "none" and not view.tools and view.headers and view.last_role == "user":
        # Nothing declared, but the history is an agent loop: the model keeps calling.
        native = _NATIVE.fullmatch(view.headers[-1])
        name = native.group(1) if native else "tool"
        header = imitate(view.headers[-1], name, len(view.headers), rng)
        return _kimi_section([(header, "{}")])
    if not targets:
        return _text_answer(view, rng)
    calls = []
    source = _shape_source(view.headers, rng, temperature)
    for k, name in enumerate(targets):
        index = len(view.headers) + k
        # Only the first header copies a foreign shape; later ones follow the first's lead.
        header = (
            imitate(source, name, index, rng) if source and k == 0 else f"functions.{name}:{index}"
        )
        args = json.dumps(sample_arguments(view.tools.get(name), rng), ensure_ascii=False)
        calls.append((header, args))
    return _kimi_section(calls)


def _kimi_section(calls: list[tuple[str, str]]) -> str:
    body = "".join(
        f"<|tool_call_begin|>{header}<|tool_call_argument_begin|>{args}<|tool_call_end|>"
        for header, args in calls
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"


def _harmony(view: PromptView, targets: list[str], rng: random.Random) -> str:
    if targets:
        thought = f"The user wants {', '.join(targets)}; I will call it."
    else:
        thought = "I can answer directly."
    out = f"<|channel|>analysis<|message|>{thought}<|end|>"
    for name in targets:
        args = json.dumps(sample_arguments(view.tools.get(name), rng), ensure_ascii=False)
        out += (
            f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json"
            f"<|message|>{args}<|call|>"
        )
    if not targets:
        out += f"<|start|>assistant<|channel|>final<|message|>{_text_answer(view, rng)}<|return|>"
    return out
