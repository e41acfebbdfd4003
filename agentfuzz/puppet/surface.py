"""Which request fields let a script's truth stand: the puppet's view of the request surface.

A scripted request may carry any field of the surface (``strategies._surface`` draws them), and
every oracle judges its answer. But some fields change what the model writes or what a faithful
server makes of it, and then the script's truth (``Format.expected``) is not the answer's:

- ``takes_writing``: the field takes the writing from the script. A grammar (structured
  outputs, ``guided_*``, llama.cpp's ``grammar``, a response format other than text, a forced
  ``tool_choice``) or a mask (``logit_bias``, ``bad_words``, ``allowed_token_ids``,
  ``min_tokens``) may forbid the token the script needs next, and the processor then gives the
  script up rather than wedge the server (``forcing.Forcer.refused``: only the server's log
  says so); ``ignore_eos`` writes on past the script's end; ``n`` and ``best_of`` ask for more
  than the one answer a script makes.
- ``sways_reading``: the writing is the script's, but the request tells the server to read or
  thin it by a rule of its own. vLLM hands the chat template's kwargs to its parser (Kimi-K2's
  reads ``thinking``/``enable_thinking`` from them) and sets ``enable_thinking`` from a
  reasoning effort; ``parallel_tool_calls: false`` keeps only the first of several calls (as
  vLLM's ``maybe_filter_parallel_tool_calls`` does); a ``max_tool_calls`` under the calls
  written may be read as a cap on them.

Sampling fields (temperature, penalties, top_k, min_p, repetition_penalty), log-probabilities,
usage, user, metadata, instructions, store, include and truncation change neither: the
processor leaves one token possible at every step, whatever the sampler does with it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONSTRAINTS", "format_asked", "sways_reading", "takes_writing"]

# Server extensions that hold the answer to a format of their own (vLLM's, llama.cpp's).
CONSTRAINTS = (
    "structured_outputs",
    "guided_json",
    "guided_regex",
    "guided_choice",
    "guided_grammar",
    "grammar",
)
_GRAMMARS = ("tool_choice", *CONSTRAINTS)
_MASKS = ("logit_bias", "bad_words", "allowed_token_ids", "ignore_eos")
# Counts that leave the script alone at 1 (or 0) and take it from there up.
_COUNTS = ("n", "best_of", "min_tokens")
_READERS = ("chat_template_kwargs", "reasoning_effort", "reasoning")


def takes_writing(fields: dict[str, Any]) -> str | None:
    """The first field in ``fields`` that may take the writing from the script, or None."""
    for name in (*_GRAMMARS, *_MASKS):
        if fields.get(name) not in (None, False, {}, []):
            return name
    for name in _COUNTS:
        value = fields.get(name)
        if value is not None and not (isinstance(value, int) and value in (0, 1)):
            return name
    return format_asked(fields)


def format_asked(fields: dict[str, Any]) -> str | None:
    """``response_format`` (chat) or ``text.format`` (Responses), where ``fields`` ask for a
    response format other than plain text; else None."""
    text = fields.get("text")
    wanted = {
        "response_format": fields.get("response_format"),
        "text.format": text.get("format") if isinstance(text, dict) else None,
    }
    for name, fmt in wanted.items():
        if isinstance(fmt, dict) and fmt.get("type") != "text":
            return name
    return None


def sways_reading(fields: dict[str, Any], calls: int) -> str | None:
    """The first field in ``fields`` that may make a faithful server return other than the
    ``calls`` calls written and their prose, or None."""
    for name in _READERS:
        if fields.get(name) not in (None, {}):
            return name
    if fields.get("parallel_tool_calls") is False and calls > 1:
        return "parallel_tool_calls"
    cap = fields.get("max_tool_calls")
    if isinstance(cap, int) and not isinstance(cap, bool) and cap < calls:
        return "max_tool_calls"
    return None
