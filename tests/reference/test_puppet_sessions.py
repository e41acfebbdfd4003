"""``fuzz --mode session --puppet FORMAT`` against the reference server: the faithful ``puppet``
profile stays silent, with a format whose calls carry ids (a mimic on every call turn) and one
whose calls do not; ``puppet-vllm-kimi-k2`` is seed 000 for scripted output, found as the empty
turn it is, with the mimic that copied the minted id in the bundle's request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.reference import test_puppet_fuzz


def _fuzz(out: Path, serve: str, fmt: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    return test_puppet_fuzz._fuzz(out, serve, fmt, "--mode", "session", *args)


@pytest.mark.parametrize("fmt", ["kimi_k2", "hermes"])
def test_the_faithful_server_is_silent_in_sessions(tmp_path: Path, fmt: str) -> None:
    code, found = _fuzz(tmp_path, "puppet", fmt, "--max-examples", "15")
    assert (code, found) == (0, [])


def test_seed_000_is_an_empty_turn_after_the_model_copies_a_minted_id(tmp_path: Path) -> None:
    args = ("--api", "responses", "--stream", "--max-examples", "15")
    code, found = _fuzz(tmp_path, "puppet-vllm-kimi-k2", "kimi_k2", *args)
    assert code == 1
    (hit,) = found
    assert hit["signature"] == "empty_turn"
    request = hit["request"]
    # The turn that came back empty followed a call under the id the server minted ...
    minted = [item["call_id"] for item in request["input"] if item.get("type") == "function_call"]
    assert minted and all(call_id.startswith("call_") for call_id in minted)
    # ... and carried the mimic that made the model head its own call with that id.
    script = json.loads(request["vllm_xargs"]["agentfuzz_puppet"])
    assert script["format"] == "kimi_k2" and "{{header}}" in script["template"]
    assert script["default"].startswith("functions.")
    report = (tmp_path / next(tmp_path.glob("*/repro.json")).parent.name / "REPORT.md").read_text()
    assert "## The puppet model" in report
