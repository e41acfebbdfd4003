"""Readers of the formats that write one tagged parameter per argument: Qwen3 XML (and
Qwen3-Coder, Step-3.5, Seed-OSS on its grammar), GLM-4.5 and 4.7, MiniMax-M2, Step-3,
FunctionGemma.

A value is text between tags. These families write a string verbatim and any other value as
JSON, so the text alone cannot say ``"3"`` from ``3``: the value is typed by the parameter's
declared JSON type in the request's tool (a string when none is declared), as these parsers
do. FunctionGemma alone reads a value as JSON whenever it can.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .reading import Context, Part, ReadCall, Reader, Unreadable, scan

__all__ = ["READERS", "typed"]

ReadFn = Callable[[str, Context], list[Part]]


def _declared_types(schema: Any, key: str) -> list[str]:
    """The JSON types the tool's ``parameters`` declare for ``key``; none when it says none."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    spec = props.get(key) if isinstance(props, dict) else None
    kind = spec.get("type") if isinstance(spec, dict) else None
    kinds = kind if isinstance(kind, list) else [kind]
    return [k for k in kinds if isinstance(k, str)]


_FITS = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def typed(text: str, kinds: list[str]) -> Any:
    """A parameter's text as the value its declared types make of it: a string where a string
    is declared (or nothing is), else the JSON value the text spells if it fits one of them,
    else the text itself."""
    if not kinds or ("string" in kinds and not (text == "null" and "null" in kinds)):
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value if any(_FITS.get(k, lambda v: False)(value) for k in kinds) else text


def _call(name: str, pairs: list[tuple[str, str]], context: Context) -> ReadCall:
    schema = context.schemas.get(name)
    return ReadCall(name, {key: typed(text, _declared_types(schema, key)) for key, text in pairs})


def _block(opening: str, closing: str, calls: ReadFn) -> ReadFn:
    """A reader of ``opening … closing`` blocks, each read into calls by ``calls``. A verbatim
    value never holds a marker (the format cannot write one there), so the first closing
    marker ends the block."""

    def read(raw: str, context: Context) -> list[Part]:
        def block(text: str, at: int) -> tuple[list[Part], int]:
            end = text.find(closing, at)
            if end < 0:
                raise Unreadable(f"no {closing!r} after {at}")
            return calls(text[at:end], context), end + len(closing)

        return scan(raw, opening, block)

    return read


_QWEN_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)</function>", re.S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>", re.S)


def _one_newline_off(text: str) -> str:
    """The value between its tags, less the one newline the format writes on each side."""
    return text.removeprefix("\n").removesuffix("\n")


def _qwen3_calls(body: str, context: Context) -> list[Part]:
    """``<function=NAME>`` with one ``<parameter=KEY>`` per argument."""
    calls: list[Part] = []
    for function in _QWEN_FUNCTION.finditer(body):
        pairs = [(p[1].strip(), _one_newline_off(p[2])) for p in _QWEN_PARAM.finditer(function[2])]
        calls.append(_call(function[1].strip(), pairs, context))
    if not calls:
        raise Unreadable("a tool call without a function")
    return calls


_GLM_PAIR = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.S)


def _glm_calls(body: str, context: Context) -> list[Part]:
    """``NAME`` then ``<arg_key>``/``<arg_value>`` pairs: name and keys stripped, values
    verbatim."""
    name = body.split("<arg_key>", 1)[0].strip()
    if not name:
        raise Unreadable("a tool call without a name")
    pairs = [(pair[1].strip(), pair[2]) for pair in _GLM_PAIR.finditer(body)]
    return [_call(name, pairs, context)]


_INVOKE = re.compile(r'<invoke name="([^"]*)">(.*?)</invoke>', re.S)
_MINIMAX_PARAM = re.compile(r'<parameter name="([^"]*)">(.*?)</parameter>', re.S)


def _minimax_calls(body: str, context: Context) -> list[Part]:
    """``<invoke name="NAME">`` blocks of ``<parameter name="KEY">`` values, verbatim."""
    calls: list[Part] = []
    for invoke in _INVOKE.finditer(body):
        pairs = [(p[1], p[2]) for p in _MINIMAX_PARAM.finditer(invoke[2])]
        calls.append(_call(invoke[1], pairs, context))
    return calls


_STEP_INVOKE = re.compile(r'<steptml:invoke name="([^"]*)">(.*?)</steptml:invoke>', re.S)
_STEP_PARAM = re.compile(r'<steptml:parameter name="([^"]*)">([^<]*)</steptml:parameter>')


def _step3_calls(body: str, context: Context) -> list[Part]:
    """Calls of one section, each an invoke whose values are stripped scalars."""
    calls: list[Part] = []
    for invoke in _STEP_INVOKE.finditer(body):
        pairs = [(p[1], p[2].strip()) for p in _STEP_PARAM.finditer(invoke[2])]
        calls.append(_call(invoke[1], pairs, context))
    return calls


_GEMMA_CALL = re.compile(r"call:(\w+)\{(.*)\}", re.S)
_GEMMA_PARAM = re.compile(r"(\w+):<escape>(.*?)<escape>", re.S)


def _gemma_value(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _gemma_calls(body: str, context: Context) -> list[Part]:
    """``call:NAME{key:<escape>VALUE<escape>,…}``: a value that reads as JSON is that
    value, any other is the string."""
    call = _GEMMA_CALL.fullmatch(body.strip())
    if call is None:
        raise Unreadable("not call:NAME{…}")
    arguments = {p[1]: _gemma_value(p[2]) for p in _GEMMA_PARAM.finditer(call[2])}
    return [ReadCall(call[1], arguments)]


_QWEN3 = _block("<tool_call>", "</tool_call>", _qwen3_calls)
_GLM = _block("<tool_call>", "</tool_call>", _glm_calls)

READERS: tuple[Reader, ...] = (
    Reader("qwen3_xml", _QWEN3),
    Reader("qwen3_coder", _QWEN3),
    Reader("step3p5", _QWEN3),
    Reader("seed_oss", _block("<seed:tool_call>", "</seed:tool_call>", _qwen3_calls)),
    Reader("glm45", _GLM, declared_only=True),
    Reader("glm47", _GLM, declared_only=True),
    Reader(
        "minimax_m2",
        _block("<minimax:tool_call>", "</minimax:tool_call>", _minimax_calls),
        declared_only=True,
    ),
    Reader("step3", _block("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", _step3_calls)),
    Reader("functiongemma", _block("<start_function_call>", "<end_function_call>", _gemma_calls)),
)
