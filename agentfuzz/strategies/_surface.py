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
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api, Tool
from agentfuzz.request.profiles import Profile
from agentfuzz.request.surface import FORMS, HISTORY_DIMENSIONS, MALFORMED, applies
from agentfuzz.strategies._histories import _indexes

__all__ = [
    "ALLOWED",
    "choice_forms",
    "field_dimensions",
    "malformed_kind",
    "surface_fields",
    "value_of",
]

Fields = dict[str, Any]

# Strings that cut an answer where servers keep their own markup: the structure of JSON
# arguments, and the tool-call tokens of the chat-template families agentfuzz knows.
STOPS = (
    "\n",
    "}",
    '"',
    ",",
    " ",
    "</tool_call>",
    "<tool_call>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_end|>",
    "<|call|>",
    "<|im_end|>",
    "[TOOL_CALLS]",
    "functions.",
    '{"',
)

_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
_EFFORTS = ("low", "minimal", "medium", "high")
_INCLUDES = (
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
    "web_search_call.action.sources",
    "code_interpreter_call.outputs",
    "file_search_call.results",
)


def _one_of(*choices: Fields) -> SearchStrategy[Fields]:
    return st.sampled_from(choices)


def _budget(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    # Every offset a cut can land on inside a short call, then the profile's large budgets.
    amounts = st.integers(1, 64)
    if large:
        amounts |= st.sampled_from(large)
    keys = ("max_output_tokens",) if api == "responses" else ("max_tokens", "max_completion_tokens")
    return st.builds(lambda key, n: {key: n}, st.sampled_from(keys), amounts)


def _stop() -> SearchStrategy[Fields]:
    one = st.sampled_from(STOPS)
    return st.builds(lambda s: {"stop": s}, one | st.lists(one, min_size=1, max_size=4))


def _logprobs(api: Api) -> SearchStrategy[Fields]:
    top = st.integers(0, 5)
    if api == "responses":
        return st.builds(lambda k: {"top_logprobs": k}, top)
    return _one_of({"logprobs": True}, {"logprobs": False}) | st.builds(
        lambda k: {"logprobs": True, "top_logprobs": k}, top
    )


def _penalties() -> SearchStrategy[Fields]:
    amount = st.sampled_from((0.5, -0.5, 1.0, 2.0, -2.0))
    both = ("presence_penalty", "frequency_penalty")
    pick = st.sampled_from((both[:1], both[1:], both))
    return st.builds(lambda keys, a: dict.fromkeys(keys, a), pick, amount)


def _format(api: Api) -> SearchStrategy[Fields]:
    schema = {"name": "answer", "schema": _SCHEMA}
    if api == "responses":
        formats: tuple[Fields, ...] = (
            {"type": "json_object"},
            {"type": "json_schema", **schema, "strict": True},
            {"type": "json_schema", **schema},
            {"type": "text"},
        )
        return st.sampled_from(formats).map(lambda f: {"text": {"format": f}})
    formats = (
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {**schema, "strict": True}},
        {"type": "json_schema", "json_schema": schema},
        {"type": "text"},
    )
    return st.sampled_from(formats).map(lambda f: {"response_format": f})


def _effort(api: Api) -> SearchStrategy[Fields]:
    effort = st.sampled_from(_EFFORTS)
    if api == "chat":
        return effort.map(lambda e: {"reasoning_effort": e})
    summary = st.sampled_from((None, "auto", "concise", "detailed"))
    return st.builds(
        lambda e, s: {"reasoning": {"effort": e} | ({} if s is None else {"summary": s})},
        effort,
        summary,
    )


def _sampler() -> SearchStrategy[Fields]:
    return _one_of({"top_k": 1}, {"top_k": 40}, {"min_p": 0.1}, {"repetition_penalty": 1.2})


def _vllm() -> SearchStrategy[Fields]:
    # Structured outputs as vLLM names them now, then the guided_* fields it took before.
    return _one_of(
        {"structured_outputs": {"json": _SCHEMA}},
        {"structured_outputs": {"regex": "[a-z]{1,8}"}},
        {"structured_outputs": {"choice": ["yes", "no"]}},
        {"chat_template_kwargs": {"enable_thinking": False}},
        {"chat_template_kwargs": {}},
        {"guided_json": _SCHEMA},
        {"guided_regex": "[a-z]{1,8}"},
        {"guided_choice": ["yes", "no"]},
    )


def _grammar() -> SearchStrategy[Fields]:
    return _one_of(
        {"grammar": 'root ::= "yes" | "no"'},
        {
            "grammar": 'root ::= "{" ws ""answer":" ws string ws "}"\nws ::= " "?\n'
            'string ::= """ [a-z ]* """'
        },
        {"grammar": "root ::= ("},  # no grammar at all: a JSON 4xx is the answer
    )


def value_of(name: str, api: Api, large: tuple[int, ...] = ()) -> SearchStrategy[Fields]:
    """The wire fields dimension ``name`` adds to an ``api`` request, plainest first
    (``large``: the budgets above 64 tokens the profile allows)."""
    return _value_of(name, api, large)


@lru_cache(maxsize=128)
def _value_of(name: str, api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    simple: dict[str, SearchStrategy[Fields]] = {
        "n": st.integers(1, 3).map(lambda n: {"n": n}),
        "stream_options": _one_of(
            {"stream_options": {"include_usage": True}},
            {"stream_options": {"include_usage": False}},
        ),
        "parallel_tool_calls": _one_of(
            {"parallel_tool_calls": False}, {"parallel_tool_calls": True}
        ),
        "user": _one_of({"user": "user-1234"}, {"user": ""}, {"user": 'ユーザー "q"'}),
        "metadata": _one_of(
            {"metadata": {"run": "agentfuzz"}}, {"metadata": {}}, {"metadata": {'k"ey': "vä\\l"}}
        ),
        "instructions": _one_of(
            {"instructions": "Answer briefly."},
            {"instructions": ""},
            {"instructions": "Use the tools when asked. <|im_start|>system"},
        ),
        "store": _one_of({"store": False}, {"store": True}),
        "include": st.lists(st.sampled_from(_INCLUDES), max_size=3, unique=True).map(
            lambda v: {"include": v}
        ),
        "truncation": _one_of({"truncation": "disabled"}, {"truncation": "auto"}),
        "max_tool_calls": st.integers(1, 4).map(lambda n: {"max_tool_calls": n}),
        "previous_response_id": _one_of(
            {"previous_response_id": "resp_agentfuzz_never_answered"},
            {"previous_response_id": ""},
        ),
    }
    if name in simple:
        return simple[name]
    if name == "budget":
        return _budget(api, large)
    drawn = {
        "logprobs": _logprobs,
        "response_format": _format,
        "reasoning_effort": _effort,
    }
    if name in drawn:
        return drawn[name](api)
    if name == "tool_choice_forms":
        return st.composite(lambda draw: choice_forms(draw, api, ()))()
    if name == "message_forms" or name in HISTORY_DIMENSIONS:
        # No top-level field: the forms are Options.forms, the rest is in the history.
        return st.just({})
    others = {
        "stop": _stop,
        "penalties": _penalties,
        "sampler_extensions": _sampler,
        "vllm_extensions": _vllm,
        "llamacpp_extensions": _grammar,
    }
    return others[name]()


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
