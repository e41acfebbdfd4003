"""vLLM's side of parser_replay.py: the request, the parser, the engine's output and the two
paths of the chat server, each built from vLLM 0.32.0's own objects.

Imports vLLM, so it runs only with the cache venv's python; parser_replay.py imports it once its
own checks have passed. The steps follow vllm/entrypoints/openai/chat_completion/serving.py:
one parser instance per path, ``adjust_request`` applied first (as the renderer does), then
``Parser.parse`` for a non-streamed answer and ``Parser.parse_delta`` once per engine step for a
streamed one.
"""

from __future__ import annotations

import json
import logging
import traceback
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from vllm.entrypoints.generate.base.protocol import DeltaMessage, ToolCall
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionRequest,
    ChatCompletionResponseStreamChoice,
)
from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls
from vllm.parser import ParserManager
from vllm.renderers.chat_utils import make_tool_call_id
from vllm.sampling_params import SamplingParams
from vllm.v1.engine.detokenizer import IncrementalDetokenizer

# Request fields copied from the bundle as they are.
PASSED = (
    "parallel_tool_calls",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "include_reasoning",
    "chat_template_kwargs",
)


class LogCapture(logging.Handler):
    """Keeps vLLM's warnings and errors: a parser that catches an exception only logs it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def drain(self) -> list[str]:
        """The lines kept since the last drain, each with its traceback if it had one."""
        lines = []
        for record in self.records:
            line = f"[vllm {record.levelname} {record.name}] {record.getMessage()}"
            if record.exc_info:
                line += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            lines.append(line)
        self.records.clear()
        return lines


@dataclass
class Output:
    """What the engine hands the serving layer: one (delta text, token ids, finished) per step,
    and the whole text and ids a non-streamed answer gets."""

    steps: list[tuple[str, list[int], bool]]
    text: str
    token_ids: list[int]
    finish_reason: str
    stop_reason: str | int | None


@dataclass
class Result:
    """One path's answer as a client sees it, and what went wrong on the way."""

    content: str | None = None
    finish_reason: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    logs: list[str] = field(default_factory=list)
    deltas: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The fields written to --json."""
        keys = ("content", "finish_reason", "calls", "error", "logs")
        return {key: getattr(self, key) for key in keys}


def _chat_tools(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The bundle's tools in the chat form (a Responses bundle's flat tools are rewrapped)."""
    if not body.get("tools"):
        return None
    tools = []
    for tool in body["tools"]:
        if "function" in tool:
            tools.append(tool)
        elif tool.get("type") == "function":
            keys = ("name", "description", "parameters", "strict")
            tools.append({"type": "function", "function": {k: tool[k] for k in keys if k in tool}})
    return tools


def build_request(body: dict[str, Any], stream: bool) -> ChatCompletionRequest:
    """The chat request the server would build from the bundle's body."""
    fields: dict[str, Any] = {
        "model": body.get("model", "smollm2"),
        "messages": body.get("messages") or [{"role": "user", "content": ""}],
        "stream": stream,
    }
    tools = _chat_tools(body)
    if tools is not None:
        fields["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function" and "function" not in choice:
        choice = {"type": "function", "function": {"name": choice.get("name")}}
    if choice is not None:
        fields["tool_choice"] = choice
    fields.update({key: body[key] for key in PASSED if key in body})
    return ChatCompletionRequest(**fields)


def parser_class(name: str, tokenizer: Any) -> Any:
    """The composed Parser class the server builds for ``--tool-call-parser name``.

    Raises ValueError for a name vLLM has not registered."""
    try:
        return ParserManager.get_parser(
            tool_parser_name=name,
            reasoning_parser_name=None,
            enable_auto_tools=True,
            model_name="smollm2",
            tokenizer=tokenizer,
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"vLLM has no tool parser named {name!r}") from exc


def new_parser(cls: Any, tokenizer: Any, request: ChatCompletionRequest) -> Any:
    """One parser instance, built as the server builds it for each request."""
    kwargs = request.chat_template_kwargs or {}
    return cls(tokenizer, request.tools, chat_template_kwargs=kwargs, model_config=None)


def adjusted(cls: Any, tokenizer: Any, request: ChatCompletionRequest) -> ChatCompletionRequest:
    """The request after the renderer's ``adjust_request`` step."""
    if cls.always_adjust_request or request.tool_choice != "none":
        return new_parser(cls, tokenizer, request).adjust_request(request=request)
    return request


def engine_output(
    tokenizer: Any,
    request: ChatCompletionRequest,
    text: str,
    body: dict[str, Any],
    coalesce: int,
    max_tokens: int | None,
) -> Output:
    """The written text's tokens, then eos, through vLLM's own incremental detokenizer.

    ``max_tokens`` cuts the tokens (finish_reason ``length``); stop strings are matched by the
    detokenizer. Each step holds ``coalesce`` tokens."""
    params = SamplingParams(
        skip_special_tokens=request.skip_special_tokens,
        spaces_between_special_tokens=request.spaces_between_special_tokens,
        stop=body.get("stop"),
        include_stop_str_in_output=bool(body.get("include_stop_str_in_output", False)),
    )
    fake = SimpleNamespace(sampling_params=params, request_id="replay", prompt_token_ids=[])
    detok = IncrementalDetokenizer.from_new_request(tokenizer, fake)
    forced = list(tokenizer.encode(text, add_special_tokens=False))
    finish_reason, stop_reason, eos_end = "stop", None, True
    if max_tokens is not None and len(forced) >= max_tokens:
        forced, finish_reason, eos_end = forced[:max_tokens], "length", False
    else:
        forced.append(tokenizer.eos_token_id)
    chunks = [forced[i : i + coalesce] for i in range(0, len(forced), coalesce)] or [[]]
    steps: list[tuple[str, list[int], bool]] = []
    for n, chunk in enumerate(chunks):
        last = n == len(chunks) - 1
        matched = detok.update(chunk, last and eos_end)
        if matched is not None:
            finish_reason, stop_reason, last = "stop", matched, True
        steps.append((detok.get_next_output_text(finished=last, delta=True), chunk, last))
        if last:
            break
    return Output(
        steps, detok.output_text, list(detok.output_token_ids), finish_reason, stop_reason
    )


def replay_nonstream(
    cls: Any, tokenizer: Any, request: ChatCompletionRequest, out: Output, capture: LogCapture
) -> Result:
    """``Parser.parse`` on the whole text, then the server's choice of message and finish."""
    parser = new_parser(cls, tokenizer, request)
    try:
        _, content, tool_calls = parser.parse(
            out.text, request, enable_auto_tools=True, model_output_token_ids=out.token_ids
        )
    except Exception:
        return Result(error=traceback.format_exc().rstrip(), logs=capture.drain())
    named = isinstance(request.tool_choice, ChatCompletionNamedToolChoiceParam)
    required = request.tool_choice == "required"
    calls = []
    if named or required:
        calls, content = tool_calls or [], content or ""
    elif request.tool_choice and request.tool_choice != "none" and request.tools:
        calls = tool_calls or []
    message_calls = [ToolCall(id=call.id or make_tool_call_id(), function=call) for call in calls]
    if request.parallel_tool_calls is False:
        message_calls = message_calls[:1]
    auto_called = bool(calls) and not (named or required)
    finish = out.finish_reason
    if auto_called or (required and out.finish_reason == "stop"):
        finish = "tool_calls"
    return Result(
        content=content,
        finish_reason=finish,
        calls=[{"name": c.function.name, "arguments": c.function.arguments} for c in message_calls],
        logs=capture.drain(),
    )


def _accumulate(delta: dict[str, Any], result: Result, slots: dict[Any, dict[str, Any]]) -> None:
    """Adds one wire delta to the answer, as openai-python's stream accumulator does."""
    if delta.get("content"):
        result.content = (result.content or "") + delta["content"]
    for call in delta.get("tool_calls") or []:
        slot = slots.setdefault(call.get("index"), {"name": None, "arguments": ""})
        function = call.get("function") or {}
        if function.get("name") is not None:
            slot["name"] = (slot["name"] or "") + function["name"]
        if function.get("arguments") is not None:
            slot["arguments"] += function["arguments"]


def replay_stream(
    cls: Any, tokenizer: Any, request: ChatCompletionRequest, out: Output, capture: LogCapture
) -> Result:
    """``Parser.parse_delta`` once per engine step, each delta sent as the server sends it."""
    parser = new_parser(cls, tokenizer, request)
    named = isinstance(request.tool_choice, ChatCompletionNamedToolChoiceParam)
    result = Result(content="")
    slots: dict[Any, dict[str, Any]] = {}
    called = False
    for text, ids, finished in out.steps:
        try:
            message = parser.parse_delta(
                delta_text=text,
                delta_token_ids=list(ids),
                request=request,
                prompt_token_ids=[],
                finished=finished,
            )
        except Exception:
            result.error = traceback.format_exc().rstrip()
            result.deltas.append(f"{text!r} -> raised")
            break
        finally:
            result.logs += capture.drain()
        called = called or bool(message is not None and message.tool_calls)
        if message is None and not finished:
            result.deltas.append(f"{text!r} -> (no chunk)")
            continue
        if finished:
            stopped = called and not named and out.finish_reason == "stop"
            result.finish_reason = "tool_calls" if stopped else out.finish_reason
        choice = ChatCompletionResponseStreamChoice(
            index=0,
            delta=message or DeltaMessage(),
            logprobs=None,
            finish_reason=result.finish_reason,
        )
        choice = maybe_filter_parallel_tool_calls(choice, request)
        delta = json.loads(choice.model_dump_json(exclude_unset=True)).get("delta") or {}
        result.deltas.append(f"{text!r} -> {json.dumps(delta, ensure_ascii=False)}")
        _accumulate(delta, result, slots)
    order = sorted(slots, key=lambda index: (index is None, index))
    result.calls = [slots[index] for index in order]
    return result
