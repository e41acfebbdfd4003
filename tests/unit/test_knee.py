"""``--workers auto``'s search: the knee of a throughput curve, read with few measurements."""

from __future__ import annotations

import heapq
import random

import pytest

from agentfuzz.runs.knee import ROUNDS, find_knee, rate


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


def _closed_loop(n: int, capacity: int, seconds: float, window: float) -> list[list[float]]:
    """When each client's answers come, as a level counts them: ``n`` clients, each asking again
    the moment it is answered, a server working on ``capacity`` at once, first come first served,
    ``seconds`` each with a little jitter; cut where a level stops (past ``window``, every client
    with ``ROUNDS`` answers)."""
    free = [0.0] * capacity  # when each slot is next free
    asks = [(0.0, k) for k in range(n)]  # (when asked, client)
    heapq.heapify(asks)
    answered: list[list[float]] = [[] for _ in range(n)]
    jitter = random.Random(n)
    while asks:
        when, k = heapq.heappop(asks)
        start = max(when, heapq.heappop(free))
        done = start + seconds * jitter.uniform(0.99, 1.01)
        heapq.heappush(free, done)
        answered[k].append(done)
        if len(answered[k]) < ROUNDS + 3 or done < 2 * window:
            heapq.heappush(asks, (done, k))
    stop = max(window, max(sorted(t)[ROUNDS - 1] for t in answered))
    return [sorted(x for x in t if x <= stop) for t in answered]


@pytest.mark.parametrize("n", [1, 3, 6, 12, 48, 192])
def test_a_level_reads_the_serving_rate_not_the_queue(n: int) -> None:
    # Six at once, 0.3 s each: 20/s however many wait, and n/0.3 below six. A window far
    # shorter than the queue (192 waiting ~10 s) must still read 20/s, not more.
    got = rate(_closed_loop(n, 6, 0.3, window=2.0))
    assert got == pytest.approx(min(n, 6) / 0.3, rel=0.03)


def test_a_level_with_too_few_answers_reads_nothing_from_them() -> None:
    assert rate([]) == 0.0
    assert rate([[0.5], [0.5, 0.5]]) == 0.0
    assert rate([[0.5, 1.0, 1.5], [0.7]]) == pytest.approx(2.0)
