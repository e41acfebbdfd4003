"""The example database: a failure found once is replayed first by the next run at that target.

Generation is pinned the way ``pytest --hypothesis-seed`` pins it (``global_force_seed``): unlike
``--seed`` (Hypothesis's ``@seed``), that keeps the database on. Hypothesis's first example is its
simplest one, which passes on ``vllm-kimi-k2``; so a one-example run finds the seed bug only by
replaying what an earlier run saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import hypothesis.core
import pytest

from agentfuzz.cli import main
from agentfuzz.reference import serve_in_thread

_ONLY_CHAT = ["--api", "chat", "--no-stream", "--oracles", "empty_turn", "--quiet"]


@pytest.fixture(autouse=True)
def _pinned_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 3's first three examples meet the seed bug (its first alone does not).
    monkeypatch.setattr(hypothesis.core, "global_force_seed", 3)


def _fuzz(target: list[str], examples: int, out: Path) -> tuple[int, list[str]]:
    code = main(["fuzz", *target, *_ONLY_CHAT, "--max-examples", str(examples), "--out", str(out)])
    return code, sorted(p.parent.name for p in out.glob("*/repro.json"))


def test_the_embedded_server_replays_failures_across_ports(tmp_path: Path) -> None:
    embedded = ["--serve", "vllm-kimi-k2"]
    # With nothing saved, one example finds nothing.
    assert _fuzz(embedded, 1, tmp_path / "fresh") == (0, [])
    code, found = _fuzz(embedded, 3, tmp_path / "first")
    assert code == 1 and found, "seed 3 should meet the seed bug in three examples"
    # Each run starts the embedded server on a new port: the saved failure replays all the same.
    assert _fuzz(embedded, 1, tmp_path / "again") == (1, found)
    # Another serve profile is another target: nothing of this one's replays there.
    assert _fuzz(["--serve", "vllm-kimi-k2-fixed"], 1, tmp_path / "other") == (0, [])


def test_the_minimal_failure_survives_the_passes_after_it(tmp_path: Path) -> None:
    """The pass after the one that found a failure no longer fails on it, and Hypothesis deletes
    a saved example that replays without failing: the minimal one must outlive that, so the
    next run replays it as it is instead of shrinking a bigger one again."""
    with serve_in_thread("vllm-kimi-k2") as url:
        target = ["--base-url", url]
        code, found = _fuzz(target, 3, tmp_path / "first")
        assert code == 1 and found
        assert _fuzz(target, 1, tmp_path / "again") == (1, found)
    examples = json.loads((tmp_path / "again" / "summary.json").read_text())["examples"]
    # The saved minimal example, then one generated example in each of the two passes.
    assert examples["chat/no-stream"] <= 3, examples
