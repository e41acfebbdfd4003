"""The request surface's catalogue: every optional part of a request as a ``Dimension``, with
the apis that carry it, its wire fields, one line on what it is, and its own values (the
strategy of what it sends, ``_values``). ``request.surface`` names them and reads cases by them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from agentfuzz.model.history import Api
from agentfuzz.request import _values
from agentfuzz.request._values import Values

__all__ = ["CATALOGUE", "Dimension"]


@dataclass(frozen=True)
class Dimension:
    """One optional part of a request: its name, the apis that carry it and its wire fields.

    ``extension``: a server's own field (vLLM's, llama.cpp's), off unless a profile names it.
    ``streaming``: only meaningful on a streamed request (servers refuse it otherwise).
    """

    name: str
    apis: tuple[Api, ...]
    fields: tuple[str, ...]
    about: str
    extension: bool = False
    streaming: bool = False
    # Its own values: the strategy of the wire fields it adds, plainest first (``_values``).
    values: Values = dataclasses.field(default=_values.with_the_request, kw_only=True)


_BOTH: tuple[Api, ...] = ("chat", "responses")
CATALOGUE = (
    Dimension(
        "budget",
        _BOTH,
        ("max_tokens", "max_completion_tokens", "max_output_tokens"),
        "a token budget, any from 1 to 64 (a cut at every offset of a call) or a large one",
        values=_values.budget,
    ),
    Dimension(
        "stop",
        ("chat",),
        ("stop",),
        "stop strings, one or a list: newline, braces, quotes, markup",
        values=_values.stop,
    ),
    Dimension("n", ("chat",), ("n",), "more than one choice", values=_values.n),
    Dimension(
        "logprobs",
        _BOTH,
        ("logprobs", "top_logprobs"),
        "token log-probabilities",
        values=_values.logprobs,
    ),
    Dimension(
        "penalties",
        ("chat",),
        ("presence_penalty", "frequency_penalty"),
        "repetition penalties",
        values=_values.penalties,
    ),
    Dimension(
        "stream_options",
        ("chat",),
        ("stream_options",),
        "include_usage, on or off",
        streaming=True,
        values=_values.stream_options,
    ),
    Dimension(
        "parallel_tool_calls",
        _BOTH,
        ("parallel_tool_calls",),
        "true or false",
        values=_values.parallel_tool_calls,
    ),
    Dimension(
        "response_format",
        _BOTH,
        ("response_format", "text"),
        "json_object or json_schema beside tools (chat response_format, Responses text.format)",
        values=_values.response_format,
    ),
    Dimension("user", _BOTH, ("user",), "an end-user id", values=_values.user),
    Dimension(
        "metadata", _BOTH, ("metadata",), "string key-value metadata", values=_values.metadata
    ),
    Dimension(
        "reasoning_effort",
        _BOTH,
        ("reasoning_effort", "reasoning"),
        "reasoning effort, summary",
        values=_values.reasoning_effort,
    ),
    Dimension(
        "instructions",
        ("responses",),
        ("instructions",),
        "a system prompt by field",
        values=_values.instructions,
    ),
    Dimension(
        "store", ("responses",), ("store",), "store the response, or not", values=_values.store
    ),
    Dimension(
        "include", ("responses",), ("include",), "extra output to include", values=_values.include
    ),
    Dimension(
        "truncation", ("responses",), ("truncation",), "auto or disabled", values=_values.truncation
    ),
    Dimension(
        "max_tool_calls",
        ("responses",),
        ("max_tool_calls",),
        "a cap on tool calls",
        values=_values.max_tool_calls,
    ),
    Dimension(
        "previous_response_id",
        ("responses",),
        ("previous_response_id",),
        "an id no answer ever had (a JSON 4xx is the right answer); in a session, its own last"
        " answer or another session's",
        values=_values.previous_response_id,
    ),
    Dimension(
        "tool_choice_forms",
        _BOTH,
        ("tool_choice", "tools"),
        "allowed_tools, an undeclared or nameless function, a hosted tool, the namespace-native"
        " name, a choice with no tools",
    ),
    Dimension(
        "message_forms",
        _BOTH,
        (),
        "messages spelled otherwise: text as parts, an empty or absent assistant content, a"
        " name; an image part, a part of an unknown type, a part with no type",
    ),
    Dimension(
        "strict_tools",
        _BOTH,
        (),
        "a function declared strict: true, its schema valid for strict mode or not",
    ),
    Dimension(
        "custom_tools",
        _BOTH,
        (),
        "a custom tool (free text, a Lark or regex grammar), and a past call to it",
    ),
    Dimension(
        "hosted_tools",
        ("responses",),
        (),
        "a hosted tool (web or file search, code interpreter, image generation, MCP, computer"
        " use, local shell), and a past call to it",
    ),
    Dimension(
        "legacy_functions",
        ("chat",),
        ("functions", "function_call"),
        "the declared tools again as legacy functions, a legacy function_call, and maybe a past"
        " legacy call and its role: function result",
    ),
    Dimension(
        "long_text",
        _BOTH,
        (),
        "the last user message padded to about the profile's context_chars: half, just under,"
        " at, just over or twice the limit",
    ),
    Dimension(
        "malformed",
        _BOTH,
        (),
        "a body that is not a request: bad JSON, wrong types (a JSON 4xx is the right answer)",
    ),
    Dimension(
        "sampler_extensions",
        _BOTH,
        ("top_k", "min_p", "repetition_penalty"),
        "vLLM's and llama.cpp's extra sampling fields",
        extension=True,
        values=_values.sampler_extensions,
    ),
    Dimension(
        "vllm_extensions",
        _BOTH,
        (
            "structured_outputs",
            "guided_json",
            "guided_regex",
            "guided_choice",
            "chat_template_kwargs",
        ),
        "vLLM's structured outputs (and the guided_* fields before them), chat_template_kwargs",
        extension=True,
        values=_values.vllm_extensions,
    ),
    Dimension(
        "llamacpp_extensions",
        ("chat",),
        ("grammar",),
        "llama.cpp's GBNF grammar",
        extension=True,
        values=_values.llamacpp_extensions,
    ),
)
