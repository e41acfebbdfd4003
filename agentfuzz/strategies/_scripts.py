"""Puppet scripts as a Hypothesis strategy: what the puppet model is made to write, in one
format of the catalog (``agentfuzz.puppet.formats``), and the tools a request declares for it.

Every dimension is one choice whose plainest value is "none": no prose, one call, no
arguments, the first declared name, the family's own id. So a failing script shrinks to the
plainest repro a format has, ``Script((Call(names[0]),))``: one call with no arguments, which
every format writes and every parser reads. A failure that needs an argument shrinks to
``{"city": ""}``, one empty string, the plainest value of the plainest kind.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache, partial

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Tool
from agentfuzz.puppet.formats import Call, Format, Json, Place, Script, Unwritable
from agentfuzz.strategies._script_values import (
    Kind,
    argument_names,
    kind_values,
    parameter_kinds,
)

__all__ = ["MAX_ARGUMENTS", "MAX_CALLS", "scripts", "tools_for"]

# Bounds a profile may later set: calls in one script (where the format has several) and
# arguments in one call.
MAX_CALLS = 4
MAX_ARGUMENTS = 4
# The highest call index a carried id may name: ids in the family's shape at another place,
# as a model imitating its history writes them (seed 000's index gap).
MAX_ID_INDEX = 99

# Tool names beyond the declared ones a script may call (where asked), if the format spells
# them: namespaced (a dot), quoted and empty (formats that write the name as a JSON string),
# then plain names no request declares.
_UNDECLARED = (
    "functions.get_weather",
    "ns.tool",
    '"get_weather"',
    "",
    "undeclared_tool",
    "get_weather_v2",
    "tool",
    "Bash",
)

# Prose pieces, joined up to three at a time; each format keeps those free of its markers.
_PROSE = (
    "Sure.",
    " ",
    "Let me check that for you.",
    "\n",
    "é中文😀e\u0301",
    '"quoted" and \\backslashed\\',
    "a < b & c > d",
    '{"name": "get_weather"}',
    "```",
)


def _writable(fmt: Format, script: Script) -> bool:
    return fmt.unwritable(script) is None


def _fit(fmt: Format, script: Script) -> bool:
    """Writable, and no two calls carrying one id: a model that wrote that would be the one
    at fault, not the server (``consistency`` holds the server to distinct ids)."""
    ids = [fmt.written_id(call, index) for index, call in enumerate(script.calls)]
    known = [i for i in ids if i is not None]
    return _writable(fmt, script) and len(set(known)) == len(known)


def _spells(fmt: Format, name: str) -> bool:
    return _writable(fmt, Script((Call(name),)))


@lru_cache(maxsize=128)
def _prose(fmt: Format) -> SearchStrategy[str]:
    """Prose free of the format's markers; shrinks toward the empty string."""
    kept = [p for p in _PROSE if not any(marker in p for marker in fmt.markers)]
    return st.lists(st.sampled_from(kept), max_size=3).map("".join)


@lru_cache(maxsize=128)
def _callees(fmt: Format, names: tuple[str, ...], undeclared: bool) -> SearchStrategy[str]:
    """The declared names, then (when asked) undeclared ones; shrinks toward ``names[0]``."""
    extra = [n for n in _UNDECLARED if n not in names and _spells(fmt, n)] if undeclared else []
    return st.sampled_from((*names, *extra))


def _near_misses(name: str, index: int) -> SearchStrategy[str]:
    """Ids a model copies from a history that a client or server reshaped: the header without
    its ``:N``, the sanitised form (seed 001) and an OpenAI-style ``call_<hex>`` (seed 000)."""
    return st.sampled_from(
        (f"functions.{name}", f"functions_{name}_{index}", f"{name}_{index}")
    ) | st.integers(0, 2**64 - 1).map("call_{:016x}".format)


def _arguments(
    draw: st.DrawFn, fmt: Format, name: str, kinds: dict[tuple[str, str], Kind]
) -> dict[str, Json]:
    """Up to ``MAX_ARGUMENTS`` arguments. A parameter of a tool keeps the kind it was first
    given in the script, so one declaration types every call to that tool (``tools_for``)."""
    keys = draw(st.lists(argument_names(fmt), max_size=MAX_ARGUMENTS, unique=True))
    arguments: dict[str, Json] = {}
    for key in keys:
        kind = kinds.get((name, key))
        if kind is None:
            kind = kinds[(name, key)] = draw(parameter_kinds(fmt))
        arguments[key] = draw(kind_values(fmt)[kind])
    return arguments


def _call(
    draw: st.DrawFn,
    fmt: Format,
    callees: SearchStrategy[str],
    kinds: dict[tuple[str, str], Kind],
    place: int,
) -> Call:
    name = draw(callees)
    arguments = _arguments(draw, fmt, name, kinds)
    if fmt.default_id is None:
        return Call(name, arguments)
    # The family's own id (plainest), one at another index, or a near miss of its shape.
    shape = draw(st.integers(0, 2))
    if shape == 1:
        index = draw(st.integers(0, MAX_ID_INDEX))
        return Call(name, arguments, fmt.default_id(Call(name), index))
    if shape == 2:
        return Call(name, arguments, draw(_near_misses(name, place)))
    return Call(name, arguments)


@st.composite
def _script(draw: st.DrawFn, fmt: Format, names: tuple[str, ...], undeclared: bool) -> Script:
    callees = _callees(fmt, names, undeclared)
    kinds: dict[tuple[str, str], Kind] = {}
    calls = [_call(draw, fmt, callees, kinds, 0)]
    # One more call while a boolean says so: False, the plainest, ends the list.
    while fmt.parallel and len(calls) < MAX_CALLS and draw(st.booleans()):
        calls.append(_call(draw, fmt, callees, kinds, len(calls)))
    prose = _prose(fmt)
    before = draw(prose) if Place.BEFORE in fmt.text else ""
    between = draw(prose) if Place.BETWEEN in fmt.text and len(calls) > 1 else ""
    after = draw(prose) if Place.AFTER in fmt.text else ""
    script = Script(tuple(calls), before, between, after)
    # The near miss of leaving the last closing marker out, where the output ends with one:
    # about one script in five, as no puppet oracle judges it (``Format.doubt``).
    unclosed = replace(script, unclosed=True)
    if not after and _writable(fmt, unclosed) and draw(st.integers(0, 4)) == 4:
        script = unclosed
    # Non-ASCII text spelt with \u escapes, where the format writes JSON strings and the
    # script holds some: the same values, so the same truth (about one such script in four).
    escaped = replace(script, escaped=True)
    escapable = _writable(fmt, escaped) and fmt.write(escaped) != fmt.write(script)
    return escaped if escapable and draw(st.integers(0, 3)) == 3 else script


def scripts(
    fmt: Format, names: tuple[str, ...], *, undeclared: bool = False
) -> SearchStrategy[Script]:
    """Scripts ``fmt`` can write, calling the declared tools ``names`` (flat names, plainest
    first). Raises ``ValueError`` when ``names`` is empty or ``fmt`` cannot spell one of them.

    Dimensions, each one choice whose plainest value is "none": prose before, between and
    after the calls, only where ``fmt.text`` has it and never holding a marker; one call, or
    up to ``MAX_CALLS`` where ``fmt.parallel``; up to ``MAX_ARGUMENTS`` argument names (in
    ``fmt.key_pattern``); values of every JSON kind the format writes, strings holding its
    markers (where its grammar keeps them: not in a verbatim parameter), its special tokens,
    quotes, backslashes, unicode, newlines and a long text, numbers of any size and sign,
    nested arrays and objects; for a format that carries ids, an id in the family's shape at
    another index, or a near miss of that shape (``_near_misses``, which ``fmt.doubt`` names);
    the output ended where its last closing marker should stand (``Script.unclosed``, a near
    miss too, where the format ends with one and no prose follows); non-ASCII text spelt with
    ``\\u`` escapes (``Script.escaped``), where the format writes it in JSON strings.
    ``undeclared`` adds calls to other names (``_UNDECLARED``: namespaced, quoted, empty,
    plain, each where ``fmt.name_pattern`` spells it): off by default, since what the case
    declares for them is its own choice (``strategies._puppet``).

    Writable by construction, with a last filter for joins the catalog cannot rule out and
    for two calls carrying one id. Shrinks toward one call of ``names[0]`` with no arguments
    and no prose; a failure that needs an argument toward ``{"city": ""}``.
    """
    if not names:
        raise ValueError("scripts: no tool names to call")
    refused = [name for name in names if not _spells(fmt, name)]
    if refused:
        raise ValueError(f"scripts: {fmt.name} cannot write a call to {refused[0]!r}")
    return _scripts(fmt, names, undeclared)


@lru_cache(maxsize=128)
def _scripts(fmt: Format, names: tuple[str, ...], undeclared: bool) -> SearchStrategy[Script]:
    return _script(fmt, names, undeclared).filter(partial(_fit, fmt))


def json_type(value: Json) -> str:
    """A value's type as a JSON schema names it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _parameters(script: Script, name: str) -> dict[str, object]:
    """Each argument the tool ``name`` is called with, typed by its values: one type, or the
    list of them where a hand-written script gives one parameter several."""
    types: dict[str, list[str]] = {}
    for call in script.calls:
        if call.name != name:
            continue
        for key, value in call.arguments.items():
            seen = types.setdefault(key, [])
            if json_type(value) not in seen:
                seen.append(json_type(value))
    properties = {
        key: {"type": kinds[0] if len(kinds) == 1 else sorted(kinds)}
        for key, kinds in types.items()
    }
    return {"type": "object", "properties": properties}


def tools_for(
    fmt: Format, script: Script, declared: tuple[str, ...] | None = None
) -> tuple[Tool, ...]:
    """The tools a request declares for ``script``: one per called name, in the order first
    called, each parameter typed by its value, so a ``needs_schema`` format's parser gives a
    number, a boolean or an object back typed. ``declared`` names the tools to declare instead
    (a call to any other stays undeclared; one never called takes no parameters). Raises
    ``Unwritable`` for a script ``fmt`` cannot write."""
    problem = fmt.unwritable(script)
    if problem is not None:
        raise Unwritable(f"{fmt.name}: {problem}")
    called = tuple(dict.fromkeys(call.name for call in script.calls))
    return tuple(
        Tool(
            name=name,
            description=f"Call {name} when the user asks for it.",
            parameters=_parameters(script, name),
        )
        for name in (called if declared is None else declared)
    )
