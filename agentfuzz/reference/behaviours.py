"""Behaviour profiles: which stage of the pipeline carries which seed bug (or its fix).

A profile is a set of switches over one real pipeline (template, scripted model, parser,
assembly), so a ``*-fixed`` profile is clean because its pipeline is fixed, not because it
returns canned answers.
"""

from __future__ import annotations

from .switches import Behaviour

__all__ = ["BEHAVIOURS", "Behaviour", "UnknownBehaviour", "get_behaviour"]

_BEHAVIOURS = (
    Behaviour(
        name="fixed",
        summary="Every fix on: Kimi template, strict id renumbering, compact indexes, stable ids.",
    ),
    Behaviour(
        name="vllm-kimi-k2",
        seed="000",
        summary="Ids rendered verbatim; the model imitates call_<hex>; the parser drops the call.",
        rewrite="none",
        stream_call_id="call_hex16",
        keep_slot_index=True,
    ),
    Behaviour(
        name="vllm-kimi-k2-fixed",
        seed="000",
        summary="Seed 000's fix: one counter renumbers foreign history ids to functions.NAME:IDX.",
        stream_call_id="call_hex16",
        keep_slot_index=True,
    ),
    Behaviour(
        name="vllm-kimi-k2-loose-fix",
        seed="000",
        summary="The fix's first draft: any .+:\\d+ is native, so call_abc123:0 still breaks.",
        rewrite="loose",
        stream_call_id="call_hex16",
        keep_slot_index=True,
    ),
    Behaviour(
        name="exo-kimi-k2",
        seed="001",
        summary="Parser rejects functions_NAME_N: SSE error frame with the markup, or a plain 500.",
        rewrite="none",
        grammar="exo",
        miss="error",
    ),
    Behaviour(
        name="exo-kimi-k2-fixed",
        seed="001",
        summary="Accepts (functions[._])?NAME[:_]N, normalises history ids, a miss becomes text.",
        grammar="exo-fixed",
        miss="content",
    ),
    Behaviour(
        name="vllm-responses-regen",
        seed="002",
        summary="response.completed re-mints item ids and call_ids (call_ -> chatcmpl-tool-).",
        stream_call_id="call_hex16",
        regen_completed=True,
    ),
    Behaviour(
        name="vllm-gpt-oss",
        seed="003",
        summary="Harmony path: streamed reasoning ids msg_ but completed rs_; call ids re-minted.",
        template="harmony",
        regen_completed=True,
        stream_reasoning_prefix="msg_",
    ),
    Behaviour(
        name="vllm-gpt-oss-fixed",
        seed="003",
        summary="Seed 003's fix: the final response reuses the streamed ids, reasoning ids rs_.",
        template="harmony",
    ),
    Behaviour(
        name="no-tools-leak",
        seed="004",
        summary="A request that omits tools gets the model's raw tool-call markup as content.",
        leak_without_tools=True,
    ),
    Behaviour(
        name="stop-cuts-markup",
        summary="Planted: stop strings match inside tool-call markup; the open section is a 500.",
        stop_in_raw=True,
    ),
    Behaviour(
        name="bad-json-500",
        summary="Planted: a body that is not JSON crashes the handler, a plain-text 500.",
        crash_on_bad_json=True,
    ),
    Behaviour(
        name="quote-names-cut",
        summary="Planted: a tool call's name is cut at its first quote character.",
        cut_quoted_names=True,
    ),
    Behaviour(
        name="null-calls-500",
        summary="Planted: the chat template loops over tool_calls unguarded: an assistant "
        "message with tool_calls null crashes the handler, a 500.",
        history_fault="null_calls",
    ),
    Behaviour(
        name="parts-500",
        summary="Planted: message content given as a list of parts crashes the handler, a 500.",
        crash_on_parts=True,
    ),
    Behaviour(
        name="allowed-ignored",
        summary="Planted: tool_choice allowed_tools keeps its mode but offers every declared tool.",
        ignore_allowed=True,
    ),
    Behaviour(
        name="instructions-500",
        summary="Planted: a Responses request with instructions crashes the handler, a 500.",
        crash_on_field="instructions",
    ),
    Behaviour(
        name="two-500s",
        summary="Planted: two faults behind one bare 500: content as parts, and instructions.",
        crash_on_parts=True,
        crash_on_field="instructions",
    ),
    Behaviour(
        name="min-p-500",
        summary="Planted: vLLM's and llama.cpp's min_p sampling field crashes the handler, a 500.",
        crash_on_field="min_p",
    ),
    Behaviour(
        name="long-session-500",
        summary="Planted: 6 or more calls under the server's own ids, in order, crash it: a 500.",
        crash_on_long_session=6,
    ),
    Behaviour(
        name="stored-500",
        summary="Planted: previous_response_id naming one of the server's own answers is a 500.",
        crash_on_stored=True,
    ),
    Behaviour(
        name="stored",
        summary="fixed, with Responses answers stored: previous_response_id goes on from one.",
        store="faithful",
    ),
    Behaviour(
        name="stored-forgets",
        summary="Planted: a stored answer keeps the input that asked for it, not its own output.",
        store="forget_output",
    ),
    Behaviour(
        name="n-ignored",
        summary="Planted: chat n is accepted and ignored, one choice whatever was asked.",
        ignored_fields=("n",),
    ),
    Behaviour(
        name="stop-ignored",
        summary="Planted: stop strings are accepted and ignored: the text runs past them.",
        ignored_fields=("stop",),
    ),
    Behaviour(
        name="budget-ignored",
        summary="Planted: token budgets are accepted and ignored, however small.",
        ignored_fields=("max_tokens", "max_completion_tokens", "max_output_tokens"),
    ),
    Behaviour(
        name="usage-chunk-ignored",
        summary="Planted: stream_options is accepted and ignored: no usage chunk.",
        ignored_fields=("stream_options",),
    ),
    Behaviour(
        name="parallel-ignored",
        summary="Planted: parallel_tool_calls false is ignored: two tools asked, two calls.",
        ignored_fields=("parallel_tool_calls",),
    ),
    Behaviour(
        name="logprobs-ignored",
        summary="Planted: chat logprobs are accepted and ignored: null log-probabilities.",
        ignored_fields=("logprobs", "top_logprobs"),
    ),
    Behaviour(
        name="json-format-ignored",
        summary="Planted: a JSON response format is accepted and ignored: plain text.",
        ignored_fields=("response_format", "text"),
    ),
    Behaviour(
        name="chat-no-done",
        summary="Planted: a chat stream ends without data: [DONE].",
        frame_fault="no_done",
    ),
    Behaviour(
        name="responses-done",
        summary="Planted: a Responses stream ends with a chat-style data: [DONE].",
        frame_fault="done_in_responses",
    ),
    Behaviour(
        name="unnamed-events",
        summary="Planted: Responses stream events come without their event: line.",
        frame_fault="event_missing",
    ),
    Behaviour(
        name="sequence-gaps",
        summary="Planted: Responses sequence numbers are counted by two.",
        frame_fault="sequence",
    ),
    Behaviour(
        name="delta-family-swapped",
        summary="Planted: function-call argument deltas are named custom_tool_call_input.",
        frame_fault="delta_family",
    ),
    Behaviour(
        name="model-renamed",
        summary="Planted: answers name the backend's model, not the one the client asked for.",
        answer_fault="model_renamed",
    ),
    Behaviour(
        name="calls-say-stop",
        summary="Planted: chat answers with calls end with finish_reason stop, not tool_calls.",
        answer_fault="calls_say_stop",
    ),
    Behaviour(
        name="call-unnamed",
        summary="Planted: every tool call in an answer has an empty name (an odd shape for a "
        "middleman to carry or refuse).",
        answer_fault="call_unnamed",
    ),
    Behaviour(
        name="hosted-call",
        summary="Planted: a Responses answer with function calls also holds a finished "
        "web_search_call no tool asked for (an odd shape for a middleman).",
        answer_fault="hosted_call",
    ),
    Behaviour(
        name="created-disagrees",
        summary="Planted: response.created says another parallel_tool_calls than the final one.",
        answer_fault="created_disagrees",
    ),
    Behaviour(
        name="items-in-progress",
        summary="Planted: a completed response's function calls are still in_progress.",
        answer_fault="item_in_progress",
    ),
    Behaviour(
        name="tools-unrendered",
        summary="Planted: declared tools never reach the prompt (the template leaves them out).",
        relation_fault="tools_unrendered",
    ),
    Behaviour(
        name="system-dropped",
        summary="Planted: system and developer messages are dropped before the template.",
        relation_fault="system_dropped",
    ),
    Behaviour(
        name="results-cut",
        summary="Planted: tool results are cut to their first 32 characters before the template.",
        relation_fault="results_cut",
    ),
    Behaviour(
        name="parts-as-json",
        summary="Planted: content given as parts is rendered as its JSON text, not its text.",
        relation_fault="parts_as_json",
    ),
    Behaviour(
        name="special-tokens-read",
        summary="Planted: special-token spellings in message text are read as control tokens.",
        relation_fault="special_read",
    ),
    Behaviour(
        name="omitted-choice-none",
        summary="Planted: tools without a tool_choice are taken as tool_choice none, not auto.",
        relation_fault="omitted_choice_none",
    ),
    Behaviour(
        name="required-one-call",
        summary='Planted: tool_choice "required" keeps only the first of the calls.',
        relation_fault="required_one_call",
    ),
    Behaviour(
        name="arrays-refused",
        summary="fixed, but tools with an array parameter are refused: a JSON 400, no fault.",
        refuse_param_type="array",
    ),
    Behaviour(
        name="puppet",
        summary="The faithful server for scripted output (vllm_xargs): fixed, reading with the "
        "Kimi-K2 puppet parser unless --tool-call-parser names another.",
        tool_parser="kimi_k2",
    ),
    Behaviour(
        name="puppet-marker-in-string",
        summary="Planted: the puppet parser ends a call's JSON at the first closing marker, even "
        "inside a string: the call is lost and its markup comes back as content.",
        tool_parser="kimi_k2",
        puppet_fault="marker_in_string",
    ),
    Behaviour(
        name="puppet-prose-dropped",
        summary="Planted: the puppet parser loses the text the model wrote before its first call.",
        tool_parser="kimi_k2",
        puppet_fault="prose_dropped",
    ),
    Behaviour(
        name="puppet-second-call-dropped",
        summary="Planted: the puppet parser returns only the first of the calls the model wrote.",
        tool_parser="kimi_k2",
        puppet_fault="second_call_dropped",
    ),
    Behaviour(
        name="puppet-args-retyped",
        summary="Planted: the puppet parser returns an argument that is a string of digits as a "
        "number.",
        tool_parser="kimi_k2",
        puppet_fault="args_retyped",
    ),
    Behaviour(
        name="puppet-vllm-kimi-k2",
        seed="000",
        summary="Seed 000 for scripted output: vllm-kimi-k2 (streamed Responses mint call_<hex>, "
        "history ids rendered verbatim) whose Kimi-K2 parser drops a call headed otherwise "
        "than NAME:N.",
        rewrite="none",
        stream_call_id="call_hex16",
        keep_slot_index=True,
        tool_parser="kimi_k2",
        puppet_fault="header_dropped",
    ),
    Behaviour(
        name="puppet-stream-swallows",
        summary="Planted: streamed, output the puppet parser cannot read (an unclosed call) "
        "comes back as nothing; not streamed it is content, as the faithful server's.",
        tool_parser="kimi_k2",
        puppet_fault="unreadable_swallowed",
    ),
    Behaviour(
        name="puppet-cut-complete",
        summary="Planted: a scripted answer the token budget cut is reported as complete "
        "(chat finish_reason stop, Responses status completed).",
        tool_parser="kimi_k2",
        puppet_fault="cut_complete",
    ),
    Behaviour(
        name="item-ids-shared",
        seed="003",
        summary="Planted: every output item of a response carries the first item's id.",
        template="harmony",
        answer_fault="item_ids_shared",
    ),
)

BEHAVIOURS: dict[str, Behaviour] = {p.name: p for p in _BEHAVIOURS}


class UnknownBehaviour(KeyError, ValueError):
    """A profile name that is not in ``BEHAVIOURS``; ``str()`` is one readable line."""

    def __str__(self) -> str:
        return str(self.args[0])


def get_behaviour(name: str) -> Behaviour:
    """Look a profile up by name, with a one-line error listing the known names."""
    try:
        return BEHAVIOURS[name]
    except KeyError:
        known = ", ".join(BEHAVIOURS)
        raise UnknownBehaviour(f"unknown reference profile {name!r} (known: {known})") from None
