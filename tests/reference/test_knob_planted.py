"""The ``knob`` oracle against the reference server's planted knob faults: each profile accepts one
knob and ignores it, and a default-profile campaign catches it and shrinks the request to one
message and that knob alone. ``parallel-ignored`` needs a prompt asking for two calls beside
``parallel_tool_calls: false``, which generation reaches too rarely for a test: a captured
request is reduced to its minimum instead. The reference server itself honours or refuses every
knob (``fixed`` stays silent: tests/quality/test_surface_planted.py, and below for budgets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli


def _fuzz(out: Path, serve: str, api: str, stream: bool, seed: int, examples: int = 300) -> str:
    args = ["fuzz", "--serve", serve, "--api", api, "--stream" if stream else "--no-stream"]
    args += ["--max-examples", str(examples), "--seed", str(seed), "--out", str(out), "--quiet"]
    args += ["--oracles", "knob"]
    result = CliRunner().invoke(cli, args, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == (1 if serve != "fixed" else 0), result.output
    return result.output


def _knob_findings(out: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]
    return [f for f in found if f["oracle"] == "knob"]


@pytest.mark.parametrize(
    ("serve", "api", "stream", "seed", "signature", "field", "value"),
    [
        ("n-ignored", "chat", False, 1, "knob:n", "n", 2),
        ("n-ignored", "chat", True, 3, "knob:n", "n", 2),
        # Seeds move whenever the generators change (Hypothesis mixes the constants of
        # request/ and strategies/ into its draws). A stop string in a text answer is met in
        # about one seed of four, each shrunk to " " alike before and after issue 41: 1 is one.
        ("stop-ignored", "chat", False, 1, "knob:stop", "stop", " "),
        ("logprobs-ignored", "chat", True, 0, "knob:logprobs:missing", "logprobs", True),
        ("usage-chunk-ignored", "chat", True, 3, "knob:include_usage:count",
         "stream_options", {"include_usage": True}),
        ("budget-ignored", "responses", False, 0, "knob:budget", "max_output_tokens", 1),
        ("budget-ignored", "responses", True, 0, "knob:budget", "max_output_tokens", 1),
        # These are met in about half the seeds within 300 examples, before and after the
        # agent loop's skeleton (issue 41 item 11), seeds 0-7: logprobs 5 then and 5 now,
        # JSON on chat 3 then and 4 now; with the run's openings, JSON on Responses 4 of 8.
        ("json-format-ignored", "chat", False, 1, "knob:response_format:not_json",
         "response_format", {"type": "json_object"}),
        ("json-format-ignored", "responses", False, 1, "knob:response_format:not_json",
         "text", {"format": {"type": "json_object"}}),
    ],
)  # fmt: skip
def test_an_ignored_knob_is_found_and_shrunk_to_that_knob(
    tmp_path: Path,
    serve: str,
    api: str,
    stream: bool,
    seed: int,
    signature: str,
    field: str,
    value: Any,
) -> None:
    output = _fuzz(tmp_path, serve, api, stream, seed)
    (found,) = [f for f in _knob_findings(tmp_path) if f["signature"] == signature]
    request = found["request"]
    # One message and the knob, its plainest value: no tools, no other field.
    items = "messages" if api == "chat" else "input"
    assert set(request) == {"model", items, "stream", field}, (request, output)
    assert found["size"] == 1 and request[field] == value


def test_a_two_call_answer_despite_parallel_tool_calls_false_is_reduced_to_its_minimum(
    tmp_path: Path,
) -> None:
    tool: Any = lambda name: {  # noqa: E731
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }
    captured = {
        "model": "kimi-k2-reference",
        "messages": [
            {"role": "system", "content": "You are a helpful agent."},
            {"role": "user", "content": "What is up?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "noon"},
            {"role": "user", "content": "Use get_weather and search."},
        ],
        "tools": [tool("get_weather"), tool("search"), tool("get_time")],
        "parallel_tool_calls": False,
        "user": "u1",
    }  # fmt: skip
    path = tmp_path / "captured.json"
    path.write_text(json.dumps(captured))
    args = ["reduce", str(path), "--serve", "parallel-ignored", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli, args, terminal_width=200)
    assert result.exit_code == 1, result.output
    (found,) = _knob_findings(tmp_path / "out")
    assert found["signature"] == "knob:parallel_tool_calls" and found["size"] == 1
    request = found["request"]
    # The two tools the message names, the knob; the third tool, the history and user are gone.
    assert [t["function"]["name"] for t in request["tools"]] == ["get_weather", "search"]
    assert request["parallel_tool_calls"] is False and "user" not in request
    # The reference server itself keeps to one call.
    assert CliRunner().invoke(cli, [*args[:3], "fixed", *args[4:]]).exit_code == 0


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_fixed_profile_keeps_to_every_budget_it_accepts(tmp_path: Path, api: str) -> None:
    # Long arguments (adversarial schemas) do not fit small budgets: it refuses them instead.
    _fuzz(tmp_path, "fixed", api, False, 1, examples=600)
    assert _knob_findings(tmp_path) == []
