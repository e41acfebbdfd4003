"""``--workers auto``'s search: the knee of a throughput curve, read with few measurements."""

from __future__ import annotations

import pytest

from agentfuzz.knee import find_knee


@pytest.mark.parametrize("capacity", [1, 3, 12, 24, 40, 100, 200])
def test_the_knee_of_a_server_that_flattens_at_a_known_concurrency(capacity: int) -> None:
    asked: list[int] = []

    def measure(n: int) -> float:  # a server of 0.5 s answers, at most `capacity` at once
        asked.append(n)
        return min(n, capacity) / 0.5

    curve = find_knee(measure, top=256)
    assert capacity / 1.5 <= curve.knee <= capacity * 1.5, curve
    assert len(asked) == len(set(asked)) <= 14, asked
    assert curve.lines()[-1].startswith("  knee: ")


def test_a_server_that_never_flattens_gets_the_top() -> None:
    assert find_knee(lambda n: float(n), top=256).knee == 256
    assert find_knee(lambda n: float(n), top=48).knee == 48


def test_a_flat_server_gets_one() -> None:
    assert find_knee(lambda n: 7.0, top=256).knee == 1


def test_a_server_that_slows_past_its_knee_keeps_the_knee() -> None:
    # Throughput falls once the batch overflows (swapping, preemption): the knee is before it.
    curve = find_knee(lambda n: min(n, 16) - max(0, n - 16) / 4, top=256)
    assert 11 <= curve.knee <= 24, curve
