"""``agentfuzz reduce``: cut a failing captured request or session to the smallest request that
still fails, with a rate a maintainer can quote.

The input (a repro.json, a request body, a bare messages or input array, a JSONL session, a
``session.json`` or an agentfuzz cassette such as the proxy's ``session.yaml``) is imported into
cases; the failure is first confirmed on the target (the last failing request of a
session is the one reduced), then ``reduce.reduce_case`` cuts it down while the same oracle keeps
firing. Against a stochastic target every candidate is judged "fails in at least one of K tries"
(``trials.py``); the final rate rests on at least 10 tries, 100 when it is neither 0 nor 1.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentfuzz.errors import NothingToReduce
from agentfuzz.judge.judge import Judge, Verdict, any_of
from agentfuzz.judge.trials import MEASURE_TRIES, tries_for
from agentfuzz.model.files import write_atomically
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.output.findings.bundle import Repro, observed_summary, write_bundle
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.reduce.validity import repair
from agentfuzz.runs.config import new_run_id, version
from agentfuzz.tape.codec import read_turns
from agentfuzz.tape.replay import replay_cassette
from agentfuzz.wire.dialects import InputError, parse_text
from agentfuzz.wire.target import Target, wire_items

__all__ = [
    "InputError",
    "NothingToReduce",
    "Reduction",
    "captured_cases",
    "captured_folder",
    "cassette_cases",
    "confirm",
    "found_by_after",
    "offline",
    "reduce_input",
    "write_reduction",
]


def captured_cases(text: str) -> list[Case]:
    """The cases a captured input holds (see the module's first line for what it may be);
    ``InputError`` (one line) for anything else."""
    return parse_text(text)


def cassette_cases(path: Path) -> list[Case]:
    """The cases of an agentfuzz cassette (a proxy's ``session.yaml``, a bundle's or a
    campaign's), each with the provenance it was judged with: the session oracles judge them
    as they did. ``CassetteError`` (one line) for a file that is not one."""
    _, turns = read_turns(path)
    return [turn.case for turn in turns]


def captured_folder(folder: Path) -> list[Case]:
    """Every request captured under ``folder`` (``fuzz --seed-sessions``): the proxy's
    ``session.json`` and ``session.yaml`` (one of the two per session), bundles' ``repro.json``,
    request bodies and arrays (``.json``) and JSONL sessions (``.jsonl``), in path order.
    ``InputError`` (one line, naming the file) for one that cannot be read; a cassette that is
    not one raises ``CassetteError``."""
    cases: list[Case] = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        if path.suffix == ".yaml":
            if path.name == "session.yaml" and (path.parent / "session.json").is_file():
                continue  # the same session, read from its session.json
            if path.name != "session.yaml":
                continue  # a bundle's cassette holds its repro.json's request
            cases += cassette_cases(path)
        elif path.suffix in (".json", ".jsonl"):
            if path.name in ("summary.json", "reduction.json"):
                continue
            try:
                cases += captured_cases(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"{path}: cannot read: {exc}") from None
            except InputError as exc:
                raise InputError(f"{path}: {exc}") from None
    return cases


def found_by_after(text: str, command: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``found_by`` of a reduced bundle: the campaign that found the input (when it is a
    bundle's ``repro.json`` that says so; ``command: null`` for a capture no campaign found)
    and the ``reduce`` step that cut it down."""
    earlier: Any = None
    try:
        doc = json.loads(text)
    except ValueError:  # a JSONL session: not a bundle
        doc = None
    if isinstance(doc, dict):
        earlier = doc.get("found_by")
    base = dict(earlier) if isinstance(earlier, dict) else {"command": None}
    # A run of its own: its bundle never overwrites the campaign's it was cut from.
    step = {"command": command, "agentfuzz": version(), "from_run": base.get("run")}
    if config:
        step["config"] = config
    return base | {"run": new_run_id(), "reduce": step}


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
    # The API rules the reduced request still breaks because the failure needs them.
    needs: tuple[str, ...] = ()
    # Judged from a recording alone (``offline``): the failing turn as it was, not re-sent.
    offline: bool = False


def _judge(target: Target, oracle: str | None) -> Judge:
    """A judge of ``oracle`` alone (or of every oracle, when None)."""
    return Judge(target.observe, only=None if oracle is None else [oracle])


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
    return number, fired.faults[0]


def _confirmed(
    target: Target,
    cases: list[Case],
    oracle: str | None,
    tries: int,
    prepare: Callable[[Case], Case],
) -> tuple[int, Verdict]:
    judge = _judge(target, oracle)
    # From the end: the first failure found is the last one, and earlier requests cost nothing.
    for number in reversed(range(len(cases))):
        judge.fired = None
        if judge.still_fails(any_of(oracle), prepare(cases[number]), tries) and judge.fired:
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
    oracle = confirmation.faults[0].oracle
    original, match = cases[source], any_of(oracle)
    judge = _judge(target, oracle)
    if trials == "auto":
        trials = tries_for(judge.hits(match, prepare(original)) / MEASURE_TRIES)
    tries = trials
    steps: list[dict[str, Any]] = []
    smallest: list[Any] = [original, confirmation]

    def fails(case: Case) -> bool:
        failed = judge.still_fails(match, prepare(case), tries)
        size = {"size": case.history.size, "wire_items": wire_items(case)}
        steps.append({"target_calls": target.calls, **size, "failed": failed})
        if failed:
            smallest[:] = [case, judge.fired]
        return failed

    try:
        # Smallest first, then as valid a conversation as the failure allows (``validity``).
        reduced, needs = repair(reduce_case(original, fails, budget), fails)
        during = judge.fired
        judge.fired = None
        hits, total = judge.rate(match, prepare(reduced))
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the smallest request that failed so far is the result, unmeasured.
        return _reduction(source, original, smallest, tries, None, target.calls, steps, prepare)
    evidence = judge.fired or during or confirmation
    measured = (hits, total)
    done = _reduction(
        source, original, [reduced, evidence], tries, measured, target.calls, steps, prepare
    )
    return dataclasses.replace(done, needs=needs)


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
    assert isinstance(evidence, Verdict)
    return Reduction(
        source=source,
        original=original,
        reduced=prepare(reduced),
        violation=evidence.faults[0],
        observation=evidence.observation,
        tries=tries,
        rate=measured or (0, 0),
        calls=calls,
        steps=steps,
        interrupted=measured is None,
    )


def _as_is(case: Case) -> Case:
    return case


def _seeded(case: Case) -> Case:
    options = case.options.model_copy(update={"seed": 0, "temperature": 0.0})
    return case.model_copy(update={"options": options})


def offline(path: Path, oracle: str | None = None) -> Reduction:
    """The last turn of the cassette at ``path`` whose recorded answer still fails (``oracle``,
    or any), judged again offline: a session cut to the one request whose answer is the fault,
    when no server is at hand to cut it further. ``NothingToReduce`` when no turn fails;
    ``CassetteError`` (one line) for a file that is not a usable cassette."""
    replayed = replay_cassette(path, seed=None, recording=True)
    for number in reversed(range(len(replayed.turns))):
        turn = replayed.turns[number]
        hits = [v for v in turn.violations if oracle is None or v.oracle == oracle]
        if hits and turn.observation.exchange.status is not None and turn.case is not None:
            case = turn.case
            steps = [{"target_calls": 0, "size": case.history.size, "failed": True}]
            return Reduction(
                source=number,
                original=case,
                reduced=case,
                violation=hits[0],
                observation=turn.observation,
                tries=1,
                rate=(1, 1),
                steps=steps,
                offline=True,
            )
    what = f"oracle {oracle}" if oracle else "any oracle"
    raise NothingToReduce(
        f"no recorded answer of the {len(replayed.turns)} in {path.name} fails {what}"
    )


def write_reduction(
    out: Path, reduction: Reduction, source: str, found_by: dict[str, Any] | None = None
) -> Path:
    """Write the reduced repro as a full bundle plus ``reduction.json``; return the folder."""
    obs = reduction.observation
    hits, total = reduction.rate
    reproduced = "interrupted" if reduction.interrupted else f"{hits}/{total}"
    if reduction.offline:
        reproduced = "recorded: judged offline from the answer the client got"
    repro = Repro(
        url=obs.exchange.url,
        request=obs.exchange.request,
        case=reduction.reduced,
        violation=reduction.violation,
        observed=observed_summary(obs) | {"evidence": reduction.violation.evidence},
        reproduced=reproduced,
        observation=obs,
        found_by=found_by,
        needs=reduction.needs,
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
            "before": wire_items(reduction.original),
            "after": wire_items(reduction.reduced),
        },
        "reproduced": reproduced,
        "interrupted": reduction.interrupted,
        "offline": reduction.offline,
        "target_calls": reduction.calls,
        "steps": reduction.steps,
    }
    write_atomically(folder / "reduction.json", json.dumps(doc, indent=2) + "\n")
    return folder
