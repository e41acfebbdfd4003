"""Does agentfuzz pin down a bug that fires only 30% of the time, and say how often it fires?

The planted bug ``flaky_empty`` (``planted_flaky.py``) answers an empty turn, with probability
0.3, to any history holding a tool result that answers one of its calls. With ``--trials auto``
the fuzzer must still shrink it to the smallest such history and state a rate measured over at
least 10 tries; with one try it must at least not crash; with the bug off it must find nothing.
Every run goes through ``agentfuzz.cli.main``, as a maintainer would run it.

The run is seeded (Hypothesis and the server's coin), so it is reproducible; the seeds below
were picked once and are kept fixed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import httpx
import pytest

from .planted_flaky import FLAKY_MIN_ITEMS, FLAKY_MIN_SIZE, FLAKY_RATE
from .planted_server import planted_server

BUG = "flaky_empty"
# Seeds both Hypothesis (--seed) and the server's coin.
SEED = 9
FRESH_TRIES = 50


def fuzz(url: str, out: Path, *options: str) -> int:
    """The exit code of ``agentfuzz fuzz`` against ``url``, in the bug's mode and oracle only."""
    from agentfuzz.cli import main

    args = ["fuzz", "--base-url", url, "--model", "planted", "--api", "chat", "--no-stream"]
    args += ["--seed", str(SEED), "--max-examples", "20", "--oracles", "empty_turn"]
    return main([*args, "--out", str(out), "--quiet", *options])


def repros(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


def is_empty_turn(answer: httpx.Response) -> bool:
    message = answer.json()["choices"][0]["message"]
    return not message.get("content") and not message.get("tool_calls")


def rate(reproduced: str) -> tuple[int, int]:
    """``(hits, tries)`` from a bundle's ``reproduced`` ("3/10", maybe with " (flaky)")."""
    found = re.fullmatch(r"(\d+)/(\d+)( \(flaky\))?", reproduced)
    assert found, reproduced
    return int(found[1]), int(found[2])


def history(result_id: str) -> dict[str, Any]:
    """A chat request: a user message, one call ``c1`` and a result answering ``result_id``."""
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    messages = [
        {"role": "user", "content": "Use get_weather."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": result_id, "content": "ok"},
    ]
    return {"model": "planted", "messages": messages, "tools": [tool]}


def empties(seed: int, body: dict[str, Any], tries: int) -> list[bool]:
    """Which of ``tries`` posts of ``body`` to a fresh server with ``seed`` got an empty turn."""
    with planted_server([BUG], seed=seed) as url, httpx.Client(timeout=10) as client:
        return [
            is_empty_turn(client.post(url + "/chat/completions", json=body)) for _ in range(tries)
        ]


def test_the_bug_fires_sometimes_on_its_trigger_and_repeats_per_seed() -> None:
    fired = empties(SEED, history("c1"), 40)
    assert 0 < sum(fired) < 40
    assert empties(SEED, history("c1"), 40) == fired
    # An orphan result answers no call: never the trigger.
    assert not any(empties(SEED, history("nobody"), 20))


@dataclass
class Run:
    """One ``--trials auto`` fuzz run, with its server still up to re-send the repro to."""

    code: int
    output: str
    repros: list[dict[str, Any]]


@pytest.fixture(scope="module")
def auto_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Shared by the tests below: the run takes most of this file's time."""
    home = tmp_path_factory.mktemp("flaky-auto")
    stdout, stderr = StringIO(), StringIO()
    # The example database lives under the working directory: keep it out of the repo.
    with pytest.MonkeyPatch.context() as mp, planted_server([BUG], seed=SEED) as url:
        mp.chdir(home)
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = fuzz(url, home / "out", "--trials", "auto")
        yield Run(code, stdout.getvalue() + stderr.getvalue(), repros(home / "out"))


def empty_turn_repro(run: Run) -> dict[str, Any]:
    hits = [r for r in run.repros if r["oracle"] == "empty_turn"]
    assert len(hits) == 1, run.output
    return hits[0]


def test_auto_trials_shrink_the_flaky_bug_to_its_minimum(auto_run: Run) -> None:
    assert auto_run.code == 1, auto_run.output
    repro = empty_turn_repro(auto_run)
    shown = json.dumps(repro["request"]) + "\n" + auto_run.output
    assert repro["size"] == FLAKY_MIN_SIZE, shown
    assert len(repro["request"]["messages"]) == FLAKY_MIN_ITEMS, shown
    hits, tries = rate(repro["reproduced"])
    assert tries >= 10
    assert 0 < hits < tries, repro["reproduced"]


def test_the_summary_calls_it_flaky_without_a_traceback(auto_run: Run) -> None:
    hits, tries = rate(empty_turn_repro(auto_run)["reproduced"])
    assert f"flaky: reproduced {hits}/{tries} · empty_turn:" in auto_run.output
    assert "Traceback" not in auto_run.output
    # Hypothesis's Flaky / FlakyFailure must be suppressed, not reported.
    assert "Flaky" not in auto_run.output


def test_the_stated_rate_matches_a_fresh_measurement(auto_run: Run) -> None:
    repro = empty_turn_repro(auto_run)
    hits, tries = rate(repro["reproduced"])
    with httpx.Client(timeout=10) as client:
        answers = [client.post(repro["url"], json=repro["request"]) for _ in range(FRESH_TRIES)]
    fresh = sum(map(is_empty_turn, answers)) / FRESH_TRIES
    # Over 50 tries a 0.3 coin lands in [0.15, 0.45] about 98% of the time.
    assert abs(fresh - FLAKY_RATE) <= 0.15, fresh
    assert abs(hits / tries - fresh) <= 0.2, (repro["reproduced"], fresh)


def test_one_trial_still_ends_with_a_repro_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with planted_server([BUG], seed=SEED) as url:
        code = fuzz(url, tmp_path / "out", "--trials", "1")
    output = "".join(capsys.readouterr())
    assert code == 1, output
    assert "Traceback" not in output and "Flaky" not in output
    found = repros(tmp_path / "out")
    assert [r["oracle"] for r in found] == ["empty_turn"], output
    assert found[0]["size"] >= FLAKY_MIN_SIZE


def test_with_the_bug_off_the_same_run_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with planted_server([], seed=SEED) as url:
        code = fuzz(url, tmp_path / "out", "--trials", "auto")
    output = "".join(capsys.readouterr())
    assert code == 0, output
    assert repros(tmp_path / "out") == []
    assert "0 finding(s)" in output
