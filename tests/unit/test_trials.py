import itertools

import pytest

from agentfuzz.judge.trials import DETECTION, MAX_TRIES, fails_within, measure, tries_for


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_tries_are_the_fewest_that_detect_a_real_failure(rate: float) -> None:
    k = tries_for(rate)
    assert 1 - (1 - rate) ** k >= DETECTION or k == MAX_TRIES
    assert k == 1 or 1 - (1 - rate) ** (k - 1) < DETECTION


def test_certain_and_never_seen_failures() -> None:
    assert tries_for(1.0) == 1
    assert tries_for(0.0) == MAX_TRIES
    assert tries_for(0.3) == 10  # 1 - 0.7**10 = 0.972


def test_fails_within_stops_at_the_first_failure() -> None:
    outcomes = iter([False, False, True, True])
    calls = itertools.count()

    def attempt() -> bool:
        next(calls)
        return next(outcomes)

    assert fails_within(5, attempt)
    assert next(calls) == 3
    assert not fails_within(3, lambda: False)
    assert measure(4, iter([True, False, True, False]).__next__) == 2


def test_a_rate_neither_0_nor_1_is_measured_over_rate_tries() -> None:
    from agentfuzz.judge.trials import RATE_TRIES, rate

    assert rate(lambda: True) == (10, 10)
    assert rate(lambda: False) == (0, 10)
    flips = itertools.cycle([True, False, False])
    hits, tries = rate(lambda: next(flips))
    assert tries == RATE_TRIES and hits == 34
    assert rate(lambda: True, tries=150) == (150, 150)
