"""The tool-call parser a server is started with, by vLLM's ``--tool-call-parser`` name: the
model's raw output read into content, reasoning and calls.

Each family's reader lives in its own module (``readers_json``, ``readers_tokens``,
``readers_params``, ``readers_python``). A server started with one reads every answer with it,
scripted or not (the reference model itself writes Kimi-K2 markup, which most other readers
leave as text). The planted puppet faults live here, each breaking one thing in an otherwise
faithful reading, so a profile carrying one differs from the faithful one in that alone; the
pipeline hands them scripted answers only.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from typing import Any

from . import readers_json, readers_params, readers_python, readers_tokens
from .parsers import Parsed, ParsedCall
from .reading import Context, Part, ReadCall, Reader, Reasoning, Unreadable

__all__ = ["READERS", "UnknownReader", "read_output", "reader_named"]

READERS: dict[str, Reader] = {
    reader.name: reader
    for module in (readers_json, readers_tokens, readers_params, readers_python)
    for reader in module.READERS
}


class UnknownReader(KeyError, ValueError):
    """A parser name this server cannot read; ``str()`` is one line naming the closest."""

    def __str__(self) -> str:
        return str(self.args[0])


def reader_named(name: str) -> Reader:
    """The reader of ``name``, or an ``UnknownReader`` saying which names were meant."""
    try:
        return READERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, READERS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        known = ", ".join(sorted(READERS))
        raise UnknownReader(f"unknown tool-call parser {name!r}{hint} (known: {known})") from None


def read_output(
    name: str, raw: str, schemas: dict[str, Any], fault: str | None, mint: Callable[[], str]
) -> Parsed:
    """``raw`` as the ``name`` parser returns it. ``schemas``: the declared tools' parameters by
    flat name; ``fault``: a planted puppet fault or None; ``mint()``: an id for a call whose
    format carries none. Markup the reader cannot read comes back whole as content."""
    reader = READERS[name]
    context = Context(
        schemas,
        cut_at_marker=fault == "marker_in_string",
        drop_bad_header=fault == "header_dropped",
    )
    try:
        parts = reader.read(raw, context)
    except Unreadable:
        # Under the planted ``unreadable_swallowed`` fault, nothing at all.
        parts = [] if fault == "unreadable_swallowed" else [raw]
    parts = _planted(parts, fault)
    if reader.declared_only:
        parts = [p for p in parts if not isinstance(p, ReadCall) or p.name in schemas]
    content = "".join(p for p in parts if isinstance(p, str))
    reasoning = "\n".join(p.text for p in parts if isinstance(p, Reasoning))
    calls = [p for p in parts if isinstance(p, ReadCall)]
    return Parsed(
        content=content if content.strip() else "",
        reasoning=reasoning or None,
        calls=[
            ParsedCall(
                slot,
                call.id if call.id is not None else mint(),
                call.name,
                json.dumps(call.arguments, ensure_ascii=False),
            )
            for slot, call in enumerate(calls)
        ],
    )


_DIGITS = re.compile(r"[0-9]+")


def _planted(parts: list[Part], fault: str | None) -> list[Part]:
    """The parts as a reader with the planted ``fault`` returns them: the prose before the
    first call lost (``prose_dropped``), every call after the first lost
    (``second_call_dropped``), a string of digits read as a number (``args_retyped``)."""
    calls = [i for i, p in enumerate(parts) if isinstance(p, ReadCall)]
    if not calls:
        return parts
    if fault == "prose_dropped":
        return [p for i, p in enumerate(parts) if i >= calls[0] or not isinstance(p, str)]
    if fault == "second_call_dropped":
        return [p for i, p in enumerate(parts) if i not in calls[1:]]
    if fault == "args_retyped":
        return [_retyped(p) if isinstance(p, ReadCall) else p for p in parts]
    return parts


def _retyped(call: ReadCall) -> ReadCall:
    if not isinstance(call.arguments, dict):
        return call
    arguments = {
        key: int(value) if isinstance(value, str) and _DIGITS.fullmatch(value) else value
        for key, value in call.arguments.items()
    }
    return ReadCall(call.name, arguments, call.id)
