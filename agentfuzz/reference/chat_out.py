"""Chat-completions output: one body, or the chunk sequence of a stream, for a parsed turn."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from .knobs import Knobs
from .parsers import Parsed, prompt_tokens, written_tokens
from .switches import Behaviour

__all__ = ["chat_body", "chat_error_events", "chat_events", "mint", "pieces", "token_logprobs"]

_PLAIN = Knobs()


def mint(rng: random.Random, prefix: str, digits: int = 32) -> str:
    """An id from the request's RNG, so identical requests at temperature 0 get identical ids."""
    return prefix + "".join(rng.choice("0123456789abcdef") for _ in range(digits))


def pieces(text: str, size: int = 12) -> list[str]:
    """Split text into stream deltas (at least one, possibly empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _call_ids(profile: Behaviour, parsed: Parsed, rng: random.Random) -> list[str]:
    # Harmony names calls by recipient, so the server mints ids; Kimi ids come from the parser.
    if profile.template == "harmony":
        return [mint(rng, "chatcmpl-tool-") for _ in parsed.calls]
    return [call.id for call in parsed.calls]


def _usage(prompt: str, parsed: Parsed) -> dict[str, int]:
    prompt_size = prompt_tokens(prompt)
    completion = written_tokens(parsed)
    return {
        "prompt_tokens": prompt_size,
        "completion_tokens": completion,
        "total_tokens": prompt_size + completion,
    }


def token_logprobs(text: str, top: int) -> list[dict[str, Any]]:
    """Log-probabilities of ``text``'s stream pieces as a deterministic model has them: each
    piece certain (0.0), any alternative asked for next to impossible."""
    out = []
    for piece in pieces(text) if text else []:
        entry: dict[str, Any] = {"token": piece, "logprob": 0.0, "bytes": list(piece.encode())}
        others = [{"token": "", "logprob": -9999.0, "bytes": []}] * max(0, top - 1)
        entry["top_logprobs"] = [dict(entry), *others][:top] if top else []
        out.append(entry)
    return out


def chat_body(
    profile: Behaviour,
    model: str,
    prompt: str,
    parsed: Parsed,
    rng: random.Random,
    knobs: Knobs = _PLAIN,
) -> dict[str, Any]:
    """A ``chat.completion`` body, with ``knobs.choices`` choices (the model is deterministic,
    so each is the same) and their log-probabilities when asked."""
    completion_id = mint(rng, "chatcmpl-")
    message: dict[str, Any] = {"role": "assistant", "content": parsed.content or None}
    if parsed.reasoning:
        message["reasoning_content"] = parsed.reasoning
    if parsed.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for cid, c in zip(_call_ids(profile, parsed, rng), parsed.calls, strict=True)
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": index,
                "message": message,
                "logprobs": None
                if knobs.logprobs is None
                else {"content": token_logprobs(parsed.content, knobs.logprobs)},
                "finish_reason": _finish(parsed),
            }
            for index in range(knobs.choices)
        ],
        "usage": _usage(prompt, parsed),
    }


def _chunk(completion_id: str, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps(
        {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        },
    )


def _finish(parsed: Parsed) -> str:
    """``length`` whenever the token budget ran out, calls or not (the API reference's rule; a
    client reads it to know a call may be half-written), else ``tool_calls`` or ``stop``."""
    return "length" if parsed.cut_short else "tool_calls" if parsed.calls else "stop"


def chat_events(
    profile: Behaviour,
    model: str,
    parsed: Parsed,
    rng: random.Random,
    usage_of: str | None = None,
    knobs: Knobs = _PLAIN,
) -> list[str]:
    """The ``data:`` payloads of a chat stream, ending with ``[DONE]``; with ``usage_of`` (the
    prompt), a last chunk with no choices carries the usage (``stream_options.include_usage``).
    Each of ``knobs.choices`` choices streams in turn, with log-probabilities when asked."""
    completion_id = mint(rng, "chatcmpl-")
    out = [_chunk(completion_id, model, {"role": "assistant", "content": ""})]
    if parsed.reasoning:
        out += [
            _chunk(completion_id, model, {"reasoning_content": p}) for p in pieces(parsed.reasoning)
        ]
    if parsed.content:
        out += [_chunk(completion_id, model, {"content": p}) for p in pieces(parsed.content)]
    for position, (cid, call) in enumerate(
        zip(_call_ids(profile, parsed, rng), parsed.calls, strict=True)
    ):
        # vLLM keeps a dropped call's slot, so survivors can start at index 1.
        index = call.slot if profile.keep_slot_index else position
        head = {"index": index, "id": cid, "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        out.append(_chunk(completion_id, model, {"tool_calls": [head]}))
        for part in pieces(call.arguments):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
            out.append(_chunk(completion_id, model, delta))
    out.append(_chunk(completion_id, model, {}, _finish(parsed)))
    if knobs.choices > 1 or knobs.logprobs is not None:
        out = _with_choices(out, knobs)
    if usage_of is not None:
        last = json.loads(_chunk(completion_id, model, {}))
        last |= {"choices": [], "usage": _usage(usage_of, parsed)}
        out.append(json.dumps(last))
    out.append("[DONE]")
    return out


def _with_choices(chunks: list[str], knobs: Knobs) -> list[str]:
    """One choice's chunks for each of ``knobs.choices``, content chunks with log-probs."""
    out = []
    for index in range(knobs.choices):
        for data in chunks:
            chunk = json.loads(data)
            choice = chunk["choices"][0]
            choice["index"] = index
            content = choice["delta"].get("content")
            if knobs.logprobs is not None and content:
                choice["logprobs"] = {"content": token_logprobs(content, knobs.logprobs)}
            out.append(json.dumps(chunk))
    return out


def chat_error_events(model: str, markup: str, rng: random.Random) -> list[str]:
    """exo's failure stream: a role chunk, then an error frame whose message is the raw markup."""
    completion_id = mint(rng, "chatcmpl-")
    error = {"error": {"message": markup, "type": "InternalServerError", "code": 500}}
    return [
        _chunk(completion_id, model, {"role": "assistant", "content": ""}),
        json.dumps(error),
    ]
