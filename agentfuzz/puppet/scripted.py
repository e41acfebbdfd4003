"""A script as a request carries it: what the model is made to write, and what it was written
from, so the answer can be judged against the truth (``oracles._puppet``).

The server's processor reads ``text`` (``channel``); the same value also names the format and
holds the script itself (the processor ignores keys it does not know). A repro bundle's request
then says, on its own, what the model wrote and why: no state outside the request.

A session's turns (``carry_turn``) may instead carry a ``channel.Mimic``: in a format whose
calls carry ids, the model heads its call with the last call id its prompt shows, as a model
imitating its history does (seed 000). Its truth depends on how the server rendered that
history, so ``carried`` gives None for it and ``puppet_truth`` leaves it to the other oracles.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agentfuzz.errors import InputError
from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import Call, Format, Script, format_named

__all__ = ["FIELD", "PROSE", "carried", "carry", "carry_turn", "mimicked"]

# The request field the script travels in (vLLM's per-request arguments).
FIELD = "vllm_xargs"
# What the model answers on a session turn that calls no tool: plain text, after which the
# user speaks again.
PROSE = "Done. Anything else?"


def carry(fmt: Format, script: Script) -> dict[str, str]:
    """The ``vllm_xargs`` value that makes the model write ``script`` in ``fmt``."""
    about = {"format": fmt.name, "script": _dump(script)}
    return channel.encode(channel.Text(fmt.write(script)), about)


def carry_turn(fmt: Format, script: Script | None, index: int = 0) -> dict[str, str]:
    """The ``vllm_xargs`` value of one session turn: ``PROSE`` and no call for None; else
    ``script`` in ``fmt``, where ``fmt`` carries ids as a ``channel.Mimic`` whose first call
    is headed by the last call id the prompt shows where that id is foreign to the family
    (``fmt.prompt_header``), else by the id ``fmt`` itself writes for the conversation's call
    number ``index`` (the calls before it, from 0). Raises ``Unwritable`` for a script ``fmt``
    cannot write."""
    if script is None:
        return channel.encode(channel.Text(PROSE))
    if not fmt.carries_ids or fmt.prompt_header is None:
        return carry(fmt, script)
    first = script.calls[0]
    own = fmt.written_id(first, index) or ""
    headed = replace(script, calls=(Call(first.name, first.arguments, own), *script.calls[1:]))
    # Where the own id first stands is the first call's header, prose before it aside (a
    # session's scripts write none).
    template = fmt.write(headed).replace(own, channel.HEADER, 1)
    mimic = channel.Mimic(template, fmt.prompt_header, own)
    return channel.encode(mimic, {"format": fmt.name, "script": _dump(script)})


def carried(fields: dict[str, Any]) -> tuple[Format, Script, str] | None:
    """The format, the script and the text a request's fields make the model write, or None
    for a request that carries no script of agentfuzz's, one it cannot read, or a mimic."""
    found = _read(fields)
    if found is None or not isinstance(found[2], channel.Text):
        return None
    return found[0], found[1], found[2].text


def mimicked(fields: dict[str, Any]) -> tuple[Format, channel.Mimic] | None:
    """The format and the mimic a session turn's fields carry (``carry_turn``), or None."""
    found = _read(fields)
    if found is None or not isinstance(found[2], channel.Mimic):
        return None
    return found[0], found[2]


def _read(fields: dict[str, Any]) -> tuple[Format, Script, channel.Script] | None:
    xargs = fields.get(FIELD)
    if not isinstance(xargs, dict):
        return None
    try:
        script = channel.decode(xargs)
        value = json.loads(xargs[channel.KEY])
        fmt = format_named(value["format"])
        written = _load(value["script"])
    except (channel.ChannelError, KeyError, TypeError, ValueError, InputError):
        return None
    return None if script is None else (fmt, written, script)


def _dump(script: Script) -> dict[str, Any]:
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in script.calls]
    dumped: dict[str, Any] = {
        "calls": calls,
        "text_before": script.text_before,
        "text_between": script.text_between,
        "text_after": script.text_after,
    }
    # Written only when set, so the requests of every other script stay as they were.
    for flag in ("unclosed", "escaped"):
        if getattr(script, flag):
            dumped[flag] = True
    return dumped


def _load(raw: Any) -> Script:
    calls = tuple(
        Call(str(c["name"]), dict(c["arguments"]), None if c["id"] is None else str(c["id"]))
        for c in raw["calls"]
    )
    return Script(
        calls,
        text_before=str(raw["text_before"]),
        text_between=str(raw["text_between"]),
        text_after=str(raw["text_after"]),
        unclosed=raw.get("unclosed") is True,
        escaped=raw.get("escaped") is True,
    )
