"""The secret values a run knows, masked out of every file agentfuzz writes.

The API key and the ``--header`` values go with every request and are never stored: the
recordings drop such headers by name (``transport._tee.SECRET_HEADERS``). A server may still
echo them: an error page that quotes the request's headers puts them in its answer, and the
answer goes into bundles, reports and cassettes. So whatever sends the values remembers them
here (``remember``), and ``model.files.write_atomically``, the one way agentfuzz writes a file,
replaces each with ``MASK`` wherever it appears, in every spelling a writer may give it (as it
is, JSON-escaped, HTML-escaped). A writer added later cannot forget to.

A value shorter than ``SHORTEST`` characters is not masked: replacing a word like ``true``
everywhere would break the files, and a secret that short protects nothing. Nor are the values
of headers that say how a body is spelled (``Content-Type``, ``Accept``): never secrets, and
words every answer holds.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "SHORTEST", "forget_all", "mask", "masked", "remember"]

# What a secret becomes: one word that stays a plain string in JSON, YAML, Markdown and shell.
MASK = "MASKED"
SHORTEST = 8
_PLAIN_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "content-type", "user-agent"}
)

_lock = threading.Lock()
_known: set[str] = set()
# Every spelling of every value known, longest first (one secret may hold another).
_spellings: tuple[str, ...] = ()


def remember(key: str | None = None, headers: Mapping[str, str] | None = None) -> None:
    """Mask, from now on in this process, the API key ``key`` and the values of ``headers``."""
    global _spellings
    values = [key] if key else []
    values += [v for k, v in (headers or {}).items() if k.lower() not in _PLAIN_HEADERS]
    fresh = {v for v in values if len(v.strip()) >= SHORTEST} - _known
    if not fresh:
        return
    with _lock:
        _known.update(fresh)
        forms = {form for value in _known for form in _forms(value)}
        _spellings = tuple(sorted(forms, key=len, reverse=True))


def forget_all() -> None:
    """Mask nothing any more (for tests, which run many campaigns in one process)."""
    global _spellings
    with _lock:
        _known.clear()
        _spellings = ()


def _forms(value: str) -> set[str]:
    """``value`` as a file may spell it: as it is, inside a JSON string (escaped, with or
    without its non-ASCII escaped), and in HTML text."""
    quoted = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return {value, html.escape(value), html.escape(value, quote=False)} | quoted


def mask(text: str) -> str:
    """``text`` with every known secret replaced by ``MASK``."""
    for secret in _spellings:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def masked(data: Any) -> Any:
    """``data`` (dicts, lists, tuples, strings, bytes, anything else kept as it is) with every
    known secret masked in each string and bytes it holds, keys included: for a writer that
    serialises a structure its own way (a YAML emitter folds long lines, which a mask of the
    text would then miss)."""
    if not _spellings:
        return data
    if isinstance(data, str):
        return mask(data)
    if isinstance(data, bytes):
        for secret in _spellings:
            data = data.replace(secret.encode(), MASK.encode())
        return data
    if isinstance(data, dict):
        return {masked(k): masked(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(masked(item) for item in data)
    return data
