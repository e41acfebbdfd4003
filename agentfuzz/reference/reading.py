"""What the puppet readers share: the parts a reading yields, and the small scanners every
family's reader is built from.

A reader turns the model's raw output into parts, in the order written: text outside any markup
(the answer's content), the calls, and reasoning. It raises ``Unreadable`` for markup it cannot
read; the server then returns the whole output as content, as vLLM's parsers do when their
own reading fails. The readers are written from the formats' documentation and the model
families' templates, never from the client side's writers (a bug shared by both would hide).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "Context",
    "Part",
    "ReadCall",
    "Reader",
    "Reasoning",
    "Unreadable",
    "envelope",
    "envelopes",
    "expect",
    "json_at",
    "json_until",
    "scan",
    "skip_space",
]


class Unreadable(ValueError):
    """Markup this reader cannot read; ``str()`` says where."""


@dataclass(frozen=True)
class ReadCall:
    """One call as read: its name, its arguments (any JSON value, an object when well
    formed), and its id where the format carries one."""

    name: str
    arguments: Any
    id: str | None = None


@dataclass(frozen=True)
class Reasoning:
    """Text the model wrote as its reasoning (Harmony's analysis channel)."""

    text: str


Part: TypeAlias = str | ReadCall | Reasoning


@dataclass(frozen=True)
class Context:
    """What a reading may depend on beyond the text. ``schemas``: each declared tool's
    ``parameters`` by its flat name, which tagged-parameter formats type their values by.
    ``cut_at_marker``: the planted fault, a call's JSON ends at the first closing marker even
    inside a string. ``drop_bad_header``: vLLM's Kimi-K2 parser, which drops a call whose
    header is not ``NAME:N``, markup and all, where the faithful reader gives up."""

    schemas: dict[str, Any] = field(default_factory=dict)
    cut_at_marker: bool = False
    drop_bad_header: bool = False


@dataclass(frozen=True)
class Reader:
    """One format's reader, under vLLM's ``--tool-call-parser`` name. ``declared_only``: calls
    to a tool the request did not declare are dropped, as that family's parser does."""

    name: str
    read: Callable[[str, Context], list[Part]]
    declared_only: bool = False


def skip_space(raw: str, at: int) -> int:
    while at < len(raw) and raw[at].isspace():
        at += 1
    return at


def expect(raw: str, at: int, marker: str) -> int:
    """The place after ``marker``, which must stand at ``at``."""
    if not raw.startswith(marker, at):
        raise Unreadable(f"expected {marker!r} at {at}")
    return at + len(marker)


_DECODER = json.JSONDecoder()


def json_at(raw: str, at: int) -> tuple[Any, int]:
    """The JSON value starting at ``at`` (after any whitespace), and the place after it."""
    try:
        return _DECODER.raw_decode(raw, skip_space(raw, at))
    except (ValueError, RecursionError):
        raise Unreadable(f"no JSON value at {at}") from None


def json_until(raw: str, at: int, closing: str, context: Context) -> tuple[Any, int]:
    """The JSON value at ``at`` that ``closing`` follows, and the place after ``closing``.
    The JSON grammar decides where the value ends, so a marker inside a string stays in it;
    under the planted fault the first ``closing`` ends it wherever it stands."""
    if context.cut_at_marker:
        end = raw.find(closing, at)
        if end < 0:
            raise Unreadable(f"no {closing!r} after {at}")
        try:
            return json.loads(raw[at:end]), end + len(closing)
        except (ValueError, RecursionError):
            raise Unreadable(f"no JSON value at {at}") from None
    value, end = json_at(raw, at)
    return value, expect(raw, skip_space(raw, end), closing)


def envelope(value: Any) -> ReadCall:
    """A call from ``{"name": …, "arguments": …}`` (or Llama's ``"parameters"``)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise Unreadable("a call envelope needs a name")
    arguments = value["arguments"] if "arguments" in value else value.get("parameters", {})
    return ReadCall(value["name"], arguments)


def envelopes(value: Any) -> list[Part]:
    """The calls of one envelope or a list of them."""
    return [envelope(item) for item in (value if isinstance(value, list) else [value])]


def scan(raw: str, opening: str, block: Callable[[str, int], tuple[list[Part], int]]) -> list[Part]:
    """Text and blocks: each ``opening`` starts a block that ``block(raw, after_opening)``
    reads, returning its parts and where it ended; the text between blocks is content."""
    parts: list[Part] = []
    at = 0
    while (start := raw.find(opening, at)) >= 0:
        parts.append(raw[at:start])
        found, at = block(raw, start + len(opening))
        parts += found
    parts.append(raw[at:])
    return [part for part in parts if part != ""]
