"""The ``consistency`` oracle against the reference server's planted answer faults: each is caught
and shrunk to its known minimum, and the ``fixed`` profile stays silent. (The planted server in
tests/quality plants the other two: "tool_calls" with no call, usage that does not add up.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli


def _fuzz(out: Path, serve: str, api: str, stream: bool) -> list[dict[str, Any]]:
    args = ["fuzz", "--serve", serve, "--api", api, "--stream" if stream else "--no-stream"]
    args += ["--max-examples", "150", "--seed", "3", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(cli, [*args, "--oracles", "consistency"], terminal_width=200)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == (0 if serve == "fixed" else 1), result.output
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


def _items(request: dict[str, Any]) -> int:
    items = request.get("messages", request.get("input"))
    return 1 if isinstance(items, str) else len(items)


@pytest.mark.parametrize(
    ("serve", "api", "stream", "signature", "needs_tool"),
    [
        ("model-renamed", "chat", False, "consistency:model_echo", False),
        ("model-renamed", "chat", True, "consistency:model_echo", False),
        ("model-renamed", "responses", True, "consistency:model_echo", False),
        ("calls-say-stop", "chat", False, "consistency:calls_with_stop", True),
        ("calls-say-stop", "chat", True, "consistency:calls_with_stop", True),
        ("created-disagrees", "responses", True, "consistency:envelope:parallel_tool_calls", False),
        ("items-in-progress", "responses", False, "consistency:item_status", True),
        ("items-in-progress", "responses", True, "consistency:item_status", True),
        ("item-ids-shared", "responses", False, "consistency:shared_item_id", False),
    ],
)
def test_a_planted_answer_fault_is_found_and_shrunk(
    tmp_path: Path, serve: str, api: str, stream: bool, signature: str, needs_tool: bool
) -> None:
    found = _fuzz(tmp_path, serve, api, stream)
    (hit,) = [f for f in found if f["signature"] == signature]
    request = hit["request"]
    # One message; a tool only where the fault lives in a call.
    assert _items(request) == 1, request
    assert bool(request.get("tools")) == needs_tool, request


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_fixed_profile_answers_consistently(tmp_path: Path, api: str, stream: bool) -> None:
    assert _fuzz(tmp_path, "fixed", api, stream) == []
