"""``agentfuzz_campaign`` after a green recording: the campaign replays offline, no shrink.yaml."""

from __future__ import annotations

import pytest

GREEN = """
def test_green(agentfuzz_campaign):
    report = agentfuzz_campaign(seed=6, max_examples=3)
    assert not report.findings
"""


def test_a_green_recording_replays_offline(pytester: pytest.Pytester, fixed_url: str) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_green=GREEN)
    live = ["--agentfuzz-base-url", fixed_url, "--agentfuzz-record-mode", "all"]
    pytester.runpytest_subprocess(*live).assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_green" / "test_green"
    assert sorted(p.name for p in folder.glob("*.yaml")) == ["synthetic-chat-no-stream.yaml"]
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
