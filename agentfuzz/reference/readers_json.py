"""Readers of the formats whose calls are JSON envelopes, ``{"name": …, "arguments": …}``:
inside tags (Hermes, LongCat, Granite 4, InternLM2), after a marker (Granite-20B-FC, Granite
3, Phi-4-mini), in one tagged list (Hunyuan, Jamba), or the whole output (Llama 3 JSON, xLAM).

Where a call ends is the JSON grammar's business: a closing tag inside a string stays in the
string. Text outside the markup is the content.
"""

from __future__ import annotations

from collections.abc import Callable

from .reading import (
    Context,
    Part,
    Reader,
    Unreadable,
    envelope,
    envelopes,
    json_at,
    json_until,
    scan,
    skip_space,
)

__all__ = ["READERS"]

Block = Callable[[str, int], tuple[list[Part], int]]


def _tagged(opening: str, closing: str) -> Callable[[str, Context], list[Part]]:
    """One envelope (or a list of them) per ``opening … closing`` block, text around them."""

    def read(raw: str, context: Context) -> list[Part]:
        def block(text: str, at: int) -> tuple[list[Part], int]:
            value, end = json_until(text, at, closing, context)
            return envelopes(value), end

        return scan(raw, opening, block)

    return read


def _marked(*openings: str) -> Callable[[str, Context], list[Part]]:
    """An envelope or a list of them after a marker with no closing one (the first of
    ``openings`` found is the one the output uses)."""

    def read(raw: str, context: Context) -> list[Part]:
        found = [o for o in openings if o in raw]
        opening = min(found, key=raw.find) if found else openings[0]

        def block(text: str, at: int) -> tuple[list[Part], int]:
            value, end = json_at(text, at)
            return envelopes(value), end

        return scan(raw, opening, block)

    return read


def _phi4_mini(raw: str, context: Context) -> list[Part]:
    """``functools`` then one JSON list; its ``[`` belongs to the list."""

    def block(text: str, at: int) -> tuple[list[Part], int]:
        if not text.startswith("[", at):
            raise Unreadable("functools without its list")
        value, end = json_at(text, at)
        return envelopes(value), end

    return scan(raw, "functools", block)


def _llama3_json(raw: str, context: Context) -> list[Part]:
    """The whole output is envelopes joined by ``;`` (after an optional ``<|python_tag|>``);
    anything else is plain text."""
    at = skip_space(raw, 0)
    if raw.startswith("<|python_tag|>", at):
        at = skip_space(raw, at + len("<|python_tag|>"))
    if not raw.startswith("{", at):
        return [raw]
    calls: list[Part] = []
    while True:
        value, at = json_at(raw, at)
        calls.append(envelope(value))
        at = skip_space(raw, at)
        if at == len(raw):
            return calls
        if raw[at] != ";":
            raise Unreadable(f"expected ';' at {at}")
        at += 1


def _xlam(raw: str, context: Context) -> list[Part]:
    """The whole output is one JSON list of envelopes; anything else is plain text."""
    at = skip_space(raw, 0)
    if not raw.startswith("[", at):
        return [raw]
    value, end = json_at(raw, at)
    if skip_space(raw, end) != len(raw) or not isinstance(value, list):
        return [raw]
    return envelopes(value)


_HERMES = _tagged("<tool_call>", "</tool_call>")

READERS: tuple[Reader, ...] = (
    Reader("hermes", _HERMES),
    Reader("qwen3_json", _HERMES),
    Reader("granite4", _HERMES),
    Reader("longcat", _tagged("<longcat_tool_call>", "</longcat_tool_call>")),
    Reader("internlm", _tagged("<|action_start|><|plugin|>", "<|action_end|>")),
    Reader("hunyuan_a13b", _tagged("<tool_calls>", "</tool_calls>")),
    Reader("jamba", _tagged("<tool_calls>", "</tool_calls>")),
    Reader("granite-20b-fc", _marked("<function_call>")),
    Reader("granite", _marked("<|tool_call|>", "<tool_call>")),
    Reader("phi4_mini_json", _phi4_mini),
    Reader("llama3_json", _llama3_json),
    Reader("llama4_json", _llama3_json),
    Reader("xlam", _xlam),
)
