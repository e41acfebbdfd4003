"""Server-side tool parsers: the model's raw text split into content, reasoning and calls.

Kimi headers carry the function name inside the call id, so what a parser does with an id
it cannot read decides the seed bug: vLLM drops the call silently (seed 000), exo raises
(seed 001), exo's fix accepts the sanitised form and degrades a miss to plain text.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from .switches import KimiGrammar, Miss

__all__ = [
    "SECTION_BEGIN",
    "SECTION_END",
    "ParseFailure",
    "Parsed",
    "ParsedCall",
    "parse_harmony",
    "parse_kimi",
    "prompt_tokens",
    "strip_markup",
    "written_tokens",
]

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
_SECTION = SECTION_BEGIN
_CALL = re.compile(
    r"<\|tool_call_begin\|>(.*?)<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>", re.S
)
_VLLM_ID = re.compile(r"(?P<id>.+:\d+)", re.S)
_EXO_ID = re.compile(r"(?:functions\.)?(.+):(\d+)", re.S)
_EXO_FIXED_ID = re.compile(r"(?:functions[._])?(.+?)[:_](\d+)", re.S)
_MARKUP = re.compile(r"<\|[A-Za-z0-9_]+\|>")


@dataclass(frozen=True)
class ParsedCall:
    """A call the parser accepted; ``slot`` is its position among the calls the model wrote."""

    slot: int
    id: str
    name: str
    arguments: str


@dataclass
class Parsed:
    """One assistant turn as the server will send it."""

    content: str = ""
    reasoning: str | None = None
    calls: list[ParsedCall] = field(default_factory=list)
    # The token budget ended the turn: the text was cut there (chat ``length``, Responses
    # ``incomplete``).
    cut_short: bool = False
    # How many tokens the model wrote, where its raw text is known (a puppet script's, four
    # characters a token); None: counted from the parse (``written_tokens``).
    written: int | None = None


class ParseFailure(Exception):
    """The parser gave up; its message is the raw model output (as exo reports it)."""


def strip_markup(raw: str) -> str:
    """The text with every ``<|...|>`` special token removed."""
    return _MARKUP.sub("", raw)


def _read_header(
    header: str, grammar: KimiGrammar, tools: Collection[str]
) -> tuple[str, str] | None:
    """(id, function name) from a call header, or None when this grammar cannot read it."""
    header = header.strip()
    if grammar == "vllm":
        match = _VLLM_ID.fullmatch(header)
        name = match.group("id").rsplit(":", 1)[0].removeprefix("functions.") if match else ""
        call_id = header
    elif grammar == "exo":
        match = _EXO_ID.fullmatch(header)
        name = match.group(1) if match else ""
        call_id = header
    else:
        match = _EXO_FIXED_ID.fullmatch(header)
        name = match.group(1) if match else ""
        call_id = f"functions.{name}:{match.group(2)}" if match else ""
    return (call_id, name) if match and name in tools else None


def parse_kimi(raw: str, tools: Collection[str], grammar: KimiGrammar, miss: Miss) -> Parsed:
    """Parse Kimi-K2 output; ``tools`` are the declared flat names."""
    start = raw.find(_SECTION)
    if start < 0:
        return Parsed(content=raw)
    parsed = Parsed(content=raw[:start])
    for slot, match in enumerate(_CALL.finditer(raw, start)):
        got = _read_header(match.group(1), grammar, tools)
        if got is not None:
            parsed.calls.append(ParsedCall(slot, got[0], got[1], match.group(2)))
        elif miss == "error":
            raise ParseFailure(raw[start:])
        elif miss == "content":
            return Parsed(content=" ".join(strip_markup(raw).split()))
    return parsed


def parse_harmony(raw: str, tools: Collection[str]) -> Parsed:
    """Parse harmony output: analysis is reasoning, ``to=functions.X`` a call, final the text."""
    parsed = Parsed()
    reasoning: list[str] = []
    slot = 0
    for chunk in raw.split("<|start|>"):
        header, _, body = chunk.partition("<|message|>")
        body = re.split(r"<\|(?:end|call|return)\|>", body, maxsplit=1)[0]
        channel = re.search(r"<\|channel\|>(\w+)", header)
        recipient = re.search(r"to=(\S+)", header)
        if recipient and recipient.group(1).startswith("functions."):
            name = recipient.group(1).removeprefix("functions.")
            if name in tools:
                parsed.calls.append(ParsedCall(slot, "", name, body))
            slot += 1
        elif channel and channel.group(1) == "analysis":
            reasoning.append(body)
        elif channel and channel.group(1) == "final":
            parsed.content += body
    parsed.reasoning = "\n".join(reasoning) or None
    return parsed


# How this server counts tokens: four characters a token.
CHARS_PER_TOKEN = 4


def tokens_in(text: str) -> int:
    """The tokens ``text`` counts for (at least one)."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def written_tokens(parsed: Parsed) -> int:
    """How many tokens the model wrote for ``parsed``, four characters a token (at least one):
    its text, its calls' arguments and its reasoning. Usage and the token budget both count so.
    A scripted turn counts its raw text, markup and all (``Parsed.written``)."""
    if parsed.written is not None:
        return parsed.written
    out = parsed.content + "".join(c.arguments for c in parsed.calls) + (parsed.reasoning or "")
    return tokens_in(out)


# What this server's tokenizer reads as one token: a special token's spelling (``<|name|>``,
# DeepSeek's full-width ``<｜name｜>``), a word, any other character that is not a space.
_TOKEN = re.compile(r"<\|[^|<>\s]+\|>|<｜[^｜<>\s]+｜>|\w+|[^\w\s]")


def prompt_tokens(prompt: str) -> int:
    """How many tokens the rendered ``prompt`` is (at least one): every special-token spelling
    that reached it is one token, so escaping message text (``templates``) is what keeps a
    user's ``<|im_end|>`` from being one."""
    return max(1, len(_TOKEN.findall(prompt)))
