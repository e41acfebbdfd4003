"""A script as a request carries it: what the model is made to write, and what it was written
from, so the answer can be judged against the truth (``oracles._puppet``).

The server's processor reads ``text`` (``channel``); the same value also names the format and
holds the script itself (the processor ignores keys it does not know). A repro bundle's request
then says, on its own, what the model wrote and why: no state outside the request.
"""

from __future__ import annotations

import json
from typing import Any

from agentfuzz.errors import InputError
from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import Call, Format, Script, format_named

__all__ = ["FIELD", "carried", "carry"]

# The request field the script travels in (vLLM's per-request arguments).
FIELD = "vllm_xargs"


def carry(fmt: Format, script: Script) -> dict[str, str]:
    """The ``vllm_xargs`` value that makes the model write ``script`` in ``fmt``."""
    about = {"format": fmt.name, "script": _dump(script)}
    return channel.encode(channel.Text(fmt.write(script)), about)


def carried(fields: dict[str, Any]) -> tuple[Format, Script, str] | None:
    """The format, the script and the text a request's fields make the model write, or None
    for a request that carries no script of agentfuzz's (or one it cannot read)."""
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
    if not isinstance(script, channel.Text):
        return None
    return fmt, written, script.text


def _dump(script: Script) -> dict[str, Any]:
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in script.calls]
    return {
        "calls": calls,
        "text_before": script.text_before,
        "text_between": script.text_between,
        "text_after": script.text_after,
    }


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
    )
