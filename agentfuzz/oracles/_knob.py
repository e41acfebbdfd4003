"""``knob``: an answer that ignores what the request asked of it.

Each check applies only where the request carried the knob, and judges only what the server
enforces whatever the model writes (a JSON 4xx refusal is always acceptable, and is judged by
nobody here). The signature names the knob, ``knob:<name>[:<how>]``; a profile lists the knobs
its target claims (``Profile.knobs``), and what this oracle finds on the others is recorded,
not reported.

- ``n`` (chat): that many choices, no more and no fewer.
- ``stop`` (chat): no stop string in any choice's visible text. Whether a stop *ended* the turn
  cannot be told from the answer (the model may have finished first), so ``finish_reason`` is
  not judged here.
- ``budget``: ``completion_tokens`` (chat, over every choice) or ``output_tokens`` (Responses)
  at most the token budget. That a turn using the whole budget says ``length`` is not judged:
  a model may write its end-of-turn token as the budget's last.
- ``include_usage`` (chat stream): exactly one chunk with a usage, last, its ``choices`` empty.
- ``parallel_tool_calls: false``: at most one call.
- ``logprobs`` (chat): a choice with text carries log-probabilities, and with ``top_logprobs``
  above 0, alternatives for each token. Responses log-probabilities are not judged.
- ``response_format`` / ``text.format``: with ``json_object`` or a ``strict`` JSON schema, text
  that ended normally (``stop`` / ``completed``, no call, no stop strings asked) parses as JSON,
  and matches the schema when there is one. A schema that is not strict promises no adherence.
- ``max_tool_calls`` (Responses): at most that many built-in tool calls (the spec's cap does not
  count function calls).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import integer, is_answer, usages
from agentfuzz.oracles._registry import clip, register

__all__ = ["knob"]

# Responses output items that are built-in tools' calls (``max_tool_calls`` caps them).
_HOSTED_CALLS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "computer_call",
        "local_shell_call",
    }
)
_CUSTOM_CALLS = frozenset({"custom", "custom_tool_call"})


@dataclass
class _Choice:
    """One chat choice as the wire gave it: its text and its log-probability entries."""

    text: str = ""
    logprobs: list[Any] = field(default_factory=list)


def _entries(logprobs: Any) -> list[Any]:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    return content if isinstance(content, list) else []


def _choices(obs: Observation) -> dict[int, _Choice]:
    """Every chat choice by its index, streamed deltas merged."""
    found: dict[int, _Choice] = {}
    for payload in obs.payloads:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        for position, raw in enumerate(choices if isinstance(choices, list) else []):
            if not isinstance(raw, dict):
                continue
            index = integer(raw.get("index"))
            choice = found.setdefault(position if index is None else index, _Choice())
            part = raw.get("delta" if obs.exchange.stream else "message")
            text = part.get("content") if isinstance(part, dict) else None
            choice.text += text if isinstance(text, str) else ""
            choice.logprobs += _entries(raw.get("logprobs"))
    return found


def _violation(knob: str, message: str, evidence: str, how: str = "") -> Violation:
    signature = f"knob:{knob}" + (f":{how}" if how else "")
    return Violation(oracle="knob", message=message, evidence=clip(evidence), signature=signature)


def _stops(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    return [s for s in stops if isinstance(s, str) and s]


def _n(body: dict[str, Any], choices: dict[int, _Choice]) -> Iterator[Violation]:
    n = integer(body.get("n"))
    if n is not None and n >= 1 and len(choices) != n:
        yield _violation("n", f"n is {n}, but the answer has {len(choices)} choice(s)", str(n))


def _stop(body: dict[str, Any], choices: dict[int, _Choice]) -> Iterator[Violation]:
    for stop in _stops(body):
        for index, choice in sorted(choices.items()):
            if stop in choice.text:
                message = f"choice {index}'s text holds the stop string {stop!r}"
                yield _violation("stop", message, choice.text)
                return


def _budget(case: Case, body: dict[str, Any], obs: Observation, n: int) -> Iterator[Violation]:
    keys: tuple[str, ...]
    if case.api == "responses":
        keys, used_key = ("max_output_tokens",), "output_tokens"
    else:
        keys, used_key = ("max_tokens", "max_completion_tokens"), "completion_tokens"
    # Two budgets given: a server may follow either, so only the larger binds.
    budgets = [b for k in keys if (b := integer(body.get(k))) is not None and b > 0]
    if not budgets:
        return
    budget = max(budgets) * (n if case.api == "chat" else 1)
    for usage in usages(obs):
        used = integer(usage.get(used_key))
        if used is not None and used > budget:
            message = f"{used_key} is {used}, over the budget of {budget}"
            yield _violation("budget", message, str(usage))
            return


def _include_usage(body: dict[str, Any], obs: Observation) -> Iterator[Violation]:
    options = body.get("stream_options")
    if not obs.exchange.stream or not isinstance(options, dict):
        return
    if options.get("include_usage") is not True:
        return
    chunks = [p for p in obs.payloads if isinstance(p, dict)]
    with_usage = [i for i, p in enumerate(chunks) if isinstance(p.get("usage"), dict)]
    if len(with_usage) != 1:
        message = f"include_usage asked one usage chunk, the stream has {len(with_usage)}"
        yield _violation("include_usage", message, f"{len(chunks)} chunks", "count")
        return
    (at,) = with_usage
    if at != len(chunks) - 1:
        message = f"the usage chunk is chunk {at + 1} of {len(chunks)}, not the last"
        yield _violation("include_usage", message, str(chunks[at]), "not_last")
    elif chunks[at].get("choices") != []:
        message = "the usage chunk's choices are not an empty list"
        yield _violation("include_usage", message, str(chunks[at]), "choices")


def _parallel(body: dict[str, Any], obs: Observation) -> Iterator[Violation]:
    if body.get("parallel_tool_calls") is not False:
        return
    calls = len(obs.tool_calls) + sum(kind in _CUSTOM_CALLS for kind in obs.others)
    if calls > 1:
        message = f"parallel_tool_calls is false, but the answer has {calls} calls"
        names = ", ".join(str(c.name) for c in obs.tool_calls)
        yield _violation("parallel_tool_calls", message, names)


def _logprobs(body: dict[str, Any], choices: dict[int, _Choice]) -> Iterator[Violation]:
    if body.get("logprobs") is not True:
        return
    top = integer(body.get("top_logprobs")) or 0
    for index, choice in sorted(choices.items()):
        if not choice.text:
            continue
        if not choice.logprobs:
            message = f"logprobs asked, but choice {index} has text and no log-probabilities"
            yield _violation("logprobs", message, choice.text, "missing")
            return
        bare = [e for e in choice.logprobs if not (isinstance(e, dict) and e.get("top_logprobs"))]
        if top > 0 and bare:
            message = f"top_logprobs is {top}, but {len(bare)} token(s) have no alternatives"
            yield _violation("logprobs", message, str(bare[0]), "top")
            return


def _format(case: Case, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None] | None:
    """The JSON the request asked the text to be: ``("json_object", None)``, ``("json_schema",
    schema)`` for a strict schema, or None (plain text, or no adherence promised)."""
    if case.api == "chat":
        fmt = body.get("response_format")
        spec = fmt.get("json_schema") if isinstance(fmt, dict) else None
    else:
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        spec = fmt
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object":
        return ("json_object", None)
    if fmt.get("type") != "json_schema" or not isinstance(spec, dict):
        return None
    schema = spec.get("schema")
    if spec.get("strict") is not True or not isinstance(schema, dict):
        return None
    return ("json_schema", schema)


def _json_text(case: Case, body: dict[str, Any], obs: Observation) -> Iterator[Violation]:
    wanted = _format(case, body)
    ended = obs.finish_reason == "stop" if case.api == "chat" else obs.status == "completed"
    if wanted is None or not ended or _stops(body) or obs.tool_calls or obs.others:
        return
    if not obs.text.strip():
        return  # an empty answer is empty_turn's to judge
    kind, schema = wanted
    try:
        value = json.loads(obs.text)
    except ValueError:
        message = f"{kind} asked, but the text is not JSON"
        yield _violation("response_format", message, obs.text, "not_json")
        return
    if schema is None:
        return
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as err:
        message = f"a strict JSON schema asked, but the text breaks it: {err.message}"
        yield _violation("response_format", message, obs.text, "schema")
    except jsonschema.SchemaError:
        return  # the request's own schema is broken: nothing to hold the answer to


def _max_tool_calls(case: Case, body: dict[str, Any], obs: Observation) -> Iterator[Violation]:
    cap = integer(body.get("max_tool_calls"))
    hosted = sum(kind in _HOSTED_CALLS for kind in obs.others)
    if case.api == "responses" and cap is not None and hosted > cap:
        message = f"max_tool_calls is {cap}, but the answer has {hosted} built-in tool calls"
        yield _violation("max_tool_calls", message, ", ".join(obs.others))


@register(
    "knob",
    expected="Every knob the request carries is honoured (n, stop, token budget, the usage "
    "chunk, parallel_tool_calls, logprobs, the response format), or refused with a JSON 4xx.",
    look_for="the knob the request set and what the answer did instead: the number of "
    "choices, a stop string in the text, the token count, the usage chunk, the number of "
    "calls, missing logprobs, text that is not the JSON asked for",
)
def knob(case: Case, obs: Observation) -> Iterator[Violation]:
    """A knob the request set and the answer ignored: n, stop, the token budget, a usage chunk,
    parallel_tool_calls, logprobs, a JSON response format, max_tool_calls.

    Each check judges only what the server enforces whatever the model writes; see the
    module's docstring for what each cannot tell (a stop that ended the turn, a budget spent
    to its last token). It judges 2xx answers only."""
    body = obs.exchange.request
    if not is_answer(obs) or not isinstance(body, dict):
        return
    yield from _budget(case, body, obs, integer(body.get("n")) or 1)
    yield from _parallel(body, obs)
    yield from _json_text(case, body, obs)
    yield from _max_tool_calls(case, body, obs)
    if case.api != "chat":
        return
    choices = _choices(obs)
    yield from _n(body, choices)
    yield from _stop(body, choices)
    yield from _include_usage(body, obs)
    yield from _logprobs(body, choices)
