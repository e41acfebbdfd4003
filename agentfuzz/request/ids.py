"""Tool-call ID shapes seen in the wild: a Hypothesis strategy and a recognizer for each family.

Histories mix these shapes because a chat template or parser that only expects its own
shape is exactly where the ID bugs in DESIGN.md live. Some shapes embed the tool name and
a call index counted over the whole history (Kimi's ``functions.{name}:{idx}``), so every
strategy takes both, even when its family ignores them.

Ties in ``recognize`` (identical shapes from different sources) go to the family listed
first in ``FAMILIES + ADVERSARIAL``:

- ``""`` is ``llamacpp_old`` (also ``gemini_none`` and the adversarial ``empty``);
- ``"0"`` is ``sglang_old`` (also ``lmstudio``'s constant id);
- a ``{name}:{idx}`` id whose name starts with ``call_`` is ``near_native``, never ``kimi_bare``.
"""

from __future__ import annotations

import hashlib
import re
import string
import uuid
from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

__all__ = [
    "ADVERSARIAL",
    "FAMILIES",
    "REPEATING",
    "SEEDS",
    "SHAPES",
    "TIES",
    "entropy",
    "format_id",
    "is_kimi_native",
    "recognize",
]

FAMILIES: tuple[str, ...] = (
    "openai_chat",
    "openai_responses",
    "vllm_chat",
    "vllm_responses",
    "vllm_responses_stream",
    "sglang",
    "llamacpp",
    "ollama",
    "mistral",
    "anthropic",
    "bedrock",
    "deepseek",
    "kimi_native",
    "kimi_sanitized",
    "kimi_bare",
    "kimi_squashed",
    "kimi_callnum",
    "sglang_old",
    "llamacpp_old",
    "gemini_none",
    "gemini_thought",
    "lmstudio",
    "agents_sdk",
)
"""Shapes real servers and clients produce, plainest first (``sampled_from`` shrinks to it)."""

SHAPES: tuple[tuple[str, ...], ...] = (
    # An opaque random id behind a prefix: what most servers mint.
    (
        "openai_chat",
        "openai_responses",
        "vllm_chat",
        "vllm_responses",
        "vllm_responses_stream",
        "sglang",
        "llamacpp",
        "ollama",
        "mistral",
        "anthropic",
        "bedrock",
        "deepseek",
        "gemini_thought",
    ),
    # Kimi's own shape: ``functions.``, the tool's name, ``:`` and a call index.
    ("kimi_native",),
    # Its look-alike: the name and ``:`` and an index, no ``functions.`` (what a server that
    # takes any ``.+:\d+`` for its own shape reads wrong: seed 000's first fix).
    ("kimi_bare",),
    # A call index joined otherwise: by ``_``, by nothing, or a number alone.
    ("kimi_sanitized", "kimi_squashed", "kimi_callnum", "sglang_old"),
    # The same id on every call.
    ("llamacpp_old", "gemini_none", "lmstudio", "agents_sdk"),
)
"""``FAMILIES`` by the structure a template or parser keys on. A history draws a shape first,
then a family in it, so the few shapes that carry an index are not outnumbered by the many
random ones (each shape is drawn as often as any other); Kimi's native shape and its look-alike
are two, since a server takes the one for its own and must not take the other so."""

ADVERSARIAL: tuple[str, ...] = (
    "empty",
    "whitespace",
    "unicode",
    "over_40",
    "over_64",
    "near_native",
)
"""Shapes no well-behaved source produces; a profile turns them on explicitly."""

TIES: dict[str, frozenset[str]] = {
    "gemini_none": frozenset({"llamacpp_old"}),
    "empty": frozenset({"llamacpp_old"}),
    "lmstudio": frozenset({"sglang_old"}),
}
"""Families whose ids ``recognize`` may attribute to another family with the identical shape."""

REPEATING: frozenset[str] = frozenset(
    {"llamacpp_old", "gemini_none", "lmstudio", "agents_sdk", "empty", "whitespace"}
)
"""Families whose ids repeat by nature (a constant, or a tiny alphabet), duplicates or not."""

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_LOWER_ALNUM = string.ascii_lowercase + string.digits
_B64URL = _ALNUM + "-_"
_B64 = _ALNUM + "+/"
_WHITESPACE = " \t\n\r\u00a0\u2003\u3000"
# Characters that break naive id handling: accents, homoglyphs (Cyrillic а, Greek ο),
# CJK, emoji, combining marks, zero-width and bidi controls, a fullwidth letter.
_UNICODE = "éüñßЖаοΩ中文한😀🔧\u0301\u200b\u200d\u202e\ufeffＡ"
_NEAR_CONSTANTS = ("call_x:0", "functions.x", "call_abc123:0")

_ENTROPY_SIZE = 200

SEEDS: SearchStrategy[int] = st.integers(0, 2**32 - 1)
"""One integer choice per id: every family formats its id from the bytes this seed expands to
(``entropy``), so a history can switch family without shifting the choices after it, and the
shrinker can then move any id to the first family. Seed 0 is all zero bytes."""


def entropy(seed: int) -> bytes:
    """The 200 bytes a seed stands for: zeros for 0 (the shrink target), else a SHAKE-128 stream."""
    if seed == 0:
        return bytes(_ENTROPY_SIZE)
    return hashlib.shake_128(seed.to_bytes(8, "little")).digest(_ENTROPY_SIZE)


def _pick(alphabet: str, entropy: bytes, start: int, count: int) -> str:
    return "".join(alphabet[b % len(alphabet)] for b in entropy[start : start + count])


def _span(entropy: bytes, at: int, low: int, high: int) -> int:
    return low + entropy[at] % (high - low + 1)


def _not_all_digits(s: str) -> str:
    return "a" + s[1:] if s.isdigit() else s


def _sanitized(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _squashed(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", name)


# OpenAI Responses call ids go up to 64 chars; lengths that another family owns (24: openai
# chat, 22: sglang, 16/32: vllm hex) are left out so a drawn id is recognized as this family.
_RESPONSES_LENGTHS = [n for n in range(25, 60) if n != 32]


def _lmstudio(e: bytes) -> str:
    if e[0] % 2 == 0:
        return "0"
    return "123456789"[e[1] % 9] + _pick(string.digits, e, 3, _span(e, 2, 8, 9))


def _gemini_thought(e: bytes) -> str:
    head = _pick(_ALNUM, e, 3, _span(e, 0, 8, 24))
    signature = _pick(_B64, e, 27, _span(e, 1, 16, 80))
    return f"call_{head}__thought__{signature}" + ("", "=", "==")[e[2] % 3]


def _near_native(name: str, e: bytes) -> str:
    variant = e[0] % 6
    if variant < len(_NEAR_CONSTANTS):
        return _NEAR_CONSTANTS[variant]
    if variant == 3:
        return f"call_{_pick(_ALNUM, e, 2, _span(e, 1, 1, 12))}:{e[14] % 100}"
    return f"functions.{name}" + ("" if variant == 4 else ":")


_Format = Callable[[str, int, bytes], str]

_FORMATS: dict[str, _Format] = {
    "openai_chat": lambda name, idx, e: "call_" + _pick(_ALNUM, e, 1, 24),
    "openai_responses": lambda name, idx, e: (
        "call_" + _pick(_ALNUM, e, 1, _RESPONSES_LENGTHS[e[0] % len(_RESPONSES_LENGTHS)])
    ),
    "vllm_chat": lambda name, idx, e: "chatcmpl-tool-" + _pick(_HEX, e, 1, 32),
    "vllm_responses": lambda name, idx, e: ("call_", "fc_")[e[0] % 2] + _pick(_HEX, e, 1, 32),
    "vllm_responses_stream": lambda name, idx, e: "call_" + _pick(_HEX, e, 1, 16),
    "sglang": lambda name, idx, e: "call_" + _pick(_B64URL, e, 1, 22),
    "llamacpp": lambda name, idx, e: _not_all_digits(_pick(_ALNUM, e, 1, 32)),
    "ollama": lambda name, idx, e: "call_" + _pick(_LOWER_ALNUM, e, 1, 8),
    "mistral": lambda name, idx, e: _not_all_digits(_pick(_ALNUM, e, 1, 9)),
    "anthropic": lambda name, idx, e: "toolu_01" + _pick(_ALNUM, e, 1, 22),
    "bedrock": lambda name, idx, e: "tooluse_" + _pick(_B64URL, e, 1, 22),
    "deepseek": lambda name, idx, e: f"call_0_{uuid.UUID(bytes=e[:16], version=4)}",
    "kimi_native": lambda name, idx, e: f"functions.{name}:{idx}",
    "kimi_sanitized": lambda name, idx, e: f"functions_{_sanitized(name)}_{idx}",
    "kimi_bare": lambda name, idx, e: f"{name}:{idx}",
    "kimi_squashed": lambda name, idx, e: f"functions{_squashed(name)}{idx}",
    "kimi_callnum": lambda name, idx, e: f"call{idx:05d}",
    "sglang_old": lambda name, idx, e: str(idx),
    "llamacpp_old": lambda name, idx, e: "",
    "gemini_none": lambda name, idx, e: "",
    "gemini_thought": lambda name, idx, e: _gemini_thought(e),
    "lmstudio": lambda name, idx, e: _lmstudio(e),
    "agents_sdk": lambda name, idx, e: "__fake_id__",
    "empty": lambda name, idx, e: "",
    "whitespace": lambda name, idx, e: _pick(_WHITESPACE, e, 1, _span(e, 0, 1, 8)),
    "unicode": lambda name, idx, e: "call_" + _pick(_UNICODE, e, 1, _span(e, 0, 1, 12)),
    "over_40": lambda name, idx, e: "id_" + _pick(_ALNUM, e, 1, _span(e, 0, 38, 61)),
    "over_64": lambda name, idx, e: (
        "id_" + _pick(_ALNUM, e, 2, 62 + int.from_bytes(e[:2], "big") % 136)
    ),
    "near_native": lambda name, idx, e: _near_native(name, e),
}


def format_id(family: str, name: str, index: int, entropy: bytes) -> str:
    """The id ``family`` gives call number ``index`` (to tool ``name``) for these random bytes."""
    return _FORMATS[family](name, index, entropy)


_KIMI_NATIVE = re.compile(r"functions\.[^\s:]+:\d+")
_NEAR_CALL = re.compile(r"call_[^\s:]*:\d+")
_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"

# Most specific first: a shape is tried only when every narrower shape before it failed.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        ("openai_chat", r"call_[A-Za-z0-9]{24}"),
        ("vllm_chat", r"chatcmpl-tool-[0-9a-f]{32}"),
        ("vllm_responses", r"(?:call|fc)_[0-9a-f]{32}"),
        ("vllm_responses_stream", r"call_[0-9a-f]{16}"),
        ("ollama", r"call_[a-z0-9]{8}"),
        ("sglang", r"call_[A-Za-z0-9_-]{22}"),
        ("deepseek", rf"call_\d+_{_UUID}"),
        ("gemini_thought", r"call_[A-Za-z0-9_-]+__thought__[A-Za-z0-9+/=_-]+"),
        ("anthropic", r"toolu_01[A-Za-z0-9]{22}"),
        ("bedrock", r"tooluse_[A-Za-z0-9_-]+"),
        ("kimi_sanitized", r"functions_[A-Za-z0-9_-]+_\d+"),
        ("kimi_squashed", r"functions[A-Za-z0-9]*\d"),
        ("kimi_callnum", r"call\d+"),
        ("sglang_old", r"0|[1-9]\d{0,4}"),
        ("lmstudio", r"\d+"),
        ("mistral", r"[A-Za-z0-9]{9}"),
        ("llamacpp", r"[A-Za-z0-9]{32}"),
        ("openai_responses", r"call_[A-Za-z0-9]{1,59}"),
        ("kimi_bare", r"[^\s:]+:\d+"),
    )
)


def is_kimi_native(id: str) -> bool:
    """Whether ``id`` is Kimi's own ``functions.{name}:{idx}``; ``call_abc123:0`` is not."""
    return _KIMI_NATIVE.fullmatch(id) is not None


def recognize(id: str) -> str | None:
    """The family an id most specifically belongs to, or None for a shape seen nowhere.

    Ties between identical shapes follow the module docstring. Ids that fit no known
    shape fall back on their length: ``over_64`` past 64 chars, ``over_40`` past 40.
    """
    if id == "":
        return "llamacpp_old"
    if id.isspace():
        return "whitespace"
    if id == "__fake_id__":
        return "agents_sdk"
    if not id.isascii():
        return "unicode"
    if is_kimi_native(id):
        return "kimi_native"
    if id.startswith("functions.") or _NEAR_CALL.fullmatch(id):
        return "near_native"
    for family, pattern in _SHAPES:
        if pattern.fullmatch(id):
            return family
    if len(id) > 64:
        return "over_64"
    if len(id) > 40:
        return "over_40"
    return None
