"""``fuzz --differential`` against the fixed reference server: many greedy examples, both apis,
synthetic and session, and no finding at all (``stream_divergence`` included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import fuzz


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_fixed_reference_server_shows_no_divergence(
    tmp_path: Path, greedy: Path, api: str
) -> None:
    out = tmp_path / "out"
    code, output = fuzz(
        "--serve", "fixed", "--api", api, "--differential", "--profile", str(greedy),
        "--mode", "both", "--max-examples", "40", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    # Every example was sent twice: the twin costs one request each.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"] >= 2 * sum(summary["examples"].values())
