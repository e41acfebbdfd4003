"""``agentfuzz reduce``: cut a failing captured request or session to the smallest request that
still fails, with a rate a maintainer can quote.

The input (a repro.json, a request body, a bare messages or input array, or a JSONL session) is
imported into cases; the failure is first confirmed on the target (the last failing request of a
session is the one reduced), then ``reduce.reduce_case`` cuts it down while the same oracle keeps
firing. Against a stochastic target every candidate is judged "fails in at least one of K tries"
(``trials.py``); the final rate rests on at least 10 tries, 100 when it is neither 0 nor 1.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentfuzz import oracles
from agentfuzz.dialects import build_request
from agentfuzz.history import Case
from agentfuzz.observation import Observation, Violation
from agentfuzz.reduction import reduce_case
from agentfuzz.repro import Repro, observed_summary, write_bundle
from agentfuzz.target import Target
from agentfuzz.trials import MEASURE_TRIES, fails_within, measure, rate, tries_for

__all__ = ["NothingToReduce", "Reduction", "confirm", "reduce_input", "write_reduction"]


class NothingToReduce(Exception):
    """No request of the input fails on the target; ``str()`` says so in one line."""


@dataclass
class Reduction:
    """What ``reduce_input`` did: the confirmed failure, the reduced case and how it was reached."""

    source: int
    original: Case
    reduced: Case
    violation: Violation
    observation: Observation
    tries: int
    rate: tuple[int, int] = (0, 0)
    calls: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)
    # Stopped (Ctrl-C, SIGTERM) while reducing: ``reduced`` is the smallest failure so far and
    # its rate was not measured.
    interrupted: bool = False


# A failing exchange as judged: the case sent, what came back (its recording with it), the
# violation.
_Fired = tuple[Case, Observation, Violation]


class _Judge:
    """Sends cases, says whether ``oracle`` fires, keeps the last exchange where it did."""

    def __init__(
        self, target: Target, oracle: str | None, prepare: Callable[[Case], Case] = lambda c: c
    ) -> None:
        self.target = target
        self.oracle = oracle
        self.prepare = prepare
        self.fired: _Fired | None = None

    def fires(self, case: Case) -> bool:
        case = self.prepare(case)
        obs = self.target.observe(case)
        found = oracles.check(case, obs, only=None if self.oracle is None else [self.oracle])
        if found:
            self.fired = (case, obs, found[0])
        return bool(found)


def _wire_items(case: Case) -> int:
    _, body = build_request(case, "m")
    items = body.get("messages", body.get("input"))
    return len(items) if isinstance(items, list) else 0


def confirm(
    target: Target,
    cases: list[Case],
    oracle: str | None,
    tries: int,
    prepare: Callable[[Case], Case] = lambda c: c,
) -> tuple[int, Violation]:
    """The position of the last case that fails (``oracle``, or any) within ``tries`` tries,
    and its violation. Raises ``NothingToReduce``."""
    number, fired = _confirmed(target, cases, oracle, tries, prepare)
    return number, fired[2]


def _confirmed(
    target: Target,
    cases: list[Case],
    oracle: str | None,
    tries: int,
    prepare: Callable[[Case], Case],
) -> tuple[int, _Fired]:
    judge = _Judge(target, oracle, prepare)
    # From the end: the first failure found is the last one, and earlier requests cost nothing.
    for number in reversed(range(len(cases))):
        judge.fired = None
        if fails_within(tries, functools.partial(judge.fires, cases[number])) and judge.fired:
            return number, judge.fired
    what = f"oracle {oracle}" if oracle else "any oracle"
    raise NothingToReduce(
        f"no request of the {len(cases)} given fails {what} in {tries} tries: nothing to reduce"
    )


def reduce_input(
    target: Target,
    cases: list[Case],
    oracle: str | None = None,
    trials: int | Literal["auto"] = 1,
    budget: int = 400,
    honour_seed: bool = False,
) -> Reduction:
    """Confirm, reduce and measure; the ``Reduction`` says what was done.

    With ``honour_seed`` every request goes out with seed 0 and temperature 0 (a server that
    honours them answers alike each time), whatever the candidate's own knobs.
    """
    prepare = _seeded if honour_seed else _as_is
    first = MEASURE_TRIES if trials == "auto" else trials
    source, confirmation = _confirmed(target, cases, oracle, first, prepare)
    violation = confirmation[2]
    original = cases[source]
    judge = _Judge(target, violation.oracle, prepare)
    tries = trials if trials != "auto" else _tries_for(judge, original)
    steps: list[dict[str, Any]] = []
    smallest: list[Any] = [original, confirmation]

    def fails(case: Case) -> bool:
        failed = fails_within(tries, lambda: judge.fires(case))
        size = {"size": case.history.size, "wire_items": _wire_items(case)}
        steps.append({"target_calls": target.calls, **size, "failed": failed})
        if failed:
            smallest[:] = [case, judge.fired]
        return failed

    try:
        reduced = reduce_case(original, fails, budget)
        during = judge.fired
        judge.fired = None
        hits, total = rate(functools.partial(judge.fires, reduced))
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the smallest request that failed so far is the result, unmeasured.
        return _reduction(source, original, smallest, tries, None, target.calls, steps, prepare)
    evidence = judge.fired or during
    if evidence is None:  # it never fired again: the confirmation is all the evidence there is
        judge.fires(original)
        evidence = judge.fired
    measured = (hits, total)
    return _reduction(
        source, original, [reduced, evidence], tries, measured, target.calls, steps, prepare
    )


def _reduction(
    source: int,
    original: Case,
    result: list[Any],
    tries: int,
    measured: tuple[int, int] | None,
    calls: int,
    steps: list[dict[str, Any]],
    prepare: Callable[[Case], Case],
) -> Reduction:
    reduced, evidence = result
    assert evidence is not None
    _, obs, found = evidence
    return Reduction(
        source=source,
        original=original,
        reduced=prepare(reduced),
        violation=found,
        observation=obs,
        tries=tries,
        rate=measured or (0, 0),
        calls=calls,
        steps=steps,
        interrupted=measured is None,
    )


def _tries_for(judge: _Judge, case: Case) -> int:
    return tries_for(measure(MEASURE_TRIES, lambda: judge.fires(case)) / MEASURE_TRIES)


def _as_is(case: Case) -> Case:
    return case


def _seeded(case: Case) -> Case:
    options = case.options.model_copy(update={"seed": 0, "temperature": 0.0})
    return case.model_copy(update={"options": options})


def write_reduction(out: Path, reduction: Reduction, source: str) -> Path:
    """Write the reduced repro as a full bundle plus ``reduction.json``; return the folder."""
    obs = reduction.observation
    hits, total = reduction.rate
    reproduced = "interrupted" if reduction.interrupted else f"{hits}/{total}"
    repro = Repro(
        url=obs.exchange.url,
        request=obs.exchange.request,
        case=reduction.reduced,
        violation=reduction.violation,
        observed=observed_summary(obs) | {"evidence": reduction.violation.evidence},
        reproduced=reproduced,
        observation=obs,
    )
    folder = write_bundle(out, repro)
    doc = {
        "input": source,
        "confirmed": {"request": reduction.source + 1, "oracle": reduction.violation.oracle},
        "tries_per_candidate": reduction.tries,
        "size": {
            "before": reduction.original.history.size,
            "after": reduction.reduced.history.size,
        },
        "wire_items": {
            "before": _wire_items(reduction.original),
            "after": _wire_items(reduction.reduced),
        },
        "reproduced": reproduced,
        "interrupted": reduction.interrupted,
        "target_calls": reduction.calls,
        "steps": reduction.steps,
    }
    (folder / "reduction.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return folder
