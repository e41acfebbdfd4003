"""Reading a captured body's fields: each one checked, and anything wrong one ``InputError`` line
that says where (``messages[2].content``) and what was expected."""

from __future__ import annotations

import json
from typing import Any, NoReturn, TypeVar

from agentfuzz.errors import InputError

__all__ = [
    "InputError",
    "arguments",
    "fail",
    "get",
    "kind_of",
    "number",
    "opt_str",
    "str_",
    "text",
    "want",
]

_T = TypeVar("_T")
TEXT_PARTS = ("text", "input_text", "output_text", "summary_text", "reasoning_text")
_NAMES = {
    type(None): "null",
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
}


def fail(where: str, what: str) -> NoReturn:
    raise InputError(f"{where}: {what}" if where else what)


def kind_of(value: Any) -> str:
    number = isinstance(value, int | float)
    return _NAMES.get(type(value)) or ("a number" if number else type(value).__name__)


def want(value: Any, kind: type[_T], where: str) -> _T:
    if not isinstance(value, kind):
        fail(where, f"expected {_NAMES[kind]}, got {kind_of(value)}")
    return value


def str_(obj: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    """``obj[key]``, a string; ``default``, when given, stands in for a missing or null one."""
    value = obj.get(key)
    if value is None and default is not None:
        return default
    return want(value, str, f"{where}.{key}" if where else key)


def get(obj: dict[str, Any], key: str, default: Any) -> Any:
    """``obj[key]``, with ``default`` for a missing or null one (an empty ``{}`` stays wrong)."""
    value = obj.get(key)
    return default if value is None else value


def opt_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    return None if obj.get(key) is None else str_(obj, key, where)


def text(value: Any, where: str, sep: str = "\n") -> str:
    """Content as one string: a string, or its text parts joined."""
    if isinstance(value, str):
        return value
    texts = []
    for i, raw in enumerate(want(value, list, where)):
        part = want(raw, dict, f"{where}[{i}]")
        if part.get("type", "text") not in TEXT_PARTS:
            fail(f"{where}[{i}]", f"unsupported content part {part.get('type')!r:.40}")
        texts.append(str_(part, "text", f"{where}[{i}]"))
    return sep.join(texts)


def arguments(value: Any) -> str:
    # Verbatim: malformed arguments are often the point of a repro.
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


def number(obj: dict[str, Any], key: str, integer: bool) -> Any:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int if integer else int | float):
        fail(key, f"expected {'an integer' if integer else 'a number'}, got {kind_of(value)}")
    try:
        return value if integer else float(value)
    except OverflowError:
        fail(key, "number out of range")
