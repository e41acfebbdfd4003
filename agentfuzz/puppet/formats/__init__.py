"""The catalog of tool-call output formats: for each of vLLM 0.32's tool parsers covered here,
how that model family writes text and calls, and what a faithful server gives back.

``FORMATS`` maps vLLM's ``--tool-call-parser`` name to its ``Format``. A few parser names read
another's format with the same class (``qwen3_json`` is Hermes, ``llama4_json`` Llama 3 JSON,
``qwen3_coder`` Qwen3 XML) or the same grammar (``step3p5`` reads Qwen3 XML): they are listed
under their own name, with the parser class that name loads.

    fmt = format_named("kimi_k2")
    script = Script((Call("get_weather", {"city": "Paris"}),), text_before="Let me look.")
    fmt.write(script)     # what the model writes
    fmt.expected(script)  # what the server must return
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from agentfuzz.errors import InputError
from agentfuzz.puppet.formats import json_tags, params, pythonic, special
from agentfuzz.puppet.formats._model import (
    ArgumentStyle,
    Call,
    Format,
    Place,
    Script,
    Truth,
    Unwritable,
)
from agentfuzz.puppet.formats._values import Json

__all__ = [
    "FORMATS",
    "ArgumentStyle",
    "Call",
    "Format",
    "Json",
    "Place",
    "Script",
    "Truth",
    "Unwritable",
    "format_named",
]

_WRITTEN = {
    fmt.name: fmt for module in (json_tags, special, params, pythonic) for fmt in module.FORMATS
}

# Parser names that load a class (or a grammar) another format already writes for.
_ALIASES = {
    "qwen3_json": ("hermes", "hermes_tool_parser.Hermes2ProToolParser"),
    "llama4_json": ("llama3_json", "llama_tool_parser.Llama3JsonToolParser"),
    "qwen3_coder": ("qwen3_xml", "qwen3_engine_tool_parser.Qwen3EngineToolParser"),
    "step3p5": ("qwen3_xml", "step3p5_tool_parser.Step3p5ToolParser"),
}

FORMATS: dict[str, Format] = {
    **_WRITTEN,
    **{
        alias: replace(_WRITTEN[base], name=alias, parser="vllm.tool_parsers." + parser)
        for alias, (base, parser) in _ALIASES.items()
    },
}


def format_named(name: str) -> Format:
    """The format vLLM's parser ``name`` reads; an ``InputError`` naming the closest ones."""
    try:
        return FORMATS[name]
    except KeyError:
        close = difflib.get_close_matches(name, FORMATS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(FORMATS)}"
        raise InputError(f"unknown tool-call format {name!r}{hint}") from None
