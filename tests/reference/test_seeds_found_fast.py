"""Every seed profile's bug is found within 50 examples on each of seeds 1-5, in the mode its
row names (issue 41 item 11; ``bench/seeds_found.py`` prints the figures). A run's openings
(each skeleton's plainest case, ``strategies.openings``) make it so whatever the seed; a few
seconds for the whole table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentfuzz.reference import serve_in_thread

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from seeds_found import ROWS, examples_to_find

SEEDS = (1, 2, 3, 4, 5)
MOST = 50


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in ROWS])
def test_each_seed_bug_is_found_within_50_examples_on_every_seed(
    row: tuple[str, str, bool, str],
) -> None:
    with serve_in_thread(row[0]) as url:
        counts = {seed: examples_to_find(url, row, seed, MOST) for seed in SEEDS}  # type: ignore[arg-type]
    assert all(n is not None and n <= MOST for n in counts.values()), counts
