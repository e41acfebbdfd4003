"""Middleman mode finds faults planted in a proxy that lose, rename or inject history: exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import fuzz_through

# fault -> (where it shows quickest, the signature it must be found under)
CASES = {
    "drop_result": (["--api", "responses", "--no-stream"], "result_lost"),
    # Seed 1: one whose 100 examples send a request the rename shows on (of seeds 1, 2, 3, 5
    # and 11, all but 5 and 11 do since the openings and the puppet's strategies moved the draws).
    "rename_tool": (["--api", "chat", "--stream", "--seed", "1"], "tool_renamed"),
    # Cached from an earlier request: every example is a conversation of its own.
    "inject_cached_call": (["--api", "chat", "--no-stream"], "injected"),
}


@pytest.mark.parametrize("fault", list(CASES))
def test_planted_fault_is_found(fault: str, tmp_path: Path) -> None:
    args, kind = CASES[fault]
    run = fuzz_through(
        fault, tmp_path / "out", *args, "--max-examples", "100", "--oracles", "proxy_fidelity"
    )
    assert run.code == 1, run.output
    assert f"proxy_fidelity:{kind}" in run.signatures
