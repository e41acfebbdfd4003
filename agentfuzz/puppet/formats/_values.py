"""Argument values: what counts as JSON here, and how each family spells a value.

A model writes JSON with ``json.dumps``'s default spacing and raw non-ASCII, as chat templates'
``tojson`` does, or, inside ``escaping()``, every non-ASCII character as a ``\\u`` escape, as
some models write it (the same value spelt another way); a Python-call family writes the same
strings (a JSON string is a valid Python literal, never escaped: Python reads a surrogate pair's
escapes as two lone surrogates) with its own spelling of true, false and null.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeAlias

__all__ = [
    "Json",
    "escaping",
    "json_text",
    "param_text",
    "python_literal",
    "strings",
    "value_problem",
]

Json: TypeAlias = "bool | int | float | str | list[Json] | dict[str, Json] | None"


# Whether JSON text is being written with non-ASCII characters escaped (``escaping``).
_ESCAPED: ContextVar[bool] = ContextVar("escaped", default=False)


@contextmanager
def escaping(on: bool) -> Iterator[None]:
    """While open (``on``), ``json_text`` escapes every non-ASCII character."""
    token = _ESCAPED.set(on)
    try:
        yield
    finally:
        _ESCAPED.reset(token)


def json_text(value: Json) -> str:
    return json.dumps(value, ensure_ascii=_ESCAPED.get())


def param_text(value: Json) -> str:
    """A parameter's value as tag-per-argument formats write it: a string verbatim, any other
    value as JSON."""
    return value if isinstance(value, str) else json_text(value)


def python_literal(value: Json, *, json_names: bool = False) -> str:
    """``value`` as a Python literal; ``json_names`` spells true, false and null as JSON does
    (Olmo 3 writes them so inside its Python-like calls)."""
    if value is None:
        return "null" if json_names else "None"
    if isinstance(value, bool):
        spelt = "true" if value else "false"
        return spelt if json_names else spelt.capitalize()
    if isinstance(value, int | float | str):
        # Never escaped: Python reads a JSON surrogate pair as two lone surrogates.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = (python_literal(item, json_names=json_names) for item in value)
        return "[" + ", ".join(items) + "]"
    pairs = (
        f"{python_literal(k)}: {python_literal(v, json_names=json_names)}" for k, v in value.items()
    )
    return "{" + ", ".join(pairs) + "}"


def strings(value: Json | dict[str, Json]) -> Iterator[str]:
    """Every string in a value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)


def value_problem(value: object) -> str | None:
    """Why ``value`` is not a JSON value a model could write, or None."""
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r} is not a JSON number"
    if isinstance(value, str):
        return _text_problem(value)
    if isinstance(value, list):
        return next((p for p in map(value_problem, value) if p), None)
    if isinstance(value, dict):
        for key, item in value.items():
            problem = (
                _text_problem(key) if isinstance(key, str) else f"the key {key!r} is no string"
            )
            problem = problem or value_problem(item)
            if problem:
                return problem
        return None
    return f"{type(value).__name__} is not a JSON value"


def _text_problem(text: str) -> str | None:
    # A lone surrogate has no UTF-8 spelling: no tokenizer can write it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{text!r} cannot be written as UTF-8"
    return None
