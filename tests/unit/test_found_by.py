"""What a bundle's ``found_by`` records: the command (no secrets), and a reduce step after it."""

from __future__ import annotations

import json

import click
import pytest

from agentfuzz.cli._common import command_line
from agentfuzz.cli._group import cli
from agentfuzz.runs.config import version
from agentfuzz.runs.reduce import found_by_after


def _line(*argv: str) -> str:
    with click.Context(cli, obj={"argv": list(argv)}):
        return command_line()


@pytest.mark.parametrize(
    "argv",
    [
        ("fuzz", "--api-key", "sk-canary", "--seed", "3"),
        ("fuzz", "--api-key=sk-canary", "--seed", "3"),
        ("fuzz", "--seed", "3", "--api-key", "sk-canary"),
    ],
)
def test_the_api_key_is_left_out_and_the_rest_kept(argv: tuple[str, ...]) -> None:
    assert _line(*argv) == "agentfuzz fuzz --seed 3"


def test_url_credentials_are_left_out_and_odd_words_quoted() -> None:
    line = _line("fuzz", "--base-url", "http://me:sk-canary@host:8000/v1", "--out", "a b")
    assert line == "agentfuzz fuzz --base-url http://host:8000/v1 --out 'a b'"


def test_a_reduced_bundle_keeps_the_campaign_and_adds_its_reduce_step() -> None:
    campaign = {"command": "agentfuzz fuzz --seed 3", "seed": 3, "profile": "default"}
    bundle = json.dumps({"request": {}, "found_by": campaign})
    after = found_by_after(bundle, "agentfuzz reduce repro.json")
    step = {"command": "agentfuzz reduce repro.json", "agentfuzz": version(), "from_run": None}
    assert after == campaign | {"run": after["run"], "reduce": step}
    # A run of its own, so its bundle never overwrites the campaign's.
    assert isinstance(after["run"], str) and after["run"]


@pytest.mark.parametrize("text", ['{"messages": []}', '{"model": "m"}\n{"model": "m"}\n', "[]"])
def test_a_capture_no_campaign_found_says_so(text: str) -> None:
    after = found_by_after(text, "agentfuzz reduce s.jsonl")
    assert after["command"] is None and after["reduce"]["command"] == "agentfuzz reduce s.jsonl"


def test_a_wrapper_script_names_its_own_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTFUZZ_COMMAND", "python live/vllm/campaign.py --seed 4")
    assert _line("fuzz", "--seed", "4") == "python live/vllm/campaign.py --seed 4"
