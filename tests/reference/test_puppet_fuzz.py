"""``fuzz --puppet FORMAT`` against the reference server (issue 42): the faithful ``puppet``
profile stays silent, and each planted parser fault is found by ``puppet_truth`` and shrunk to a
script that shows it and little else (bench/puppet_silence.py sends 10,000 scripted examples)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli


def _fuzz(out: Path, serve: str, fmt: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    argv = ["fuzz", "--serve", serve, "--puppet", fmt, "--seed", "1", "--quiet", *args]
    result = CliRunner().invoke(cli, [*argv, "--out", str(out)])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


def _script(found: dict[str, Any]) -> dict[str, Any]:
    carried = json.loads(found["request"]["vllm_xargs"]["agentfuzz_puppet"])
    script: dict[str, Any] = carried["script"]
    return script


@pytest.mark.parametrize("fmt", ["hermes", "kimi_k2", "qwen3_xml", "pythonic", "mistral"])
def test_the_faithful_server_is_silent(tmp_path: Path, fmt: str) -> None:
    code, found = _fuzz(tmp_path, "puppet", fmt, "--max-examples", "25")
    assert (code, found) == (0, [])


def test_a_call_cut_at_a_marker_inside_a_string_is_found_and_shrunk(tmp_path: Path) -> None:
    args = ("--api", "chat", "--no-stream", "--max-examples", "100")
    code, found = _fuzz(tmp_path, "puppet-marker-in-string", "hermes", *args)
    assert code == 1
    (hit,) = found
    assert hit["signature"] == "puppet_truth:hermes:calls:count"
    (call,) = _script(hit)["calls"]
    # One call, its one argument holding the marker: all the fault needs (the opening of the
    # trap, "a </tool_call> b", finds it before a random draw does; openings are not shrunk).
    (value,) = call["arguments"].values()
    assert "</tool_call>" in value and len(value) <= len("a </tool_call> b")


@pytest.mark.slow  # the kind of check the marker test above makes in the fast lane
def test_lost_prose_and_a_lost_second_call_are_found(tmp_path: Path) -> None:
    args = ("--api", "chat", "--no-stream", "--max-examples", "100")
    code, found = _fuzz(tmp_path / "prose", "puppet-prose-dropped", "hermes", *args)
    # A script cut by a budget and answered whole without its prose is puppet_cut's as well.
    (hit,) = [f for f in found if f["signature"] == "puppet_truth:hermes:content"]
    assert {f["signature"] for f in found} <= {hit["signature"], "puppet_cut:hermes:complete"}
    script = _script(hit)
    assert code == 1
    assert script["text_before"].strip() and len(script["calls"]) == 1
    code, found = _fuzz(tmp_path / "second", "puppet-second-call-dropped", "hermes", *args)
    (hit,) = found
    calls = _script(hit)["calls"]
    assert code == 1 and hit["signature"] == "puppet_truth:hermes:calls:count"
    assert len(calls) == 2 and all(call["arguments"] == {} for call in calls)
    # What the model wrote stands beside what the server returned.
    assert "the model wrote" in hit["evidence"] and "the server returned" in hit["evidence"]


def test_a_cut_script_reported_complete_is_found_and_shrunk(tmp_path: Path) -> None:
    args = ("--api", "chat", "--no-stream", "--max-examples", "100")
    code, found = _fuzz(tmp_path, "puppet-cut-complete", "hermes", *args)
    assert code == 1
    (hit,) = found
    assert hit["signature"] == "puppet_cut:hermes:complete"
    # One bare call, cut by the smallest budget: all the fault needs.
    assert _script(hit)["calls"] == [{"name": "get_weather", "arguments": {}, "id": None}]
    assert hit["request"]["max_tokens"] == 1


def test_an_unclosed_call_swallowed_by_the_stream_alone_is_found_and_shrunk(
    tmp_path: Path,
) -> None:
    # No truth judges an unclosed call; the stream and the plain answer to it must agree.
    args = ("--api", "chat", "--no-stream", "--max-examples", "60", "--differential")
    code, found = _fuzz(tmp_path, "puppet-stream-swallows", "hermes", *args)
    assert code == 1
    (hit,) = found
    assert hit["signature"] == "stream_divergence:shape"
    script = _script(hit)
    assert script["calls"] == [{"name": "get_weather", "arguments": {}, "id": None}]
    # Left unclosed by the script, or cut short by a stop string or a token budget: either way
    # the model's output ends where the reader cannot read it.
    cut = {"stop", "max_tokens", "max_completion_tokens"} & set(hit["request"])
    assert script.get("unclosed") is True or cut
    # The faithful server answers the same run with nothing to report.
    code, found = _fuzz(tmp_path / "faithful", "puppet", "hermes", *args)
    assert (code, found) == (0, [])
