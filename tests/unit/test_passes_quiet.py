"""Nothing Hypothesis reports reaches the user: the run's summary says what was found."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.reporting import base_report

from agentfuzz.runs.passes import Interrupted, run_pass


def test_whatever_hypothesis_reports_during_a_pass_is_dropped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = [0]

    def check(n: int) -> None:
        calls[0] += 1
        # What Hypothesis says past its verbosity setting, e.g. its seed line on a Ctrl-C.
        base_report("You can reproduce this failure by adding @seed(1) to this test.")
        if calls[0] == 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        run_pass(st.integers(), check, max_examples=10, seed=None, database=None, db_key="k")
    seen = capsys.readouterr()
    assert "@seed(" not in seen.out + seen.err
