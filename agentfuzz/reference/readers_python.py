"""Readers of the formats whose calls are Python calls with keyword arguments: pythonic
(Llama 3.2, ToolACE), Llama 4 pythonic, Olmo 3.

The calls are read with Python's own parser, as these families' parsers do, and each value is
a literal (a JSON string is one). Olmo 3 spells true, false and null as JSON does, and writes
one call a line; its calls are read as the statements they are, so a line separator inside a
string stays in the string.
"""

from __future__ import annotations

import ast
from typing import Any

from .reading import Context, Part, ReadCall, Reader, Unreadable

__all__ = ["READERS"]

_JSON_NAMES = {"true": True, "false": False, "null": None}


def _literal(node: ast.expr, json_names: bool) -> Any:
    """The value a literal node spells; ``json_names``: ``true``/``false``/``null`` too."""
    value = node.value if isinstance(node, ast.Constant) else ...
    if value is None or isinstance(value, str | int | float):  # bool is an int
        return value
    if isinstance(node, ast.Name) and json_names and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item, json_names) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [_literal(k, json_names) if k is not None else None for k in node.keys]
        if not all(isinstance(k, str) for k in keys):
            raise Unreadable("a dict key that is no string")
        return {k: _literal(v, json_names) for k, v in zip(keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        number = _literal(node.operand, json_names)
        if isinstance(number, int | float) and not isinstance(number, bool):
            return -number if isinstance(node.op, ast.USub) else number
    raise Unreadable(f"not a literal: {ast.dump(node)[:60]}")


def _call(node: ast.expr, json_names: bool) -> ReadCall:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
        raise Unreadable("not a call with keyword arguments")
    arguments = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise Unreadable("a call with **arguments")
        arguments[keyword.arg] = _literal(keyword.value, json_names)
    return ReadCall(node.func.id, arguments)


def _call_list(code: str) -> list[Part] | None:
    """The calls of a Python list of calls, or None when ``code`` is not one."""
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree, ast.List) or not tree.elts:
        return None
    return [_call(node, json_names=False) for node in tree.elts]


def _pythonic(raw: str, context: Context) -> list[Part]:
    """The whole output is a list of calls; anything else is plain text."""
    calls = _call_list(raw)
    return [raw] if calls is None else calls


def _llama4_pythonic(raw: str, context: Context) -> list[Part]:
    """The pythonic list, maybe inside ``<|python_start|>…<|python_end|>``."""
    code = raw.strip()
    if code.startswith("<|python_start|>"):
        code = code.removeprefix("<|python_start|>").removesuffix("<|python_end|>")
    calls = _call_list(code)
    return [raw] if calls is None else calls


def _statements(code: str) -> list[ast.stmt] | None:
    try:
        return ast.parse(code.strip(), mode="exec").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _olmo3(raw: str, context: Context) -> list[Part]:
    """``<function_calls>``, one call a line, ``</function_calls>``; the text around it is
    content. The closing tag is the first one after which the lines read as Python, so one
    inside a string stays there."""
    opening, closing = "<function_calls>", "</function_calls>"
    start = raw.find(opening)
    if start < 0:
        return [raw]
    end = raw.find(closing, start)
    while end >= 0:
        statements = _statements(raw[start + len(opening) : end])
        if statements is not None:
            break
        end = raw.find(closing, end + 1)
    else:
        raise Unreadable("the calls are not Python, or not closed")
    calls: list[Part] = []
    for statement in statements:
        if not isinstance(statement, ast.Expr):
            raise Unreadable("a line that is not a call")
        calls.append(_call(statement.value, json_names=True))
    return [raw[:start], *calls, raw[end + len(closing) :]]


READERS: tuple[Reader, ...] = (
    Reader("pythonic", _pythonic),
    Reader("llama4_pythonic", _llama4_pythonic),
    Reader("olmo3", _olmo3),
)
