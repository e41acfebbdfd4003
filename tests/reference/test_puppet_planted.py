"""Each planted puppet-parser fault shows on one script that reaches it and leaves the plain
one-call script exactly as the truth says, in every mode; the faithful ``puppet`` profile
returns the truth on both."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from agentfuzz.puppet import channel
from agentfuzz.puppet.formats import FORMATS, Call, Script
from agentfuzz.reference import BEHAVIOURS
from tests.reference.wire import Turn, send

MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]
PLAIN = Script((Call("get_weather", {"city": "Paris"}),))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {key: {"type": "string"}}},
        },
    }
    for name, key in (("get_weather", "city"), ("get_time", "zone"))
]

# profile -> (parser, the script that reaches its fault)
PLANTED = {
    "puppet-marker-in-string": (
        "hermes",
        Script((Call("get_weather", {"city": 'Par"is </tool_call> x'}),)),
    ),
    "puppet-prose-dropped": (
        "hermes",
        Script((Call("get_weather", {"city": "Paris"}),), text_before="Let me look."),
    ),
    "puppet-second-call-dropped": (
        "kimi_k2",
        Script((Call("get_weather", {"city": "Paris"}), Call("get_time", {"zone": "UTC"}))),
    ),
    "puppet-args-retyped": ("qwen3_xml", Script((Call("get_weather", {"city": "75001"}),))),
}


def _answer(url: str, api: str, stream: bool, text: str) -> Turn:
    tools: list[Any] = (
        TOOLS if api == "chat" else [{"type": "function", **t["function"]} for t in TOOLS]
    )
    body: dict[str, Any] = {"model": "m", "stream": stream, "tools": tools}
    body["messages" if api == "chat" else "input"] = [{"role": "user", "content": "go"}]
    body["vllm_xargs"] = channel.encode(channel.Text(text))
    turn = send(url, api, body)
    assert turn.status == 200 and turn.error is None, turn.body[:300]
    return turn


def _seen(turn: Turn) -> tuple[str, list[tuple[str, Any]]]:
    return turn.text.strip(), [(c["name"], json.loads(c["arguments"])) for c in turn.calls]


def _truth(parser: str, script: Script) -> tuple[str, list[tuple[str, Any]]]:
    truth = FORMATS[parser].expected(script)
    return (truth.content or "").strip(), [(c.name, c.arguments) for c in truth.calls]


def test_every_planted_profile_is_the_faithful_one_but_for_its_fault() -> None:
    faithful = BEHAVIOURS["puppet"]
    for name in PLANTED:
        planted = BEHAVIOURS[name]
        assert planted.puppet_fault is not None
        unplanted = replace(planted, name="puppet", summary=faithful.summary, puppet_fault=None)
        assert unplanted == faithful


@pytest.mark.parametrize("profile", sorted(PLANTED))
def test_a_planted_fault_shows_only_on_the_script_that_reaches_it(serve: Any, profile: str) -> None:
    parser, reaching = PLANTED[profile]
    planted = serve(profile, tool_parser=parser)
    faithful = serve("puppet", tool_parser=parser)
    fmt = FORMATS[parser]
    for api, stream in MODES:
        bad = _seen(_answer(planted, api, stream, fmt.write(reaching)))
        assert bad != _truth(parser, reaching), (api, stream)
        assert _seen(_answer(faithful, api, stream, fmt.write(reaching))) == _truth(
            parser, reaching
        )
        plain = _seen(_answer(planted, api, stream, fmt.write(PLAIN)))
        assert plain == _truth(parser, PLAIN), (api, stream)


def test_each_fault_breaks_what_it_says(serve: Any) -> None:
    def seen(profile: str) -> tuple[str, list[tuple[str, Any]]]:
        parser, script = PLANTED[profile]
        return _seen(
            _answer(
                serve(profile, tool_parser=parser), "chat", False, FORMATS[parser].write(script)
            )
        )

    text, calls = seen("puppet-marker-in-string")
    assert calls == [] and "<tool_call>" in text
    assert seen("puppet-prose-dropped") == ("", [("get_weather", {"city": "Paris"})])
    assert seen("puppet-second-call-dropped") == ("", [("get_weather", {"city": "Paris"})])
    assert seen("puppet-args-retyped") == ("", [("get_weather", {"city": 75001})])


def test_a_planted_profile_reaches_its_fault_with_its_own_parser(serve: Any) -> None:
    """Served without --tool-call-parser, a puppet profile reads Kimi-K2, faults and all."""
    script = Script((Call("get_weather", {"city": "Paris"}),), text_before="Let me look.")
    turn = _answer(serve("puppet-prose-dropped"), "chat", False, FORMATS["kimi_k2"].write(script))
    assert _seen(turn) == ("", [("get_weather", {"city": "Paris"})])
    assert [c["id"] for c in turn.calls] == ["functions.get_weather:0"]


@pytest.mark.parametrize("profile", sorted(PLANTED))
def test_a_planted_profile_answers_unscripted_requests_as_the_faithful_one(
    serve: Any, profile: str
) -> None:
    """The faults break scripted answers alone: the reference model's own two calls (with
    digits in their arguments, were the model to write some) come back whole."""
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "Use get_weather and get_time."}],
        "tools": TOOLS,
    }
    faithful = send(serve("puppet"), "chat", body)
    assert len(faithful.calls) == 2
    assert send(serve(profile), "chat", body).calls == faithful.calls
