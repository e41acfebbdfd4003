"""The ``framing`` oracle against the reference server's planted framing faults: each is caught on
the smallest request (one message) and the ``fixed`` profile's streams stay silent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli


def _fuzz(out: Path, serve: str, api: str) -> int:
    args = ["fuzz", "--serve", serve, "--api", api, "--stream", "--max-examples", "100"]
    args += ["--seed", "3", "--out", str(out), "--quiet", "--oracles", "framing"]
    result = CliRunner().invoke(cli, args, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code


@pytest.mark.parametrize(
    ("serve", "api", "signature"),
    [
        ("chat-no-done", "chat", "framing:no_done"),
        ("responses-done", "responses", "framing:done_in_responses"),
        ("unnamed-events", "responses", "framing:event_missing"),
        ("sequence-gaps", "responses", "framing:sequence"),
        ("delta-family-swapped", "responses", "framing:delta_family"),
    ],
)
def test_a_planted_framing_fault_is_found_on_one_message(
    tmp_path: Path, serve: str, api: str, signature: str
) -> None:
    assert _fuzz(tmp_path, serve, api) == 1
    found = [json.loads(p.read_text()) for p in tmp_path.glob("*/repro.json")]
    (hit,) = [f for f in found if f["signature"] == signature]
    assert hit["size"] == 1, hit["request"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_fixed_profile_frames_its_streams_by_the_spec(tmp_path: Path, api: str) -> None:
    assert _fuzz(tmp_path, "fixed", api) == 0
