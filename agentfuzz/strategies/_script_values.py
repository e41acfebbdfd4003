"""Argument values and argument names for puppet scripts (``strategies._scripts``).

Each catalog below lists what a model may write into a call, plainest first. A format keeps
only the entries it can write alone (``Format.unwritable`` asked once per entry and cached), so
a drawn value is writable by construction: a marker stays out of a verbatim parameter, a
container out of Step-3's scalars, a keyword out of a Python call. Only joins of entries (two
string pieces that together read as JSON, say) are left to the script's last filter.
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.puppet.formats import Call, Format, Json, Script

__all__ = [
    "LONG_STRING",
    "MAX_DEPTH",
    "Kind",
    "argument_names",
    "kind_values",
    "parameter_kinds",
    "writable_values",
]

# Bounds a profile may later set: the longest string piece, how deep values nest, how many
# items a nested array or object holds.
LONG_STRING = 4096
MAX_DEPTH = 3
MAX_ITEMS = 3

# String pieces, joined up to four at a time. Plain text first (the shrinker's target), then
# what escaping meets (quotes, backslashes, an escape's spelling), newlines (U+2028 is one to
# ``str.splitlines``), unicode (an accent precomposed and combining, CJK, an emoji and a ZWJ
# sequence), JSON's punctuation and words (a regex parser may stop at a ``]``, a schema-typing
# one may read "42" as a number), then the format's markers and special tokens, then a long text.
_PIECES = (
    "Paris",
    "a b",
    '"',
    "'",
    "\\",
    '\\"',
    "\\n",
    "\n",
    "\r\n",
    "\t",
    "\u2028",
    "é",
    "e\u0301",
    "中文",
    "😀",
    "👩\u200d💻",
    "{",
    "}",
    "[",
    "]",
    '", "',
    ": ",
    "<",
    ">",
    "&amp;",
    "42",
    "true",
    "null",
)
_LONG = ("lorem ipsum " * (LONG_STRING // 12 + 1))[:LONG_STRING]

# Argument names: plain ones first, then what a key pattern or a Python call may refuse.
_NAMES = (
    "city",
    "query",
    "count",
    "path",
    "x",
    "a_b",
    "CamelCase",
    "with-dash",
    "dotted.key",
    "class",
    "ünï",
    "中文",
    "with space",
    'q"uote',
    "back\\slash",
    "",
)

# Any name every format spells: the call that carries a probed value.
_PROBE = "f"


class Kind(IntEnum):
    """A value's JSON type, plainest first: a tool declares each parameter with one."""

    STRING = 0
    INTEGER = 1
    NUMBER = 2
    BOOLEAN = 3
    NULL = 4
    ARRAY = 5
    OBJECT = 6


# One value of each kind, to ask a format whether it writes that kind at all.
_SAMPLES: dict[Kind, Json] = {
    Kind.STRING: "",
    Kind.INTEGER: 0,
    Kind.NUMBER: 1.5,
    Kind.BOOLEAN: True,
    Kind.NULL: None,
    Kind.ARRAY: [],
    Kind.OBJECT: {},
}


def _writes(fmt: Format, arguments: dict[str, Json]) -> bool:
    return fmt.unwritable(Script((Call(_PROBE, arguments),))) is None


def writable_values(fmt: Format, candidates: tuple[Json, ...]) -> tuple[Json, ...]:
    """The candidates ``fmt`` writes as an argument value, in their order."""
    return tuple(v for v in candidates if _writes(fmt, {"city": v}))


@lru_cache(maxsize=128)
def argument_names(fmt: Format, nested: bool = False) -> SearchStrategy[str]:
    """Argument names ``fmt`` can spell (in a nested object when ``nested``), one choice;
    shrinks toward ``city``. The format's first marker is a candidate too: JSON keeps it
    inside a key."""
    candidates = _NAMES + fmt.markers[:1]
    if nested:
        kept = [k for k in candidates if _writes(fmt, {"city": {k: 0}})]
    else:
        kept = [k for k in candidates if _writes(fmt, {k: 0})]
    return st.sampled_from(kept)


@lru_cache(maxsize=128)
def _strings(fmt: Format) -> SearchStrategy[str]:
    """Up to four pieces joined; shrinks toward the empty string."""
    special = tuple(t for t in fmt.special_tokens if t not in fmt.markers)
    candidates = (*_PIECES, *fmt.markers, *special, _LONG)
    pieces = [p for p in writable_values(fmt, candidates) if isinstance(p, str) and p]
    return st.lists(st.sampled_from(pieces), max_size=4).map("".join)


def _kinds(fmt: Format) -> tuple[Kind, ...]:
    return tuple(kind for kind, sample in _SAMPLES.items() if writable_values(fmt, (sample,)))


@lru_cache(maxsize=128)
def parameter_kinds(fmt: Format) -> SearchStrategy[Kind]:
    """The kind of a new parameter, among those ``fmt`` writes; shrinks toward a string."""
    return st.sampled_from(_kinds(fmt))


@lru_cache(maxsize=512)
def kind_values(fmt: Format, depth: int = MAX_DEPTH) -> dict[Kind, SearchStrategy[Json]]:
    """A strategy per kind ``fmt`` writes. Containers hold values ``depth - 1`` deep; at depth
    0 there are none. Each shrinks toward its plainest value: "", 0, 0.0, false, null, an
    empty array or object."""
    nested = _any_value(fmt, depth - 1) if depth > 0 else None
    strategies: dict[Kind, SearchStrategy[Json]] = {}
    for kind in _kinds(fmt):
        if kind is Kind.STRING:
            strategies[kind] = _strings(fmt)
        elif kind is Kind.INTEGER:
            strategies[kind] = st.integers(-(2**63), 2**63 - 1)
        elif kind is Kind.NUMBER:
            strategies[kind] = st.floats(allow_nan=False, allow_infinity=False)
        elif kind is Kind.BOOLEAN:
            strategies[kind] = st.booleans()
        elif kind is Kind.NULL:
            strategies[kind] = st.none()
        elif nested is not None and kind is Kind.ARRAY:
            strategies[kind] = st.lists(nested, max_size=MAX_ITEMS)
        elif nested is not None and kind is Kind.OBJECT:
            keys = argument_names(fmt, nested=True)
            strategies[kind] = st.dictionaries(keys, nested, max_size=MAX_ITEMS)
    return strategies


@lru_cache(maxsize=512)
def _any_value(fmt: Format, depth: int) -> SearchStrategy[Json]:
    """A value of any kind ``fmt`` writes, one choice for the kind; shrinks toward ""."""
    return st.one_of(*kind_values(fmt, depth).values())
