"""The reference server honours the puppet's script channel: a scripted request's answer is
exactly what a faithful parser returns for the script (``Format.expected``), for every catalog
format, on chat and Responses, streamed and not; each planted puppet fault shows on the script
that reaches it and nowhere else.

The scripts are written by the client side's catalog and read by the server's own readers, so
the two halves check each other.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import FORMATS, Call, Format, Script, Truth
from agentfuzz.reference import READERS, UnknownReader, create_app, serve_in_thread
from tests.reference.wire import Turn, send
from tests.unit.test_puppet_readers import SCRIPTS

MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]

EXTRA = [
    Script(
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"zone": "UTC"})),
        text_before="First I look.",
        text_between="Then the time.",
        text_after="Both asked.",
    ),
    Script((Call("a_tool", {"n": 1}), Call("b_tool", {"s": "two"}), Call("c_tool", {"x": [1]}))),
    Script((Call("echo", {"digits": "12345", "neg": -7, "f": -0.5, "big": 2**70, "empty": ""}),)),
    Script((Call("echo", {"q": 'it\'s "q" \\ \\\\ \\n', "u": "a\u2028b\u0085c é 😀", "t": "\t"}),)),
    Script((Call("ns.tool-name", {"k": "v"}),)),
    Script((Call("get_weather", {"city": "Oslo"}, id="functions.get_weather:7"),)),
]

_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


@pytest.fixture(scope="module")
def parsed_by() -> Iterator[Callable[[str], str]]:
    """``parsed_by(name)`` -> the URL of a ``puppet`` server started with that parser; the
    servers are stopped together at the end (one by one, each stop waits ~0.15 s)."""
    started: dict[str, str] = {}
    servers: list[contextlib.AbstractContextManager[str]] = []

    def start(name: str) -> str:
        if name not in started:
            server = serve_in_thread("puppet", tool_parser=name)
            started[name] = server.__enter__()
            servers.append(server)
        return started[name]

    yield start
    with ThreadPoolExecutor(max_workers=len(servers) or 1) as pool:
        list(pool.map(lambda server: server.__exit__(None, None, None), servers))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _TYPES.get(type(value), "object")


def _tools(script: Script, api: str) -> list[dict[str, Any]]:
    """A tool for each name the script calls, each parameter declared with its JSON type."""
    params: dict[str, dict[str, Any]] = {}
    for call in script.calls:
        props = params.setdefault(call.name, {})
        for key, value in call.arguments.items():
            props[key] = {"type": _json_type(value)}
    tools = []
    for name, props in params.items():
        fn = {"name": name, "parameters": {"type": "object", "properties": props}}
        tools.append(
            {"type": "function", **fn}
            if api == "responses"
            else {"type": "function", "function": fn}
        )
    return tools


def _ask(url: str, api: str, stream: bool, text: str, tools: list[Any] | None) -> Turn:
    body: dict[str, Any] = {"model": "m", "stream": stream, "tools": tools}
    body["messages" if api == "chat" else "input"] = [{"role": "user", "content": "go"}]
    body["vllm_xargs"] = channel.encode(channel.Text(text, tag="test"))
    return send(url, api, body)


def _exact(value: Any) -> str:
    """A value as JSON spells it: ``1`` and ``1.0``, ``True`` and ``1`` differ."""
    return json.dumps(value, sort_keys=True)


def _matches(turn: Turn, truth: Truth, fmt: Format) -> str | None:
    """What differs between the answer and the truth, or None."""
    if turn.status != 200 or turn.error is not None:
        return f"status {turn.status}: {turn.error}"
    got = [(c["name"], _exact(json.loads(c["arguments"]))) for c in turn.calls]
    want = [(c.name, _exact(c.arguments)) for c in truth.calls]
    if got != want:
        return f"calls {got} != {want}"
    if fmt.carries_ids and [c["id"] for c in turn.calls] != [c.id for c in truth.calls]:
        return f"ids {[c['id'] for c in turn.calls]}"
    if not truth.same_content(turn.text or None):
        return f"content {turn.text!r} != {truth.content!r}"
    return None


def _writable(fmt: Format, script: Script) -> Script | None:
    """The script, or the most of it the format can write: its prose where it may stand,
    its first call alone where calls are not parallel."""
    first = replace(script, calls=script.calls[:1], text_between="")
    for candidate in (
        script,
        replace(script, text_between="", text_after=""),
        Script(script.calls),
        first,
        Script(script.calls[:1]),
    ):
        if fmt.unwritable(candidate) is None:
            return candidate
    return None


def _scripts(fmt: Format) -> list[Script]:
    """The good set for ``fmt``: the readers' scripts, the extras, and one whose argument
    holds every marker of the format (written only where its grammar keeps them in a string)."""
    markers = Script((Call("echo", {"text": " ".join(fmt.markers) + " end"}),))
    found = [_writable(fmt, s) for s in [*SCRIPTS, *EXTRA, markers]]
    unique: list[Script] = []
    for script in found:
        if script is not None and script not in unique:
            unique.append(script)
    return unique


def test_the_server_reads_every_catalog_format() -> None:
    assert set(READERS) == set(FORMATS)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_scripted_answer_is_exactly_the_truth(parsed_by: Callable[[str], str], name: str) -> None:
    fmt = FORMATS[name]
    url = parsed_by(name)
    scripts = _scripts(fmt)
    assert len(scripts) >= 6, f"{name}: only {len(scripts)} scripts"
    for script in scripts:
        text, truth = fmt.write(script), fmt.expected(script)
        for api, stream in MODES:
            turn = _ask(url, api, stream, text, _tools(script, api))
            problem = _matches(turn, truth, fmt)
            assert problem is None, f"{api} stream={stream} {problem}\n{text}"


def test_a_request_without_a_script_is_answered_as_fixed_answers_it(serve: Any) -> None:
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    ]
    body = {"model": "m", "messages": [{"role": "user", "content": "weather?"}], "tools": tools}
    fixed, puppet = send(serve("fixed"), "chat", body), send(serve("puppet"), "chat", body)
    assert puppet.calls and puppet.calls == fixed.calls
    assert puppet.text == fixed.text


def test_a_mimic_script_copies_the_last_header_of_the_prompt(serve: Any) -> None:
    url = serve("puppet")
    template = (
        "<|tool_calls_section_begin|><|tool_call_begin|>{{header}}<|tool_call_argument_begin|>"
        '{"city": "Rome"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    mimic = channel.Mimic(
        template,
        r"<\|tool_call_begin\|>(?P<header>.+?)<\|tool_call_argument_begin\|>",
        "functions.get_weather:5",
    )
    call = {"id": "functions.get_weather:0", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    history = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "rain"},
        {"role": "user", "content": "and again?"},
    ]
    tools = _tools(Script((Call("get_weather", {"city": "x"}),)), "chat")
    for messages, want in (
        (history, "functions.get_weather:0"),
        (history[:1], "functions.get_weather:5"),
    ):
        body = {
            "model": "m",
            "messages": messages,
            "tools": tools,
            "vllm_xargs": channel.encode(mimic),
        }
        turn = send(url, "chat", body)
        assert [(c["id"], c["name"]) for c in turn.calls] == [(want, "get_weather")]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("not json", "is not JSON"),
        (7, "must be a JSON string"),
        ('{"v": 2, "text": "x"}', "version 2"),
        ('{"v": 1}', "neither 'text' nor 'template'"),
        ('{"v": 1, "text": 3}', "'text' must be a string"),
        ('{"v": 1, "template": "x", "pattern": "(", "default": ""}', "does not compile"),
    ],
)
def test_an_unreadable_script_is_a_json_400(serve: Any, value: Any, why: str) -> None:
    url = serve("puppet")
    for api in ("chat", "responses"):
        body: dict[str, Any] = {"model": "m", "vllm_xargs": {channel.KEY: value}}
        body["messages" if api == "chat" else "input"] = [{"role": "user", "content": "hi"}]
        turn = send(url, api, body)
        assert turn.status == 400
        assert why in json.loads(turn.body)["error"]["message"]


def test_a_script_without_tools_is_content_as_written(serve: Any) -> None:
    """No tool parser runs without tools (vLLM's rule): the markup the puppet wrote is text."""
    text = FORMATS["kimi_k2"].write(Script((Call("get_weather", {"city": "Paris"}),)))
    for api, stream in MODES:
        turn = _ask(serve("puppet"), api, stream, text, None)
        assert turn.status == 200 and not turn.calls and turn.text == text


def test_a_forced_choice_gives_the_script_up(parsed_by: Callable[[str], str]) -> None:
    """A forced ``tool_choice`` is a grammar the script's markup cannot pass (vLLM's structured
    outputs): the model answers under the choice, read in its own format, as vLLM's processor
    gives the script up and vLLM reads a forced choice's output itself."""
    script = Script((Call("search", {"q": "x"}),), text_before="Let me look.")
    tools = _tools(Script((Call("get_weather", {"city": "Paris"}), *script.calls)), "chat")
    url = parsed_by("hermes")
    named = {"type": "function", "function": {"name": "get_weather"}}
    for choice, name in (("required", None), (named, "get_weather")):
        for stream in (False, True):
            body: dict[str, Any] = {"model": "m", "stream": stream, "tools": tools}
            body |= {"messages": [{"role": "user", "content": "go"}], "tool_choice": choice}
            text = FORMATS["hermes"].write(script)
            body["vllm_xargs"] = channel.encode(channel.Text(text, tag="test"))
            turn = send(url, "chat", body)
            assert turn.status == 200 and turn.calls, (choice, stream, turn.body)
            assert "<tool_call>" not in (turn.text or "")
            if name is not None:
                assert [c["name"] for c in turn.calls] == [name]


def test_an_unknown_parser_is_refused_with_the_one_meant() -> None:
    with pytest.raises(UnknownReader, match="did you mean hermes"):
        create_app("puppet", tool_parser="hermse")
    result = CliRunner().invoke(cli, ["serve", "puppet", "--tool-call-parser", "qwen3-xml"])
    assert result.exit_code == 2
    assert "did you mean qwen3_xml?" in result.output
    assert len(result.output.strip().splitlines()) == 1
