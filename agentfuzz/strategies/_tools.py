"""Declared tools (names in every convention, JSON-schema parameters) and their call arguments.

Tool names come in the conventions servers trip over: MCP's ``mcp__<server>__<tool>``
with hyphens, dotted ``a.b.c``, ``server/tool``, Kimi's flattened ``namespace__name``, and
Responses namespace tools; then, when the profile allows, names no convention allows
(``ODD_NAMES``) and schemas beyond a flat object (``_ODD_SETS``, an empty one). Plain
snake_case names and the simplest schema come first so examples shrink to them.

Generation is cheap on purpose: Hypothesis's cost (and the shrinker's) grows with the number
of choices an example takes, so a whole tool is one ``sampled_from`` over a catalogue built
once, and a call's arguments are rendered from the schema and one integer seed.
"""

from __future__ import annotations

import itertools
import json
import string
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Tool
from agentfuzz.request.ids import SEEDS, entropy
from agentfuzz.request.profiles import Profile

__all__ = ["another_tool", "arguments", "texts", "tool_names", "tools"]

_PLAIN = ("get_weather", "search", "read_file", "run_shell", "send_email", "get_time", "Bash")
_SERVERS = ("github", "file-system", "brave-search", "my-server")
_VERBS = ("get", "list", "create", "fetch", "delete")
_NAMESPACES = ("weather", "files", "crm")


def _namespaced(count: int = 6) -> tuple[str, ...]:
    """``count`` names in each convention, cycling servers, namespaces, verbs and words."""
    words = _PLAIN[:-1]
    names: list[str] = []
    for i in range(count):
        server, word = _SERVERS[i % len(_SERVERS)], words[i % len(words)]
        names.append(f"mcp__{server}__{word}")
    for i in range(count):
        ns, verb = _NAMESPACES[i % len(_NAMESPACES)], _VERBS[i % len(_VERBS)]
        names.append(f"{ns}.{verb}.{words[(i + 1) % len(words)]}")
    for i in range(count):
        names.append(f"{_SERVERS[(i + 1) % len(_SERVERS)]}/{words[(i + 2) % len(words)]}")
    for i in range(count):
        names.append(f"{_NAMESPACES[i % len(_NAMESPACES)]}__{words[(i + 3) % len(words)]}")
    return tuple(names)


_ALL = _PLAIN + _namespaced()

# Names no convention allows but a client may still send: quotes, a backslash, nothing,
# spaces, ':', unicode, a long name, words chat formats use as keywords, a special token.
ODD_NAMES = (
    'get"weather',
    "back\\slash",
    "",
    "get weather",
    "ns:tool",
    "météo_ville",
    "n" * 70,
    "functions",
    "tool_call",
    "<|im_end|>",
)

# Letters, digits and quiet punctuation only: no <, >, |, [ or ] so free text never holds
# markup by chance (the markup a history sends on purpose comes from its own templates).
# A handful of non-ASCII letters (accents, Cyrillic, Greek, CJK, Hangul, an emoji) stand for
# Unicode: a short alphabet keeps each string draw cheap.
_TEXT_CHARS = string.ascii_letters + string.digits + " .,?!'-" + "éüñßЖаοΩ中文한😀"


@lru_cache(maxsize=64)
def texts(max_size: int) -> SearchStrategy[str]:
    """Short printable free text without markup characters, one choice per string; shrinks
    toward the empty string.
    """
    return st.text(_TEXT_CHARS, max_size=max_size)


def derived_text(seed: int, salt: int, max_size: int) -> str:
    """Free text from a seed without a draw of its own: ``""`` for seed 0, else up to
    ``max_size`` characters of ``_TEXT_CHARS``; ``salt`` picks an independent window."""
    e = entropy(seed)
    at = (salt * 41) % (len(e) - 1)
    size = e[at] % (max_size + 1)
    return "".join(_TEXT_CHARS[e[(at + 1 + k) % len(e)] % len(_TEXT_CHARS)] for k in range(size))


_PLAIN_NAMES = st.sampled_from(_PLAIN)
_ALL_NAMES = st.sampled_from(_ALL)


def tool_names(profile: Profile) -> SearchStrategy[str]:
    """Tool names in the conventions the profile allows, one choice each; shrinks toward
    ``get_weather``.
    """
    return _ALL_NAMES if profile.namespaced_tools else _PLAIN_NAMES


_STRING: dict[str, Any] = {"type": "string"}
_TYPES: dict[str, dict[str, Any]] = {
    "city": _STRING,
    "query": _STRING,
    "path": _STRING,
    "count": {"type": "integer"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    "verbose": {"type": "boolean"},
    "limit": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string"}},
}

# (properties, required): simplest first; together they use every property type, each both
# required and optional, and one tool takes no parameters at all.
_PARAMETER_SETS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("city",), ()),
    (("city", "unit"), ("city",)),
    (("query", "limit"), ("query",)),
    (("path", "verbose"), ("path", "verbose")),
    (("count", "tags"), ("tags",)),
    ((), ()),
    (("limit", "unit", "tags"), ("unit", "limit")),
    (tuple(_TYPES), ("city", "count")),
)


# Schemas beyond one flat object of plain types, for the adversarial parameter sets.
_ODD_TYPES: dict[str, dict[str, Any]] = {
    'q"uote': _STRING,
    "back\\slash": _STRING,
    "ünï": {"type": "integer"},
    "mode": {"type": "string", "enum": ['a"b', "c\\d", "é"]},
    "fixed": {"const": "x"},
    "level": {"type": "integer", "default": 3},
    "filter": {
        "type": "object",
        "properties": {"field": _STRING, "values": {"type": "array", "items": {"type": "integer"}}},
        "required": ["field"],
    },
    "item": {"$ref": "#/$defs/item"},
    "choice": {"anyOf": [_STRING, {"type": "integer"}]},
    "either": {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
    "open": {"type": "object", "additionalProperties": True},
}
_DEFS = {"item": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
_ODD_SETS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (('q"uote', "back\\slash", "ünï"), ('q"uote',)),
    (("mode", "fixed", "level"), ("mode", "fixed")),
    (("filter",), ("filter",)),
    (("item",), ("item",)),
    (("choice", "either", "open"), ("choice",)),
)
# The parameter set that stands for "parameters": {} (an empty schema: anything goes).
_EMPTY = len(_PARAMETER_SETS) + len(_ODD_SETS)


def _schema(props: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    types = _TYPES | _ODD_TYPES
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: json.loads(json.dumps(types[name])) for name in props},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    if "item" in props:
        schema["$defs"] = json.loads(json.dumps(_DEFS))
    return schema


def _parameters(index: int) -> dict[str, Any]:
    if index == _EMPTY:
        return {}
    sets = _PARAMETER_SETS + _ODD_SETS
    return _schema(*sets[index])


def _make_tool(name: str, namespace: str | None, parameters: int) -> Tool:
    return Tool(
        name=name,
        namespace=namespace,
        description=f"Call {name} when the user asks for it.",
        parameters=_parameters(parameters),
    )


def another_tool(declared: tuple[Tool, ...]) -> Tool:
    """The first plain tool no declared tool is named as (flat), with the simplest schema."""
    taken = {t.flat_name for t in declared}
    return _make_tool(next(n for n in _PLAIN if n not in taken), None, 0)


@lru_cache(maxsize=32)
def _tool(
    namespaced_names: bool, namespaces: bool, odd_names: bool = False, odd_schemas: bool = False
) -> SearchStrategy[Tool]:
    """One tool as one choice: name major, then namespace, then parameter set."""
    names = (_ALL if namespaced_names else _PLAIN) + (ODD_NAMES if odd_names else ())
    spaces: tuple[str | None, ...] = (None, *_NAMESPACES) if namespaces else (None,)
    sets = len(_PARAMETER_SETS) + (len(_ODD_SETS) + 1 if odd_schemas else 0)
    catalogue = tuple(
        _make_tool(name, ns, p) for name, ns, p in itertools.product(names, spaces, range(sets))
    )
    # Indexes, not the tools: the strategy's repr then stays short (Hypothesis prints it).
    return st.integers(0, len(catalogue) - 1).map(catalogue.__getitem__)


def _flat_key(tool: Tool) -> str:
    return tool.flat_name


def _pair_key(tool: Tool) -> tuple[str | None, str]:
    return (tool.namespace, tool.name)


@lru_cache(maxsize=64)
def _tools(
    namespaced_names: bool,
    namespaces: bool,
    max_tools: int,
    odd: tuple[bool, bool] = (False, False),
    colliding: bool = False,
    least: int = 1,
) -> SearchStrategy[Any]:
    return st.lists(
        _tool(namespaced_names, namespaces, *odd),
        min_size=least,
        max_size=max_tools,
        unique_by=_pair_key if colliding else _flat_key,
    ).map(tuple)


def tools(profile: Profile, api: Api, least: int = 1) -> SearchStrategy[tuple[Tool, ...]]:
    """``least``..max_tools tools (``least`` capped at max_tools), one choice per tool; shrinks
    toward one plain ``get_weather`` whose only parameter, ``city``, is optional.

    Flat names are distinct, except on Responses with ``colliding_names``: there a plain tool
    may be named what a namespaced one flattens to, and only (namespace, name) pairs differ.
    """
    namespaces = api == "responses" and profile.namespace_tools
    odd = (profile.adversarial_names, profile.adversarial_schemas)
    colliding = namespaces and profile.colliding_names
    strategy: SearchStrategy[tuple[Tool, ...]] = _tools(
        profile.namespaced_tools,
        namespaces,
        profile.max_tools,
        odd,
        colliding,
        min(least, profile.max_tools),
    )
    return strategy


_STRINGS = ("", "Paris", "a b c", "ünïcødé", "中文", 'say "hi"', "back\\slash", "line\nbreak", "😀")
_INTEGERS = (0, 1, -1, 42, 1000, -1000, 7)
_NUMBERS = (0.0, 1.5, -2.25, 1e6, 3.14159, -1e6)


def _value(schema: dict[str, Any], byte: int, root: dict[str, Any] | None = None) -> Any:
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][byte % len(schema["enum"])]
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and root is not None:
        return _value(root.get("$defs", {}).get(ref[len("#/$defs/") :], {}), byte, root)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return _value(branches[byte % len(branches)], byte, root)
    kind = schema.get("type", "string")
    if kind == "null":
        return None
    if kind == "object":
        props = schema.get("properties", {})
        return {
            k: _value(v, byte + i, root)
            for i, (k, v) in enumerate(props.items())
            if k in schema.get("required", ())
        }
    if kind == "integer":
        return _INTEGERS[byte % len(_INTEGERS)]
    if kind == "number":
        return _NUMBERS[byte % len(_NUMBERS)]
    if kind == "boolean":
        return byte % 2 == 1
    if kind == "array":
        items = schema.get("items", _STRING)
        return [_value(items, byte + k, root) for k in range(byte % 4)]
    return _STRINGS[byte % len(_STRINGS)]


def _wrong_value(schema: dict[str, Any]) -> Any:
    # A string is wrong for every typed property except a free string, which gets a number.
    return 42 if schema.get("type") == "string" and "enum" not in schema else "not-a-number"


MALFORMED = ("{", "", "[1,", '{"city": }', "[]", "42", '"text"', "null")
VIOLATIONS = ("extra_property", "wrong_type", "missing_required")


def argument_kinds(profile: Profile) -> tuple[str, ...]:
    """How a call's arguments may be made: valid (required only, then all) first."""
    kinds = ["required", "full"]
    if profile.schema_violating_arguments:
        kinds += VIOLATIONS
    if profile.malformed_arguments:
        kinds.append("malformed")
    return tuple(kinds)


def render_arguments(tool: Tool, kind: str, seed: int) -> str:
    """The raw ``arguments`` of a call to ``tool``: made the ``kind`` way, values from ``seed``.

    Deterministic: seed 0 gives each property its simplest value ("", 0, false, the first enum
    member, []), so ``required`` with seed 0 is the smallest valid object.
    """
    e = entropy(seed)
    if kind == "malformed":
        return MALFORMED[seed % len(MALFORMED)]
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", ())
    obj = {
        name: _value(schema, e[-1 - i], tool.parameters)
        for i, (name, schema) in enumerate(properties.items())
        if kind != "required" or name in required
    }
    if kind == "missing_required" and required:
        del obj[required[seed % len(required)]]
    elif kind == "wrong_type" and any("type" in p for p in properties.values()):
        # Only a typed property can be given the wrong type (a const, a $ref, an anyOf…).
        names = sorted(n for n, p in properties.items() if "type" in p and p["type"] != "object")
        if names:
            name = names[seed % len(names)]
            obj[name] = _wrong_value(properties[name])
        else:
            obj["unexpected"] = True
    elif kind in VIOLATIONS:
        obj["unexpected"] = True
    return json.dumps(obj, ensure_ascii=False)


@lru_cache(maxsize=64)
def _kinds(kinds: tuple[str, ...]) -> SearchStrategy[str]:
    return st.sampled_from(kinds)


def arguments(tool: Tool, profile: Profile) -> SearchStrategy[str]:
    """A call's raw ``arguments`` string for ``tool``: valid JSON for its schema, or broken on
    purpose (malformed JSON, schema violations) when the profile allows. Two choices: how the
    arguments are made, and a seed for the values. Shrinks toward valid arguments with only the
    required properties, each at its simplest value.
    """
    return st.tuples(_kinds(argument_kinds(profile)), SEEDS).map(
        lambda pair: render_arguments(tool, *pair)
    )
