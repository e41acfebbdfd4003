"""The switches a behaviour profile sets over the one pipeline (template, scripted model,
parser, assembly): each seed bug, its fix, or a planted fault. ``behaviours`` names the
profiles built of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Behaviour", "KimiGrammar", "Miss", "Rewrite", "StreamCallId", "Template"]

Template = Literal["kimi", "harmony"]
# How history tool-call ids are treated before rendering (seed 000's fix and its first draft).
Rewrite = Literal["none", "strict", "loose"]
# Which Kimi header grammar the parser accepts (vLLM ``.+:\d+``, exo strict, exo's fix).
KimiGrammar = Literal["vllm", "exo", "exo-fixed"]
# What the parser does with a header it cannot read.
Miss = Literal["drop", "error", "content"]
# Which call_id the streaming Responses path puts on the wire.
StreamCallId = Literal["native", "call_hex16"]


@dataclass(frozen=True)
class Behaviour:
    """One server behaviour; ``seed`` names the report in shared/seeds/ it reproduces."""

    name: str
    summary: str
    seed: str | None = None
    template: Template = "kimi"
    rewrite: Rewrite = "strict"
    grammar: KimiGrammar = "vllm"
    miss: Miss = "drop"
    stream_call_id: StreamCallId = "native"
    # A dropped call keeps its slot, so streamed indexes skip (seed 000's known limitation).
    keep_slot_index: bool = False
    # ``response.completed`` rebuilds the output with fresh ids (seeds 002/003).
    regen_completed: bool = False
    # Harmony streaming names reasoning items ``msg_`` instead of ``rs_`` (seed 003).
    stream_reasoning_prefix: str = "rs_"
    # Without ``tools`` the server neither constrains decoding nor parses (seed 004).
    leak_without_tools: bool = False
    # Stop strings are matched in the raw output, markup included, and the parser fails on
    # the call section a stop left open (a planted fault for the ``stop`` dimension).
    stop_in_raw: bool = False
    # A body that is not JSON crashes the handler: a plain-text 500 (planted, ``malformed``).
    crash_on_bad_json: bool = False
    # A call's name is cut at its first quote, as a parser that splits on quotes would (planted).
    cut_quoted_names: bool = False
    # Content given as a list of parts crashes the handler: a plain-text 500 (planted).
    crash_on_parts: bool = False
    # A history the handler chokes on, a plain-text 500 (planted, ``faults.chokes``):
    # ``null_calls`` (a chat assistant message saying ``tool_calls: null``).
    history_fault: str | None = None
    # ``allowed_tools`` is read as its mode alone: every declared tool stays on offer (planted).
    ignore_allowed: bool = False
    # A body carrying this top-level field crashes the handler: a plain-text 500 (planted).
    crash_on_field: str | None = None
    # A ``previous_response_id`` naming an answer this server gave crashes the handler, a
    # plain-text 500; one it never gave is refused (planted: a store that cannot read back).
    crash_on_stored: bool = False
    # Responses answers are stored and ``previous_response_id`` names one to go on from:
    # ``faithful`` (the stored request's input, then the answer's output items, as the spec
    # says), ``forget_output`` (planted, for the ``chain`` relation: the answer's own items are
    # not kept, only the input that asked for it). None: stateless, the field is refused.
    store: str | None = None
    # A history holding at least this many calls, every one under this server's own id
    # (``functions.NAME:N``, N counting from 0 in order), crashes the handler: a plain-text
    # 500 (planted: a fault only a long session fed its own answers reaches).
    crash_on_long_session: int | None = None
    # Top-level fields the handler drops before reading a body: knobs accepted and silently
    # ignored (planted, for the ``knob`` oracle).
    ignored_fields: tuple[str, ...] = ()
    # How a stream's framing breaks the spec (planted, for the ``framing`` oracle): ``no_done``
    # (a chat stream without [DONE]), ``done_in_responses``, ``event_missing`` (Responses
    # events without their event: line), ``sequence`` (sequence numbers counted by two),
    # ``delta_family`` (a function call's argument deltas named as a custom tool's input).
    frame_fault: str | None = None
    # How an answer contradicts itself or its request (planted, for the ``consistency``
    # oracle): ``model_renamed`` (a backend's name for the model asked), ``created_disagrees``
    # (response.created says another parallel_tool_calls), ``item_in_progress`` (a completed
    # response's function calls still in_progress), ``item_ids_shared`` (every output item
    # under the first one's id), ``calls_say_stop`` (chat calls end with finish_reason stop).
    answer_fault: str | None = None
    # How a request is misread on its way to the prompt (planted, for the ``relation``
    # oracle): ``tools_unrendered`` (the template leaves the tools out), ``system_dropped``,
    # ``results_cut`` (tool results cut to 32 characters), ``parts_as_json`` (content given
    # as parts rendered as its JSON text), ``special_read`` (special-token spellings in message
    # text read as control tokens), ``omitted_choice_none`` (tools without a tool_choice taken
    # as "none"), ``required_one_call`` (tool_choice "required" keeps the first call alone).
    relation_fault: str | None = None
    # Tools whose parameters declare a property of this JSON type are refused with a JSON 400:
    # a legitimate refusal, which session mode must not blame on the history (planted, clean).
    refuse_param_type: str | None = None
    # The tool-call parser (vLLM's ``--tool-call-parser`` name, ``readers.READERS``) this
    # profile serves with when the server is started without one. None: the template's own
    # Kimi-K2 or Harmony parser (``parsers``).
    tool_parser: str | None = None
    # A planted fault of the puppet parsers (``readers``), reached only by a scripted answer
    # one of them reads: ``marker_in_string`` (a call's JSON ends at the first closing marker,
    # even inside a string: the call is lost and its markup is content), ``prose_dropped``
    # (the text before the first call is lost), ``second_call_dropped`` (only the first call
    # comes back), ``args_retyped`` (an argument that is a string of digits comes back a
    # number), ``header_dropped`` (Kimi-K2: a call whose header is not ``NAME:N`` is dropped
    # with its markup, as vLLM's parser drops it, where the faithful reader returns the text),
    # ``cut_complete`` (a script the token budget cut is reported whole: chat ``stop``,
    # Responses ``completed``), ``unreadable_swallowed`` (streamed only: output the reader
    # cannot read, an unclosed call, comes back as nothing instead of content).
    puppet_fault: str | None = None
