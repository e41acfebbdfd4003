""" "Did you mean …?" for a name that is not one: a profile typed with ``_`` for ``-``, a letter
off, or the name of the other kind of profile (a reference server profile given to
``--profile``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest"]


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known name nearest ``word``, if one is near enough to be what was meant."""
    by_key = {_key(name): name for name in known}
    found = difflib.get_close_matches(_key(word), list(by_key), n=1, cutoff=0.6)
    return by_key[found[0]] if found else None


def _key(name: str) -> str:
    """A name as compared: case and the ``_``/``-`` spelling do not count."""
    return name.lower().replace("_", "-")
