"""A bug of ours is never dropped by a halt, and a full disk halts the run at once (issue 41,
items 18 and 19).

A judge that raises fails every example: Hypothesis shrinks that error, the mode's shrink budget
runs out mid-shrink, and the ``_Spent`` halt that ends the pass once took the error with it: the
run ended as "nothing found" (``--timeout nan`` ran 47 requests and exited 0).
"""

from __future__ import annotations

import errno
from typing import Any

import pytest
from hypothesis import strategies as st

from agentfuzz.model.observation import Violation
from agentfuzz.runs.passes import DiskFull, fuzz_mode

# Examples whose shrinking takes far more calls than a budget of 2 x 3 allows.
LISTS = st.lists(st.integers(), min_size=20, max_size=40)


def _fuzz(judge: Any, max_examples: int = 3) -> None:
    fuzz_mode(
        LISTS,
        judge,
        on_example=lambda: None,
        on_shrink=lambda: None,
        on_failure=lambda: None,
        on_pass=lambda _: None,
        max_examples=max_examples,
        seed=0,
        database=None,
        db_key="bugs",
    )


def test_a_bug_of_ours_outranks_a_shrink_budget_spent_on_it() -> None:
    calls: list[object] = []

    def judge(example: object) -> list[Violation]:
        calls.append(example)
        raise ValueError("a bug of ours")

    with pytest.raises(ValueError, match="a bug of ours"):
        _fuzz(judge)
    # The budget did run out mid-shrink: the error came through the halt, not around it.
    assert len(calls) > 3


def test_a_full_disk_halts_the_pass_at_once_with_one_line() -> None:
    calls: list[object] = []

    def judge(example: object) -> list[Violation]:
        calls.append(example)
        raise OSError(errno.ENOSPC, "No space left on device", "out/x/repro.json")

    with pytest.raises(DiskFull, match=r"^disk full writing out/x/repro.json"):
        _fuzz(judge, max_examples=50)
    assert len(calls) == 1
