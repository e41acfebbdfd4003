"""Middleman mode finds id faults planted in a proxy, through the normal engine, with exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import fuzz_through

# fault -> (where it shows quickest, the signature it must be found under)
CASES = {
    "rewrite_ids": (["--api", "chat", "--no-stream"], "id_rewritten"),
    "collapse_ids": (["--api", "responses", "--stream"], "id_collapsed"),
}


@pytest.mark.parametrize("fault", list(CASES))
def test_planted_fault_is_found(fault: str, tmp_path: Path) -> None:
    args, kind = CASES[fault]
    run = fuzz_through(
        fault, tmp_path / "out", *args, "--max-examples", "25", "--oracles", "proxy_fidelity"
    )
    assert run.code == 1, run.output
    assert f"proxy_fidelity:{kind}" in run.signatures
