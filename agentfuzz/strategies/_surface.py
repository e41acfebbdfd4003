"""The request surface: the optional top-level fields of a request, drawn by swarm testing.

Each example first draws which of the profile's dimensions it may use at all (one in four is
allowed), then, for each allowed one, whether to use it (one in two) and its value: a
dimension is left out seven times in eight, but an example that allows few uses those
densely. So rare combinations come up, and every draw shrinks toward the dimension left out: a
shrunk repro carries only the fields its failure needs. Values are in the api's own wire form
(``agentfuzz.request.surface`` names the dimensions); each shrinks toward its plainest value.
"""

from __future__ import annotations

import copy
from functools import lru_cache

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Tool
from agentfuzz.request._values import Fields
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import DIMENSIONS, FORMS, HISTORY_DIMENSIONS, MALFORMED, applies
from agentfuzz.strategies._histories import _indexes

__all__ = [
    "ALLOWED",
    "allowed_dimensions",
    "choice_forms",
    "field_dimensions",
    "malformed_kind",
    "surface_fields",
    "value_of",
]


@lru_cache(maxsize=128)
def value_of(name: str, api: Api, large: tuple[int, ...] = ()) -> SearchStrategy[Fields]:
    """The wire fields dimension ``name`` adds to an ``api`` request, plainest first
    (``large``: the budgets above 64 tokens the profile allows): its own ``values``."""
    return DIMENSIONS[name].values(api, large)


# A function no request ever declares: forcing it is a request any server must refuse.
UNDECLARED = "agentfuzz_undeclared_tool"

# The tool_choice forms, plainest first; each names one declared tool (the drawn one) or none.
_FORMS: dict[Api, tuple[str, ...]] = {
    "chat": (
        "allowed_required",
        "allowed_auto",
        "allowed_all",
        "undeclared",
        "nameless",
        "no_tools",
        "custom",
    ),
    "responses": (
        "allowed_required",
        "allowed_auto",
        "allowed_all",
        "native",
        "undeclared",
        "nameless",
        "no_tools",
        "hosted",
        "mcp",
    ),
}


def _form(api: Api, kind: str, tool: Tool, tools: tuple[Tool, ...]) -> Fields:
    """The ``tool_choice`` (and maybe ``tools``) fields of one form, in ``api``'s wire shape."""
    if kind.startswith("allowed_"):
        chosen = tools if kind == "allowed_all" else (tool,)
        mode = "auto" if kind == "allowed_auto" else "required"
        if api == "chat":
            refs = [{"type": "function", "function": {"name": t.flat_name}} for t in chosen]
            allowed = {"mode": mode, "tools": refs}
            return {"tool_choice": {"type": "allowed_tools", "allowed_tools": allowed}}
        flat = [{"type": "function", "name": t.flat_name} for t in chosen]
        return {"tool_choice": {"type": "allowed_tools", "mode": mode, "tools": flat}}
    if kind == "no_tools":
        return {"tools": [], "tool_choice": "required"}
    if kind == "hosted":
        return {"tool_choice": {"type": "web_search_preview"}}
    if kind == "mcp":
        return {"tool_choice": {"type": "mcp", "server_label": "agentfuzz"}}
    if kind == "custom":
        return {"tool_choice": {"type": "custom", "custom": {"name": tool.flat_name}}}
    if kind == "nameless":
        return {"tool_choice": {"type": "function"}}
    # undeclared, or native: the function's own name inside its namespace, as declared there.
    name = UNDECLARED if kind == "undeclared" else tool.name
    if api == "chat":
        return {"tool_choice": {"type": "function", "function": {"name": name}}}
    return {"tool_choice": {"type": "function", "name": name}}


def choice_forms(draw: st.DrawFn, api: Api, tools: tuple[Tool, ...]) -> Fields:
    """One ``tool_choice`` form over the declared ``tools`` (two choices: the form, the tool);
    shrinks toward ``allowed_tools`` required of the first tool."""
    kinds = _FORMS[api]
    kind = kinds[draw(_indexes(len(kinds)))]
    tool = tools[draw(_indexes(len(tools)))] if tools else Tool(name="get_weather")
    return _form(api, kind, tool, tools or (tool,))


# One dimension in four is allowed in an example: most requests stay plain or nearly.
ALLOWED = st.integers(0, 3)


@lru_cache(maxsize=4)
def _forms(api: Api) -> SearchStrategy[tuple[str, ...]]:
    pick = st.lists(st.sampled_from(FORMS[api]), min_size=1, max_size=3, unique=True)
    # In the catalogue's order, so two draws of the same forms are one request.
    return pick.map(lambda forms: tuple(f for f in FORMS[api] if f in forms))


def allowed_dimensions(draw: st.DrawFn, profile: Profile) -> tuple[str, ...]:
    """The field dimensions a session may use in all its turns, drawn once (one in four)."""
    return tuple(n for n in field_dimensions(profile) if draw(ALLOWED) == 3)


def field_dimensions(profile: Profile) -> tuple[str, ...]:
    """The profile's dimensions that are drawn as fields or message forms of one request (the
    rest change the history, or break the body)."""
    skipped = ("malformed", *HISTORY_DIMENSIONS)  # drawn elsewhere
    return tuple(n for n in profile.surface if n not in skipped)


def surface_fields(
    draw: st.DrawFn,
    profile: Profile,
    api: Api,
    stream: bool,
    tools: tuple[Tool, ...] = (),
    forms: list[str] | None = None,
    allowed: tuple[str, ...] | None = None,
) -> Fields:
    """Draw the surface of one request: which of the profile's dimensions it may use, then
    their fields (``tools``: the declared ones, which a ``tool_choice`` form names; the
    message forms drawn go into ``forms`` when given). ``allowed``: the dimensions already
    allowed (a session draws them once for all its turns), instead of drawing them here.

    Shrinks toward no field at all: each allowed flag toward False, each use toward left out.
    """
    names = tuple(n for n in field_dimensions(profile) if applies(n, api, stream))
    if forms is None:
        names = tuple(n for n in names if n != "message_forms")
    large = tuple(n for n in profile.max_tokens if n > 64)
    if allowed is None:
        allowed = tuple(n for n in names if draw(ALLOWED) == 3)
    else:
        allowed = tuple(n for n in names if n in allowed)
    fields: Fields = {}
    for name in allowed:
        if not draw(st.booleans()):
            continue
        if name == "message_forms":
            assert forms is not None
            forms.extend(draw(_forms(api)))
        elif name == "tool_choice_forms":
            fields |= choice_forms(draw, api, tools)
        else:
            # A copy: the catalogue's values are shared, a body must never alias them.
            fields |= copy.deepcopy(draw(value_of(name, api, large)))
    return fields


# One request in sixteen goes out broken, when the profile allows it.
_BROKEN = st.integers(0, 15)
_KINDS = st.sampled_from(MALFORMED)


def malformed_kind(draw: st.DrawFn, profile: Profile) -> str | None:
    """How this request's body goes out broken, if at all; shrinks toward a whole body, then
    toward the plainest way of breaking it."""
    if "malformed" not in profile.surface or draw(_BROKEN) != 15:
        return None
    return draw(_KINDS)
