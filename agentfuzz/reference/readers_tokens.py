"""Readers of the formats built of special tokens around JSON arguments: Kimi-K2, Mistral
(tokenizer v11+), DeepSeek V3 and V3.1, gpt-oss (Harmony).

The name (Kimi: the whole call id) stands in the markup as plain text up to the next token; the
arguments are one JSON value, whose end the JSON grammar decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .reading import (
    Context,
    Part,
    ReadCall,
    Reader,
    Reasoning,
    Unreadable,
    expect,
    json_at,
    json_until,
    scan,
    skip_space,
)

__all__ = ["READERS"]

ReadCallFn = Callable[[str, int, Context], tuple[ReadCall, int]]
ReadFn = Callable[[str, Context], list[Part]]

_KIMI_ID = re.compile(r".+:\d+", re.S)


def _upto(raw: str, at: int, marker: str) -> tuple[str, int]:
    """The text from ``at`` to ``marker``, and the place after the marker."""
    end = raw.find(marker, at)
    if end < 0:
        raise Unreadable(f"no {marker!r} after {at}")
    return raw[at:end], end + len(marker)


def _section(
    raw: str, at: int, end_marker: str, begin: str, call: ReadCallFn, context: Context
) -> tuple[list[Part], int]:
    """Calls, each opened by ``begin``, until ``end_marker`` closes the section."""
    calls: list[Part] = []
    while True:
        at = skip_space(raw, at)
        if raw.startswith(end_marker, at):
            return calls, at + len(end_marker)
        found, at = call(raw, expect(raw, at, begin), context)
        calls.append(found)


def _kimi_call(raw: str, at: int, context: Context) -> tuple[ReadCall, int]:
    """``ID<|tool_call_argument_begin|>{…}<|tool_call_end|>``: the id is ``functions.NAME:N``
    (any ``NAME:N``), returned as written; the name is its part before ``:``."""
    header, at = _upto(raw, at, "<|tool_call_argument_begin|>")
    header = header.strip()
    if not _KIMI_ID.fullmatch(header) and not context.drop_bad_header:
        raise Unreadable(f"the call header {header!r} is not NAME:N")
    arguments, at = json_until(raw, at, "<|tool_call_end|>", context)
    name = header.split(":")[0].removeprefix("functions.")
    return ReadCall(name, arguments, header), at


def _kimi_k2(raw: str, context: Context) -> list[Part]:
    def block(text: str, at: int) -> tuple[list[Part], int]:
        end, begin = "<|tool_calls_section_end|>", "<|tool_call_begin|>"
        calls, at = _section(text, at, end, begin, _kimi_call, context)
        # Only a call read under drop_bad_header can have a header of another shape.
        kept = [c for c in calls if not isinstance(c, ReadCall) or _KIMI_ID.fullmatch(c.id or "")]
        return kept, at

    return scan(raw, "<|tool_calls_section_begin|>", block)


def _mistral(raw: str, context: Context) -> list[Part]:
    """``[TOOL_CALLS]NAME[ARGS]{…}`` per call."""

    def block(text: str, at: int) -> tuple[list[Part], int]:
        name, at = _upto(text, at, "[ARGS]")
        arguments, at = json_at(text, at)
        return [ReadCall(name.strip(), arguments)], at

    return scan(raw, "[TOOL_CALLS]", block)


_DS_CALLS, _DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
_DS_CALL, _DS_CALL_END, _DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def _deepseek_v3_call(raw: str, at: int, context: Context) -> tuple[ReadCall, int]:
    """``TYPE<sep>NAME`` on one line, then the arguments in a fenced ``json`` block."""
    _, at = _upto(raw, at, _DS_SEP)
    name, at = _upto(raw, at, "\n")
    at = expect(raw, skip_space(raw, at), "```json")
    arguments, at = json_until(raw, at, "```", context)
    return ReadCall(name.strip(), arguments), expect(raw, skip_space(raw, at), _DS_CALL_END)


def _deepseek_v31_call(raw: str, at: int, context: Context) -> tuple[ReadCall, int]:
    """``NAME<sep>{…}<call end>``."""
    name, at = _upto(raw, at, _DS_SEP)
    arguments, at = json_until(raw, at, _DS_CALL_END, context)
    return ReadCall(name.strip(), arguments), at


def _deepseek(call: ReadCallFn) -> ReadFn:
    def read(raw: str, context: Context) -> list[Part]:
        def block(text: str, at: int) -> tuple[list[Part], int]:
            return _section(text, at, _DS_CALLS_END, _DS_CALL, call, context)

        return scan(raw, _DS_CALLS, block)

    return read


_HARMONY_ENDS = re.compile(r"<\|(?:end|call|return)\|>")


def _harmony_message(raw: str, at: int, context: Context) -> tuple[list[Part], int]:
    """One message from its header on: a call to ``functions.NAME``, reasoning on the
    analysis channel, or text (a commentary preamble or the final answer)."""
    header, at = _upto(raw, at, "<|message|>")
    channel = re.search(r"<\|channel\|>(\w+)", header)
    recipient = re.search(r"to=(\S+)", header)
    if recipient and recipient.group(1).startswith("functions."):
        name = recipient.group(1).removeprefix("functions.")
        arguments, at = json_until(raw, at, "<|call|>", context)
        return [ReadCall(name, arguments)], at
    ending = _HARMONY_ENDS.search(raw, at)
    body, end = (raw[at : ending.start()], ending.end()) if ending else (raw[at:], len(raw))
    if channel and channel.group(1) == "analysis":
        return [Reasoning(body)], end
    return [body], end


def _harmony(raw: str, context: Context) -> list[Part]:
    """Messages, each headed ``<|channel|>…<|message|>``, the later ones after
    ``<|start|>assistant``; output with no header at all is plain text."""
    if "<|channel|>" not in raw:
        return [raw]
    parts: list[Part] = []
    at = 0
    while at < len(raw):
        if raw.startswith("<|start|>", at):
            at += len("<|start|>")
        found, at = _harmony_message(raw, at, context)
        parts += found
    return [part for part in parts if part != ""]


READERS: tuple[Reader, ...] = (
    Reader("kimi_k2", _kimi_k2),
    Reader("mistral", _mistral),
    Reader("deepseek_v3", _deepseek(_deepseek_v3_call)),
    Reader("deepseek_v31", _deepseek(_deepseek_v31_call)),
    Reader("openai", _harmony),
)
