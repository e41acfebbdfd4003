"""Each request-surface dimension's values: the strategy of the wire fields it adds to a
request, in the api's own wire form, plainest first (so a shrunk repro carries the plainest
value its failure needs). ``request.surface`` gives each ``Dimension`` its own here, so a new
dimension cannot be named without saying what it sends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.history import Api

__all__ = ["STOPS", "Fields", "Values", "with_the_request"]

Fields = dict[str, Any]
# A dimension's values: (the api, the profile's budgets above 64 tokens) -> its fields.
Values = Callable[[Api, tuple[int, ...]], SearchStrategy[Fields]]

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


def budget(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    # Every offset a cut can land on inside a short call, then the profile's large budgets.
    amounts = st.integers(1, 64)
    if large:
        amounts |= st.sampled_from(large)
    keys = ("max_output_tokens",) if api == "responses" else ("max_tokens", "max_completion_tokens")
    return st.builds(lambda key, n: {key: n}, st.sampled_from(keys), amounts)


def stop(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    one = st.sampled_from(STOPS)
    return st.builds(lambda s: {"stop": s}, one | st.lists(one, min_size=1, max_size=4))


def logprobs(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    top = st.integers(0, 5)
    if api == "responses":
        return st.builds(lambda k: {"top_logprobs": k}, top)
    return _one_of({"logprobs": True}, {"logprobs": False}) | st.builds(
        lambda k: {"logprobs": True, "top_logprobs": k}, top
    )


def penalties(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    amount = st.sampled_from((0.5, -0.5, 1.0, 2.0, -2.0))
    both = ("presence_penalty", "frequency_penalty")
    pick = st.sampled_from((both[:1], both[1:], both))
    return st.builds(lambda keys, a: dict.fromkeys(keys, a), pick, amount)


def response_format(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
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


def reasoning_effort(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    effort = st.sampled_from(_EFFORTS)
    if api == "chat":
        return effort.map(lambda e: {"reasoning_effort": e})
    summary = st.sampled_from((None, "auto", "concise", "detailed"))
    return st.builds(
        lambda e, s: {"reasoning": {"effort": e} | ({} if s is None else {"summary": s})},
        effort,
        summary,
    )


def sampler_extensions(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of({"top_k": 1}, {"top_k": 40}, {"min_p": 0.1}, {"repetition_penalty": 1.2})


def vllm_extensions(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
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


def llamacpp_extensions(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of(
        {"grammar": 'root ::= "yes" | "no"'},
        {
            "grammar": 'root ::= "{" ws ""answer":" ws string ws "}"\nws ::= " "?\n'
            'string ::= """ [a-z ]* """'
        },
        {"grammar": "root ::= ("},  # no grammar at all: a JSON 4xx is the answer
    )


def n(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return st.integers(1, 3).map(lambda k: {"n": k})


def stream_options(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of(
        {"stream_options": {"include_usage": True}}, {"stream_options": {"include_usage": False}}
    )


def parallel_tool_calls(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of({"parallel_tool_calls": False}, {"parallel_tool_calls": True})


def user(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of({"user": "user-1234"}, {"user": ""}, {"user": 'ユーザー "q"'})


def metadata(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of(
        {"metadata": {"run": "agentfuzz"}}, {"metadata": {}}, {"metadata": {'k"ey': "vä\\l"}}
    )


def instructions(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of(
        {"instructions": "Answer briefly."},
        {"instructions": ""},
        {"instructions": "Use the tools when asked. <|im_start|>system"},
    )


def store(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of({"store": False}, {"store": True})


def include(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return st.lists(st.sampled_from(_INCLUDES), max_size=3, unique=True).map(
        lambda v: {"include": v}
    )


def truncation(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of({"truncation": "disabled"}, {"truncation": "auto"})


def max_tool_calls(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return st.integers(1, 4).map(lambda k: {"max_tool_calls": k})


def previous_response_id(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    return _one_of(
        {"previous_response_id": "resp_agentfuzz_never_answered"}, {"previous_response_id": ""}
    )


def with_the_request(api: Api, large: tuple[int, ...]) -> SearchStrategy[Fields]:
    """No top-level field of its own: the dimension is drawn with the request itself (the
    message forms, the ``tool_choice`` forms over its tools, the history's parts, a broken
    body)."""
    return st.just({})
