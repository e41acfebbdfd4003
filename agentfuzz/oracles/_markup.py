"""The ``leaked_markup`` oracle: chat-template special tokens surfacing in the visible turn.

Scanned: ``text``, each call's name and its arguments. Not scanned: ``reasoning``. A model
may legitimately think about markup (it is asked to explain a template, it quotes a log),
and a parser that left a call inside the reasoning is seen by ``empty_turn`` instead, as
the call then never reaches the client.

Hermes-style tags are plain text, not special tokens, so a model can write them in prose
like any other words. For them only what a server's parser should have taken counts: a
``<tool_call>`` that opens a JSON payload, and a ``</tool_call>`` that closes one. A
``</tool_call>`` with no opener counts when it closes a call payload (a JSON object with
``"arguments"``) or when the answer carries a call (the rest of one the parser cut out);
after prose or a tool's declaration copied as JSON, in an answer with no call, it is a word the
model wrote (seen on vLLM with SmolLM2: no parser acted). ``<tool_response>`` never counts: it
wraps results in the prompt, and one in the answer is the model imitating its template. Nor does
any Hermes tag when the request declared no tools: no parser was to take a call out, and the
model is copying the calls it sees in the history (seed 004's special tokens still count).
A turn cut by the token limit gets ``:truncated`` on its signature: a parser that leaves a
half-written call in text is a different fault from one that leaves a whole call there.

A token the request itself sent (in a message, a tool result, a tool's declaration, its
``instructions``) never counts: a model may repeat what it read, and that is not the server's
doing. The price: a server that turns such text into a real control token is not seen here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import declared_tools, is_truncated, stop_requested
from agentfuzz.oracles._registry import clip, register

__all__ = ["MARKUP", "find_markup", "leaked_markup", "sent_tokens"]

# Each alternative is a token family; the pipe-delimited forms are narrow enough (no spaces,
# identifier characters only) that ordinary prose with "<" or "|" does not match them.
_FAMILIES = [
    # Kimi, ChatML, harmony, Llama 3, Phi, Granite and any other <|name|> special token.
    r"<\|[A-Za-z_][A-Za-z0-9_]*\|>",
    # DeepSeek: fullwidth bars and U+2581 word separators, e.g. <｜tool▁calls▁begin｜>.
    r"<｜[^｜<>\s]{1,48}｜>",
    # Hermes / Qwen / GLM XML-ish tool tags.
    r"</?(?:tool_call|tool_response|tool_calls|arg_key|arg_value)>",
    # Qwen3-Coder function/parameter tags.
    r"</?(?:function|parameter)=[^<>\s]{1,64}>",
    # Gemma turns and function-call brackets.
    r"<(?:start|end)_of_turn>|<(?:start|end)_function_(?:call|response)>",
    # Mistral control tokens.
    r"\[(?:TOOL_CALLS|/?INST|/?TOOL_RESULTS|/?AVAILABLE_TOOLS|CALL_ID|ARGS)\]",
]

MARKUP = re.compile("|".join(f"(?:{f})" for f in _FAMILIES))

_CONTEXT = 40


def _token_name(token: str) -> str:
    """The token as a signature names it: parameterised tags lose their varying name."""
    if token.startswith(("<function=", "<parameter=", "</function=", "</parameter=")):
        return token.split("=", 1)[0] + "=…>"
    return token


_PAYLOAD_START = re.compile(r"\s*\{")
_PAYLOAD_END = re.compile(r"\}\s*$")
# A call payload's arguments key, before the closing tag that ends it.
_CALL_PAYLOAD = re.compile(r'\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"arguments"\s*:')


_HERMES = frozenset({"<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"})


def _counts(match: re.Match[str], text: str, parsed: bool, called: bool) -> bool:
    """Whether a match is markup a server let through, not a word a model wrote (Hermes tags).

    ``parsed``: the request declared tools, so the server's tool parser was to read the answer;
    ``called``: the answer carries a call, so a parser took one out.
    """
    token = match.group()
    if token in _HERMES and not parsed:
        return False
    if token in ("<tool_response>", "</tool_response>"):
        return False
    if token == "<tool_call>":
        return _PAYLOAD_START.match(text, match.end()) is not None
    if token == "</tool_call>":
        before = text[: match.start()]
        if "<tool_call>" in before:
            return _PAYLOAD_END.search(before) is not None
        return called or (
            _PAYLOAD_END.search(before) is not None and _CALL_PAYLOAD.search(before) is not None
        )
    return True


def find_markup(
    text: str, parsed: bool = True, sent: frozenset[str] = frozenset(), called: bool = True
) -> list[re.Match[str]]:
    """Every special-token match in ``text`` that counts as leaked, in order of position;
    ``parsed`` False: no tools were declared, so no parser was to take a Hermes call out;
    ``sent``: tokens the request itself carried, which never count; ``called`` False: the
    answer carries no call, so no parser left the close of one behind."""
    return [
        m
        for m in MARKUP.finditer(text)
        if m.group() not in sent and _counts(m, text, parsed, called)
    ]


def sent_tokens(case: Case) -> frozenset[str]:
    """The special tokens anywhere in what the request sent: its history, tools and fields."""
    sent = json.dumps(
        [case.history.model_dump(mode="json"), case.options.fields], ensure_ascii=False
    )
    # Read from the JSON text, so a token's quotes and backslashes come back escaped: good
    # enough, as no family's token holds either.
    return frozenset(m.group() for m in MARKUP.finditer(sent))


def _violation(
    where: str, text: str, suffix: str, parsed: bool, sent: frozenset[str], called: bool
) -> Violation | None:
    matches = find_markup(text, parsed, sent, called)
    if not matches:
        return None
    first = matches[0]
    start, end = max(0, first.start() - _CONTEXT), min(len(text), first.end() + _CONTEXT)
    span = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    tokens = list(dict.fromkeys(_token_name(m.group()) for m in matches))
    listed = ", ".join(tokens[:6]) + (", …" if len(tokens) > 6 else "")
    return Violation(
        oracle="leaked_markup",
        message=f"special-token markup in {where}: {listed}",
        evidence=clip(span),
        signature=f"leaked_markup:{_token_name(first.group())}{suffix}",
    )


@register(
    "leaked_markup",
    expected="Text, tool names and arguments carry no chat-template markup (special "
    "tokens, tool-call tags).",
    look_for="template markup in the text or the tool call",
    rank=70,
)
def leaked_markup(case: Case, obs: Observation) -> Iterator[Violation]:
    """Raw template markup in text, a call name or call arguments (seed 004).

    Not judged on requests with stop strings: a stop that matches inside a call leaves the
    server a half-written call, and whether it should then show it as text is not settled.
    """
    if obs.refused or stop_requested(case):
        return
    places: list[tuple[str, str]] = [("text", obs.text)]
    for n, call in enumerate(obs.tool_calls):
        places.append((f"tool call {n} name", call.name or ""))
        places.append((f"tool call {n} arguments", call.arguments))
    if not any(MARKUP.search(text) for _, text in places):
        return
    suffix = ":truncated" if is_truncated(obs) else ""
    parsed = bool(declared_tools(case))
    sent = sent_tokens(case)
    for where, text in places:
        found = _violation(where, text, suffix, parsed, sent, bool(obs.tool_calls))
        if found is not None:
            yield found
