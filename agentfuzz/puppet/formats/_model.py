"""What a format writer works on: a script (the prose and the calls a model writes) and the
truth (what a faithful server must give back for it), and the ``Format`` that turns one into
the other.

A writer renders a script as pieces, each either prose (text outside any markup, which a parser
leaves as content) or markup. The written text is every piece joined; the truth's content is the
prose pieces joined. One rendering gives both, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

from agentfuzz.puppet.formats._values import Json, escaping, strings, value_problem

__all__ = [
    "ANYWHERE",
    "BEFORE",
    "JSON_NAME",
    "NO_TEXT",
    "PARSERS",
    "ArgumentStyle",
    "Call",
    "Format",
    "Json",
    "Piece",
    "Place",
    "Script",
    "Truth",
    "Unwritable",
    "lay_out",
    "markup",
    "prose",
]

# A piece of written output: its text, and whether it is markup (True) or prose (False).
Piece: TypeAlias = tuple[str, bool]

# The names OpenAI accepts for a function, with the dot of namespaced tools: what every format
# can carry unless it says otherwise.
DEFAULT_NAME = r"[A-Za-z0-9_.\-]+"
# Any name, the empty one and quotes too: what a format that writes the name as a JSON string
# can carry (control characters aside, which no tokenizer round-trips reliably).
JSON_NAME = r"[^\x00-\x1f]*"


class Unwritable(ValueError):
    """A script this format cannot express without ambiguity; ``str()`` says why."""


class Place(StrEnum):
    """Where prose may stand around the calls."""

    BEFORE = "before"
    BETWEEN = "between"
    AFTER = "after"


# Where prose may stand, as the writers' format entries say it.
NO_TEXT: frozenset[Place] = frozenset()
BEFORE = frozenset({Place.BEFORE})
ANYWHERE = frozenset(Place)

# Where vLLM 0.32 keeps its tool parsers: each format names its parser class below this.
PARSERS = "vllm.tool_parsers."


class ArgumentStyle(StrEnum):
    """How a format spells a call's arguments."""

    JSON = "json"  # one JSON object (or a JSON envelope holding it)
    PARAMS = "params"  # one tagged parameter per argument: a string verbatim, others as JSON
    PYTHON = "python"  # keyword arguments of a Python call, values as literals


@dataclass(frozen=True)
class Call:
    """One tool call as the model writes it. ``id`` is written only by formats that carry one."""

    name: str
    arguments: dict[str, Json] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Script:
    """What the model writes: prose before the calls, between each two, after the last.

    ``unclosed``: a near miss, the model ends its output where the format's last closing
    marker should stand (``Format.doubt`` says so: no truth is settled for it). ``escaped``:
    the JSON and Python strings it writes spell every non-ASCII character as a ``\\u`` escape
    (the same values: the truth does not change)."""

    calls: tuple[Call, ...]
    text_before: str = ""
    text_between: str = ""
    text_after: str = ""
    unclosed: bool = False
    escaped: bool = False


@dataclass(frozen=True)
class Truth:
    """What a faithful server returns for a script.

    ``content`` is the text the model wrote outside markup (the format's own newlines around
    the calls included), or None when that is only whitespace. Parsers trim those newlines
    differently (Hermes keeps the one before ``<tool_call>``, the engine parsers strip), so
    compare with ``same_content``. ``calls`` hold the name, the arguments as a JSON object and,
    where the format carries one, the id the server must keep; None where the server mints it.
    """

    content: str | None
    calls: tuple[Call, ...]

    def same_content(self, got: str | None) -> bool:
        return (got or "").strip() == (self.content or "").strip()


def prose(text: str) -> Piece:
    return (text, False)


def markup(text: str) -> Piece:
    return (text, True)


def lay_out(script: Script, calls: list[str], gap: str = "\n") -> list[Piece]:
    """The usual layout: prose, then each call's markup, ``gap`` on both sides of any prose.

    Several formats write a newline between two calls even with nothing between them; that
    newline is outside markup, so it is prose here, as a parser sees it."""
    pieces: list[Piece] = []
    if script.text_before:
        pieces.append(prose(script.text_before + gap))
    for index, text in enumerate(calls):
        if index:
            between = script.text_between
            pieces.append(prose(gap + between + gap if between else gap))
        pieces.append(markup(text))
    if script.text_after:
        pieces.append(prose(gap + script.text_after))
    return [piece for piece in pieces if piece[0]]


def _no_limits(script: Script) -> str | None:
    return None


@dataclass(frozen=True)
class Format:
    """One tool-call output format: how a model family writes calls, and the facts about it.

    ``name`` is vLLM's ``--tool-call-parser`` name; ``parser`` the vLLM class checked against.
    ``markers`` are the strings that delimit the format: never inside prose, and never inside a
    value written verbatim. ``special_tokens`` are the markers that are single tokens in the
    family's tokenizer, so a served tokenizer can add them. ``text`` says where prose may stand
    (where the parser is built to return it as content). ``needs_schema``: a non-string value
    comes back typed only when the request's tool declares that parameter's type.
    ``declared_only``: the parser drops a call to a tool the request did not declare.
    ``prompt_header``: for a format that carries ids, a regex whose group ``header`` is a past
    call's id as the family's chat template renders it in a prompt (what a model imitates).
    ``doubts``: why the truth of a script the format writes is not known (a near miss of its
    markup, which parsers read differently), or None.
    """

    name: str
    parser: str
    family: str
    arguments: ArgumentStyle
    markers: tuple[str, ...]
    special_tokens: tuple[str, ...]
    text: frozenset[Place]
    parallel: bool
    render: Callable[[Script], list[Piece]] = field(repr=False, compare=False)
    default_id: Callable[[Call, int], str] | None = field(default=None, repr=False, compare=False)
    prompt_header: str | None = None
    needs_schema: bool = False
    declared_only: bool = False
    name_pattern: str = DEFAULT_NAME
    key_pattern: str | None = None
    limits: Callable[[Script], str | None] = field(default=_no_limits, repr=False, compare=False)
    doubts: Callable[[Script], str | None] = field(default=_no_limits, repr=False, compare=False)

    @property
    def carries_ids(self) -> bool:
        """Whether the output carries each call's id (the server must return it as written)."""
        return self.default_id is not None

    def unwritable(self, script: Script) -> str | None:
        """Why this format cannot express the script, or None when it can."""
        return (
            _common_problem(self, script) or self.limits(script) or _unclosed_problem(self, script)
        )

    def doubt(self, script: Script) -> str | None:
        """Why a faithful server's answer to a script this format writes is not known (near-miss
        markup: a parser may read it as a call, drop it, or leave it as text), or None when
        ``expected`` is the answer."""
        return _common_doubt(script) or self.doubts(script)

    def write(self, script: Script) -> str:
        """The model's raw output text for the script."""
        self._check(script)
        return "".join(text for text, _ in self.pieces(script))

    def pieces(self, script: Script) -> list[Piece]:
        """The script rendered, the last closing marker left out where ``script.unclosed``."""
        with escaping(script.escaped):
            pieces = self.render(script)
        if not script.unclosed:
            return pieces
        text, _ = pieces[-1]
        closing = _closing(self, pieces) or ""
        return [*pieces[:-1], markup(text[: len(text) - len(closing)])]

    def expected(self, script: Script) -> Truth:
        """What a faithful parser returns for the script (for a doubted one, what the model
        meant: its truth is not settled)."""
        self._check(script)
        content = "".join(text for text, is_markup in self.pieces(script) if not is_markup)
        calls = tuple(
            Call(call.name, call.arguments, self.written_id(call, index))
            for index, call in enumerate(script.calls)
        )
        return Truth(content if content.strip() else None, calls)

    def written_id(self, call: Call, index: int) -> str | None:
        """The id a call carries in the output (its own, or the family's shape for the call's
        place), or None for a format that writes no ids."""
        if self.default_id is None:
            return None
        return call.id if call.id is not None else self.default_id(call, index)

    def _check(self, script: Script) -> None:
        problem = self.unwritable(script)
        if problem is not None:
            raise Unwritable(f"{self.name}: {problem}")


def _common_problem(fmt: Format, script: Script) -> str | None:
    """The limits every format shares: at least one call, parallel calls only where the format
    has them, prose only where it may stand and free of markers, names it can spell, values
    that are JSON."""
    calls = script.calls
    if not calls:
        return "a script holds one call at least"
    if len(calls) > 1 and not fmt.parallel:
        return "this format writes one call per turn"
    places = {
        Place.BEFORE: script.text_before,
        Place.BETWEEN: script.text_between,
        Place.AFTER: script.text_after,
    }
    for place, text in places.items():
        if text and place not in fmt.text:
            return f"no prose {place} the calls in this format"
        if text and _marker_in(fmt, text):
            return f"the prose {place} the calls holds the marker {_marker_in(fmt, text)!r}"
    if script.text_between and len(calls) < 2:
        return "prose between calls needs two calls"
    for call in calls:
        problem = _call_problem(fmt, call)
        if problem:
            return problem
    return None


def _unclosed_problem(fmt: Format, script: Script) -> str | None:
    """Where ``script.unclosed``: the output must end with a closing marker to leave out."""
    if not script.unclosed:
        return None
    if script.text_after:
        return "an unclosed call ends the output: no prose after it"
    if _closing(fmt, fmt.render(script)) is None:
        return "this format's output ends with no closing marker to leave out"
    return None


def _closing(fmt: Format, pieces: list[Piece]) -> str | None:
    """The marker that ends the output, where the output ends with markup and a marker."""
    text, is_markup = pieces[-1] if pieces else ("", False)
    ends = [marker for marker in fmt.markers if is_markup and marker and text.endswith(marker)]
    return max(ends, key=len) if ends else None


def _common_doubt(script: Script) -> str | None:
    """Near misses every format can write: a call with an empty name (a parser may drop it,
    return it, or fail the turn; no spec says which), and a last closing marker left out (a
    parser may read the call, drop it, or leave the markup as text)."""
    if any(call.name == "" for call in script.calls):
        return "a call with an empty name"
    if script.unclosed:
        return "the output ends where the last closing marker should stand"
    return None


def _call_problem(fmt: Format, call: Call) -> str | None:
    if not re.fullmatch(fmt.name_pattern, call.name):
        return f"the name {call.name!r} is not one this format spells ({fmt.name_pattern})"
    for value in call.arguments.values():
        problem = value_problem(value)
        if problem:
            return problem
    for key in call.arguments:
        if fmt.key_pattern and not re.fullmatch(fmt.key_pattern, key):
            return f"the argument name {key!r} is not one this format spells ({fmt.key_pattern})"
    # A value written verbatim ends at the first marker it holds; JSON and Python literals
    # keep a marker inside a string, as their grammar says.
    verbatim = fmt.arguments is ArgumentStyle.PARAMS
    for text in strings(call.arguments) if verbatim else []:
        if _marker_in(fmt, text):
            return f"the argument text {text!r} holds the marker {_marker_in(fmt, text)!r}"
    return None


def _marker_in(fmt: Format, text: str) -> str | None:
    return next((marker for marker in fmt.markers if marker in text), None)
