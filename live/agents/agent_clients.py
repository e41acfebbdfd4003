"""Two real agent clients, each driven through a short multi-turn task: the plainest one (the
openai SDK and a hand-written tool loop, the way most agents begin) and the OpenAI Agents SDK's
``Runner``. Each talks to whatever base URL it is given (``agentfuzz proxy`` in front of a
server) and says what it did: the requests it sent, the tools it ran, its final words.

The task is two user asks in one conversation, each naming a tool, so the second ask is sent
with the first's calls and results in its history: the history a real agent sends back.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

ASKS = ("Use get_weather for Paris.", "Now use get_time for Rome.")

CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    for name in ("get_weather", "get_time")
]
RESPONSES_TOOLS = [{"type": "function", **tool["function"]} for tool in CHAT_TOOLS]
# What a client does to ids before it sends them back, as Kimi Code CLI through a LiteLLM
# proxy does (seed 001): anything outside [A-Za-z0-9_-] becomes "_".
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class Did:
    """What one client run did: how many requests, which tools ran, what it said last, and
    what went wrong on its side (an exception the client raised), if anything."""

    requests: int = 0
    tools: list[str] = field(default_factory=list)
    final: str = ""
    error: str | None = None

    def line(self, name: str) -> str:
        said = self.error or repr(self.final[:60])
        return f"{name}: {self.requests} requests, tools run {self.tools}, last: {said}"


def _run_tool(name: str, arguments: str) -> str:
    try:
        city = json.loads(arguments or "{}").get("city", "?")
    except (ValueError, AttributeError):
        city = "?"
    return json.dumps({"tool": name, "city": city, "result": "sunny, 21C, 14:05"})


def sdk_loop(
    base_url: str,
    api: str,
    stream: bool,
    *,
    sanitize_ids: bool = False,
    tools_on_first_only: bool = False,
    model: str = "m",
    api_key: str = "sk-agentfuzz-test",
    asks: Sequence[str] = ASKS,
) -> Did:
    """The openai SDK with a plain tool loop: ask, run each call, send the results, until the
    model answers in words; then the next ask, with everything so far as the history.

    ``sanitize_ids``: send call ids back the way a sanitising client does (seed 001).
    ``tools_on_first_only``: leave ``tools`` out after the first request (seed 004's clients).
    """
    client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=60)
    did = Did()
    history: list[Any] = []
    try:
        for ask in asks:
            history.append({"role": "user", "content": ask})
            for _ in range(4):
                with_tools = not (tools_on_first_only and did.requests)
                did.requests += 1
                if api == "chat":
                    calls = _chat_turn(
                        client, model, history, stream, with_tools, sanitize_ids, did
                    )
                else:
                    calls = _responses_turn(client, model, history, stream, with_tools, did)
                if not calls:
                    break
    except openai.OpenAIError as exc:
        did.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    finally:
        client.close()
    return did


def _chat_turn(
    client: openai.OpenAI,
    model: str,
    history: list[Any],
    stream: bool,
    with_tools: bool,
    sanitize_ids: bool,
    did: Did,
) -> int:
    extra: dict[str, Any] = {"tools": CHAT_TOOLS} if with_tools else {}
    if stream:
        text, calls = "", {}
        for chunk in client.chat.completions.create(
            model=model, messages=history, stream=True, **extra
        ):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function:
                        slot["name"] += call.function.name or ""
                        slot["arguments"] += call.function.arguments or ""
        made = [calls[k] for k in sorted(calls)]
    else:
        answer = client.chat.completions.create(model=model, messages=history, **extra)
        message = answer.choices[0].message
        text = message.content or ""
        made = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in message.tool_calls or []
            if c.type == "function"
        ]
    for call in made:
        if sanitize_ids:
            call["id"] = _UNSAFE.sub("_", call["id"])
    assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
    if made:
        assistant["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in made
        ]
    history.append(assistant)
    for call in made:
        did.tools.append(call["name"])
        output = _run_tool(call["name"], call["arguments"])
        history.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    did.final = text
    return len(made)


def _responses_turn(
    client: openai.OpenAI,
    model: str,
    history: list[Any],
    stream: bool,
    with_tools: bool,
    did: Did,
) -> int:
    extra: dict[str, Any] = {"tools": RESPONSES_TOOLS} if with_tools else {}
    if stream:
        with client.responses.stream(model=model, input=history, **extra) as events:
            for _ in events:
                pass
            answer = events.get_final_response()
    else:
        answer = client.responses.create(model=model, input=history, **extra)
    calls = [item for item in answer.output if item.type == "function_call"]
    for item in answer.output:
        history.append(item.model_dump(exclude_none=True))
    for call in calls:
        did.tools.append(call.name)
        output = _run_tool(call.name, call.arguments)
        history.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    did.final = answer.output_text
    return len(calls)


def agents_loop(base_url: str, api: str, stream: bool, model: str = "m") -> Did:
    """The OpenAI Agents SDK: an ``Agent`` with two function tools, run by ``Runner`` over chat
    completions or Responses, streamed or not; the second ask continues the first's run
    (``to_input_list``). Its tracing is off: nothing leaves loopback."""
    return asyncio.run(_agents(base_url, api, stream, model))


async def _agents(base_url: str, api: str, stream: bool, model_name: str) -> Did:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)
    did = Did()

    @function_tool
    def get_weather(city: str) -> str:
        """get_weather for a city"""
        did.tools.append("get_weather")
        return _run_tool("get_weather", json.dumps({"city": city}))

    @function_tool
    def get_time(city: str) -> str:
        """get_time for a city"""
        did.tools.append("get_time")
        return _run_tool("get_time", json.dumps({"city": city}))

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-agentfuzz-test", max_retries=0)
    kind = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
    agent = Agent(
        name="helper",
        instructions="Answer with the tools.",
        tools=[get_weather, get_time],
        model=kind(model=model_name, openai_client=client),
    )
    config = RunConfig(tracing_disabled=True)
    items: list[Any] = []
    try:
        for ask in ASKS:
            items.append({"role": "user", "content": ask})
            if stream:
                streamed = Runner.run_streamed(agent, items, max_turns=6, run_config=config)
                async for _ in streamed.stream_events():
                    pass
                result: Any = streamed
            else:
                result = await Runner.run(agent, items, max_turns=6, run_config=config)
            did.requests += len(result.raw_responses)
            did.final = str(result.final_output or "")
            items = result.to_input_list()
    except Exception as exc:  # the SDK's own errors: what the client made of the server
        did.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    finally:
        await client.close()
    return did


# A client run: the base URL, and the model name (default "m", what the reference server takes).
Loop = Callable[..., Did]


def _sdk(api: str, stream: bool, **kw: bool) -> Loop:
    return lambda url, model="m": sdk_loop(url, api, stream, model=model, **kw)


def _runner(api: str, stream: bool) -> Loop:
    return lambda url, model="m": agents_loop(url, api, stream, model=model)


# Each seed profile, a client loop that meets its bug, and the signature the proxy must write.
CATCHES: list[tuple[str, str, Loop, str]] = [
    # 000: Responses call ids rendered verbatim, imitated, the call dropped: an empty turn.
    ("vllm-kimi-k2", "sdk responses stream", _sdk("responses", True), "empty_turn"),
    ("vllm-kimi-k2", "agents responses stream", _runner("responses", True), "empty_turn"),
    # 001: a client that sanitises ids (Kimi Code CLI through LiteLLM): an error frame.
    (
        "exo-kimi-k2",
        "sdk chat stream, ids sanitised",
        _sdk("chat", True, sanitize_ids=True),
        "error:error_frame",
    ),
    # 002 and 003: response.completed re-mints the streamed ids.
    ("vllm-responses-regen", "sdk responses stream", _sdk("responses", True), "identity:"),
    ("vllm-responses-regen", "agents responses stream", _runner("responses", True), "identity:"),
    ("vllm-gpt-oss", "agents responses stream", _runner("responses", True), "identity:"),
    # 004: tools left out on a later turn: the raw call markup comes back as text.
    (
        "no-tools-leak",
        "sdk chat, tools on the first turn only",
        _sdk("chat", False, tools_on_first_only=True),
        "leaked_markup:",
    ),
]

# Every client in every mode: none may find anything on a fixed profile.
LOOPS: dict[str, Loop] = {
    "sdk chat": _sdk("chat", False),
    "sdk chat stream": _sdk("chat", True),
    "sdk chat stream, ids sanitised": _sdk("chat", True, sanitize_ids=True),
    "sdk responses": _sdk("responses", False),
    "sdk responses stream": _sdk("responses", True),
    "agents chat": _runner("chat", False),
    "agents chat stream": _runner("chat", True),
    "agents responses": _runner("responses", False),
    "agents responses stream": _runner("responses", True),
}
FIXED = ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed", "vllm-gpt-oss-fixed"]
