"""The request surface as a careful server reads it: each field honoured, or refused with a 400.

Honoured: ``stop`` (matched in the visible text; generation ends there, so no call follows),
``parallel_tool_calls: false`` (one call at most), ``stream_options.include_usage`` (a last
chunk with the usage), chat ``n`` up to 8 (the model is deterministic: every choice the same)
and chat ``logprobs``/``top_logprobs`` (each token certain). Accepted as hints the scripted
model has no use for: penalties, ``user``, ``metadata``, reasoning effort, ``store``,
``truncation``, top_k, min_p, repetition_penalty, and ``max_tool_calls``, which caps built-in
tool calls, of which this server has none, and ``include: ["reasoning.encrypted_content"]``
(it keeps no reasoning it does not show). Refused, as a server that cannot do them should:
Responses log probabilities, any response format but text, other ``include`` entries, budgets under
16 tokens, and a budget an answer's calls do not fit in, found once the answer is written
(this server cannot cut an answer inside a call the way a model would). Text longer than the
budget is cut where it runs out, and the turn says so (chat ``length``, Responses
``incomplete``). Wrong types are refused everywhere.

A puppet script's text is generated as a model generates it (``written``): it ends before the
first stop string written whole within the budget, else where the budget runs out, markup and
all, four characters a token; the parser then reads what was written. So for a scripted
request any budget of one token or more is taken.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .parsers import CHARS_PER_TOKEN, Parsed, written_tokens
from .refusal import need

__all__ = ["Knobs", "read_knobs"]

_EFFORTS = ("minimal", "low", "medium", "high")
_SUMMARIES = ("auto", "concise", "detailed")
_SHORTEST = 16


@dataclass(frozen=True)
class Knobs:
    """What the server does with the surface: stop strings, a cap on calls, a usage chunk."""

    stop: tuple[str, ...] = ()
    max_calls: int | None = None
    include_usage: bool = False
    # Chat: how many choices (``n``), and how many alternatives per token when log-probs are on.
    choices: int = 1
    logprobs: int | None = None
    # The token budget (the least of those given): text longer is cut, calls longer refused.
    budget: int | None = None

    def cut(self, text: str) -> tuple[str, bool]:
        """``text`` up to its first stop string, and whether one was found."""
        ends = [text.find(s) for s in self.stop if s and s in text]
        return (text[: min(ends)], True) if ends else (text, False)

    def written(self, raw: str) -> tuple[str, bool]:
        """A scripted model's ``raw`` text as generation ends it, and whether the budget did:
        before the first stop string that fits in the budget, else where the budget runs out."""
        room = None if self.budget is None else self.budget * CHARS_PER_TOKEN
        found = [(raw.find(s), s) for s in self.stop if s and s in raw]
        fitting = [end for end, s in found if room is None or end + len(s) <= room]
        if fitting:
            return raw[: min(fitting)], False
        if room is not None and len(raw) > room:
            return raw[:room], True
        return raw, False

    def apply(self, parsed: Parsed) -> Parsed:
        """The turn as sent: cut at a stop string in the text, calls capped."""
        content, stopped = self.cut(parsed.content)
        calls = [] if stopped else parsed.calls
        if self.max_calls is not None:
            calls = calls[: self.max_calls]
        sent = replace(parsed, content=content, calls=calls)
        if self.budget is None or written_tokens(sent) <= self.budget:
            return sent
        need(not sent.calls, f"the answer's calls do not fit in {self.budget} tokens")
        # Text is cut where the budget runs out, reasoning first as the model wrote it.
        room = self.budget * CHARS_PER_TOKEN
        reasoning = (sent.reasoning or "")[:room]
        text = sent.content[: room - len(reasoning)]
        return replace(sent, content=text, reasoning=reasoning or None, cut_short=True)


def _number(body: dict[str, Any], key: str, low: float, high: float) -> None:
    value = body.get(key)
    ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool))
    ok = ok and (value is None or low <= value <= high)
    need(ok, f"{key} must be a number in [{low}, {high}]")


def _kind(body: dict[str, Any], key: str, kinds: type | tuple[type, ...], what: str) -> Any:
    value = body.get(key)
    need(value is None or isinstance(value, kinds), f"{key} must be {what}")
    return value


def _stop(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    ok = isinstance(stops, list) and all(isinstance(s, str) for s in stops)
    need(ok and len(stops) <= 4, "stop must be a string or a list of at most 4 strings")
    return tuple(stops)


def _format(body: dict[str, Any], api: str) -> None:
    if api == "chat":
        fmt = _kind(body, "response_format", dict, "an object")
    else:
        text = _kind(body, "text", dict, "an object")
        fmt = None if text is None else text.get("format")
        need(fmt is None or isinstance(fmt, dict), "text.format must be an object")
    if fmt is not None:
        need(fmt.get("type") == "text", f"response format {fmt.get('type')!r} is not supported")


def _reasoning(body: dict[str, Any], api: str) -> None:
    if api == "chat":
        effort = _kind(body, "reasoning_effort", str, "a string")
        need(effort is None or effort in _EFFORTS, f"reasoning_effort {effort!r} is not known")
        return
    reasoning = _kind(body, "reasoning", dict, "an object")
    if reasoning is not None:
        need(reasoning.get("effort") in (None, *_EFFORTS), "reasoning.effort is not known")
        need(reasoning.get("summary") in (None, *_SUMMARIES), "reasoning.summary is not known")


def _metadata(body: dict[str, Any]) -> None:
    meta = _kind(body, "metadata", dict, "an object")
    ok = meta is None or all(isinstance(v, str) and len(v) <= 512 for v in meta.values())
    need(ok and len(meta or {}) <= 16, "metadata must hold at most 16 string values")


def _budget(body: dict[str, Any], scripted: bool) -> int | None:
    budgets = []
    shortest = 1 if scripted else _SHORTEST
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            need(value >= shortest, f"{key} must be at least {shortest} on this server")
            budgets.append(value)
    return min(budgets, default=None)


def _calls_cap(body: dict[str, Any]) -> int | None:
    parallel = _kind(body, "parallel_tool_calls", bool, "a boolean")
    cap = _kind(body, "max_tool_calls", int, "an integer")
    need(cap is None or (cap >= 1 and not isinstance(cap, bool)), "max_tool_calls must be >= 1")
    return 1 if parallel is False else None


def read_knobs(body: dict[str, Any], api: str, stream: bool, *, scripted: bool = False) -> Knobs:
    """The surface fields of ``body`` checked, and what the server will do with them;
    ``scripted``: the request carries a puppet script, which any budget can cut."""
    choices = _kind(body, "n", int, "an integer")
    need(choices is None or 1 <= choices <= 8, "n must be between 1 and 8")
    logprobs = _kind(body, "logprobs", bool, "a boolean")
    top = _kind(body, "top_logprobs", int, "an integer")
    need(top is None or 0 <= top <= 20, "top_logprobs must be between 0 and 20")
    need(api == "chat" or not top, "top_logprobs are not supported on /v1/responses")
    need(not top or logprobs is True, "top_logprobs needs logprobs: true")
    for key in ("presence_penalty", "frequency_penalty"):
        _number(body, key, -2.0, 2.0)
    for key, low, high in (("top_k", -1, 1 << 20), ("min_p", 0, 1), ("repetition_penalty", 0, 10)):
        _number(body, key, low, high)
    for key in ("functions", "function_call"):
        need(key not in body, f"{key} is the legacy form of tools, which this server does not take")
    _kind(body, "user", str, "a string")
    _kind(body, "store", bool, "a boolean")
    truncation = body.get("truncation")
    need(truncation in (None, "auto", "disabled"), "truncation must be auto or disabled")
    include = _kind(body, "include", list, "a list")
    # Encrypted reasoning is accepted and has nothing to add: this server keeps no reasoning
    # it could not show (Codex CLI asks for it on every request).
    unsupported = [i for i in include or () if i != "reasoning.encrypted_content"]
    need(not unsupported, f"include {include!r} is not supported")
    _metadata(body)
    _format(body, api)
    _reasoning(body, api)
    budget = _budget(body, scripted)
    options = _kind(body, "stream_options", dict, "an object")
    need(options is None or stream, "stream_options needs stream: true")
    usage = (options or {}).get("include_usage")
    need(usage is None or isinstance(usage, bool), "stream_options.include_usage: not a boolean")
    stop, cap = _stop(body.get("stop")), _calls_cap(body)
    return Knobs(
        stop=stop,
        max_calls=cap,
        include_usage=bool(usage),
        choices=choices or 1,
        logprobs=(top or 0) if logprobs else None,
        budget=budget,
    )
