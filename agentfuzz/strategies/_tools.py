"""Declared tools (names in every convention, JSON-schema parameters) and their call arguments.

Tool names come in the conventions servers trip over: MCP's ``mcp__<server>__<tool>``
with hyphens, dotted ``a.b.c``, ``server/tool``, Kimi's flattened ``namespace__name``, and
Responses namespace tools. Plain snake_case names come first so examples shrink to them.
"""

from __future__ import annotations

import json
import string
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.history import Api, Tool
from agentfuzz.profiles import Profile

__all__ = ["arguments", "texts", "tool_names", "tools"]

_PLAIN = ("get_weather", "search", "read_file", "run_shell", "send_email", "get_time", "Bash")
_SERVERS = ("github", "file-system", "brave-search", "my-server")
_VERBS = ("get", "list", "create", "fetch", "delete")
_NAMESPACES = ("weather", "files", "crm")

# Letters, digits and quiet punctuation only: no <, >, |, [ or ] so generated text can never
# contain special-token markup that the leaked_markup oracle would then blame on the server.
_TEXT_ALPHABET = st.one_of(
    st.sampled_from(string.ascii_letters + string.digits + " .,?!'-"),
    st.characters(categories=["L", "Nd"], exclude_characters="<>|[]"),
)


@lru_cache(maxsize=64)
def texts(max_size: int) -> SearchStrategy[str]:
    """Short printable free text without markup characters; shrinks toward the empty string."""
    return st.text(_TEXT_ALPHABET, max_size=max_size)


def _namespaced_names() -> SearchStrategy[str]:
    words = st.sampled_from(_PLAIN[:-1])
    servers = st.sampled_from(_SERVERS)
    namespaces = st.sampled_from(_NAMESPACES)
    return st.one_of(
        st.builds(lambda s, t: f"mcp__{s}__{t}", servers, words),
        st.builds(lambda ns, v, t: f"{ns}.{v}.{t}", namespaces, st.sampled_from(_VERBS), words),
        st.builds(lambda s, t: f"{s}/{t}", servers, words),
        st.builds(lambda ns, t: f"{ns}__{t}", namespaces, words),
    )


_PLAIN_NAMES = st.sampled_from(_PLAIN)
_ALL_NAMES = st.one_of(_PLAIN_NAMES, _namespaced_names())


def tool_names(profile: Profile) -> SearchStrategy[str]:
    """Tool names in the conventions the profile allows; shrinks toward ``get_weather``."""
    return _ALL_NAMES if profile.namespaced_tools else _PLAIN_NAMES


_PROPERTY_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "enum": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    "array": {"type": "array", "items": {"type": "string"}},
}
_PROPERTY_NAMES = ("city", "query", "path", "count", "unit", "verbose", "limit", "tags")


_PROPERTIES = st.lists(
    st.tuples(st.sampled_from(_PROPERTY_NAMES), st.sampled_from(list(_PROPERTY_TYPES))),
    min_size=1,
    max_size=4,
    unique_by=lambda p: p[0],
)


@st.composite
def _parameters(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(_PROPERTIES)
    required = [name for name, _ in props if draw(st.booleans())]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: dict(_PROPERTY_TYPES[kind]) for name, kind in props},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


_PARAMETERS = _parameters()
_NAMESPACE = st.sampled_from(_NAMESPACES)


@st.composite
def _tool(draw: st.DrawFn, names: SearchStrategy[str], namespaced: bool) -> Tool:
    name = draw(names)
    namespace = draw(_NAMESPACE) if namespaced and draw(st.booleans()) else None
    return Tool(
        name=name,
        namespace=namespace,
        description=f"Call {name} when the user asks for it.",
        parameters=draw(_PARAMETERS),
    )


def tools(profile: Profile, api: Api) -> SearchStrategy[tuple[Tool, ...]]:
    """1..max_tools tools with distinct flat names; shrinks toward one plain ``get_weather``."""
    return st.lists(
        _tool(tool_names(profile), api == "responses" and profile.namespace_tools),
        min_size=1,
        max_size=profile.max_tools,
        unique_by=lambda t: t.flat_name,
    ).map(tuple)


def _value(schema: dict[str, Any], max_size: int) -> SearchStrategy[Any]:
    if "enum" in schema:
        return _enum_value(tuple(schema["enum"]))
    return _typed_value(schema["type"], max_size)


@lru_cache(maxsize=64)
def _enum_value(choices: tuple[str, ...]) -> SearchStrategy[Any]:
    return st.sampled_from(choices)


@lru_cache(maxsize=64)
def _typed_value(kind: str, max_size: int) -> SearchStrategy[Any]:
    text = texts(max_size)
    if kind == "integer":
        return st.integers(-1000, 1000)
    if kind == "number":
        return st.floats(-1e6, 1e6, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(text, max_size=3)
    return text


def _wrong_value(schema: dict[str, Any]) -> Any:
    # A string is wrong for every typed property except a free string, which gets a number.
    return 42 if schema["type"] == "string" and "enum" not in schema else "not-a-number"


@st.composite
def _valid_object(draw: st.DrawFn, tool: Tool, max_size: int) -> dict[str, Any]:
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", ()))
    return {
        name: draw(_value(schema, max_size))
        for name, schema in properties.items()
        if name in required or draw(st.booleans())
    }


_MALFORMED = st.sampled_from(("{", "", "[1,", '{"city": }', "[]", "42", '"text"', "null"))
_VIOLATIONS = st.sampled_from(("wrong_type", "missing_required", "extra_property"))


@st.composite
def _arguments(draw: st.DrawFn, tool: Tool, profile: Profile) -> str:
    kinds = ["valid"]
    if profile.schema_violating_arguments:
        kinds.append("violating")
    if profile.malformed_arguments:
        kinds.append("malformed")
    kind = draw(st.sampled_from(kinds))
    if kind == "malformed":
        return draw(_MALFORMED)
    obj = draw(_valid_object(tool, profile.max_text_size))
    if kind == "violating":
        properties: dict[str, Any] = tool.parameters.get("properties", {})
        required = [n for n in tool.parameters.get("required", ()) if n in obj]
        how = draw(_VIOLATIONS)
        if how == "missing_required" and required:
            del obj[draw(st.sampled_from(required))]
        elif how == "wrong_type" and properties:
            name = draw(st.sampled_from(sorted(properties)))
            obj[name] = _wrong_value(properties[name])
        else:
            obj["unexpected"] = True
    return json.dumps(obj, ensure_ascii=False)


def arguments(tool: Tool, profile: Profile) -> SearchStrategy[str]:
    """A call's raw ``arguments`` string for ``tool``: valid JSON for its schema, or broken on
    purpose (malformed JSON, schema violations) when the profile allows; shrinks toward valid
    arguments with only the required properties.
    """
    return _arguments(tool, profile)
