"""The fuzz loop: a Hypothesis property per api/stream mode, distinct findings, shrinking, trials.

Each example is one request (or one session). Every violation an example shows is offered to the
``FindingStore``, which writes a repro bundle the first time a distinct failure (oracle +
signature) is seen and rewrites it whenever a smaller example fails the same way. The property
then raises an exception whose *class* is unique to the first violation's key, so Hypothesis
treats each distinct failure as its own bug and shrinks each one separately (``passes.py``).

A run that must end early (out of time, stopped, the target gone) halts before its next request,
in any stage; the halt is never a failure Hypothesis keeps (``runs.campaign`` reports it).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from hypothesis.strategies import SearchStrategy

from agentfuzz.errors import NotInCassette, TargetUnreachable
from agentfuzz.judge.judge import Judge, Verdict, same_failure
from agentfuzz.judge.session import Turn, run_session
from agentfuzz.judge.trials import MEASURE_TRIES, tries_for
from agentfuzz.model.history import Case
from agentfuzz.model.modes import Kind, Mode, label, slug
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.model.plan import Plan
from agentfuzz.oracles import by_symptom
from agentfuzz.output.findings.finding import Finding
from agentfuzz.output.findings.report import Report, TurnTable
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.reduce.explain import explain, note_minted
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.request.surface import without
from agentfuzz.runs._openers import Opening
from agentfuzz.runs.config import FuzzConfig
from agentfuzz.runs.meter import Meter, Progress
from agentfuzz.runs.pace import Pace
from agentfuzz.runs.passes import (
    SHRINK_PER_EXAMPLE,
    Diverged,
    EnoughFailures,
    TargetGone,
    fuzz_mode,
)
from agentfuzz.runs.tally import Tally
from agentfuzz.runs.witness import Witness
from agentfuzz.strategies import sessions, synthetic
from agentfuzz.tape.codec import Recorded, record_example
from agentfuzz.wire.target import Target

__all__ = ["Engine", "Progress", "RunBroke", "now"]

# Calls agentfuzz's reduction of one finding may make at most (fewer under a small --max-examples).
REDUCE_BUDGET = 200

# The clock the deadline is read from (tests move it to stop a run inside a chosen stage).
_clock = time.monotonic


def now() -> float:
    """The engine's clock: what its meter's deadline is read from."""
    return _clock()


class Engine:
    """One campaign under way: its configuration, the target, what it found, its meter and its
    judge (every request the judge sends passes ``_observe``; every verdict it gives, ``_seen``)."""

    def __init__(
        self, config: FuzzConfig, target: Target, store: FindingStore, meter: Meter
    ) -> None:
        self.config, self.target, self.store, self.meter = config, target, store, meter
        self.report = Report()
        self.tally = Tally()
        self.witness = Witness()  # whether the target answers like an API (``witness``)
        self.pace = Pace(target.knob_defaults, config.timeout, self.report.notes)
        # The last Responses answer's id a session got: a later session may chain onto it.
        self._elsewhere: str | None = None
        # Per mode: (tool, call id) of calls the server minted, a few per tool (``explain``).
        self.minted: dict[str, list[tuple[str, str]]] = {}
        self.judge = Judge(
            self._observe,
            config.only,
            config.skip,
            config.differential,
            config.profile.quiet_signatures,
            seen=self._seen,
            markup=config.profile.markup,
        )

    def campaign(self) -> None:
        """Fuzz every mode and kind, then shrink and re-run each finding, each part on its tape."""
        parts = [(m, k) for m in self.config.modes for k in self.config.kinds]
        # In the order given: shards start on different modes and kinds.
        try:
            for number, (mode, kind) in enumerate(parts):
                cut = partial(setattr, self.report, "out_of_time", True)
                share = self.meter.share(len(parts) - number, bool(self.store.by_key), cut)
                tape = self._tape(f"{kind}-{slug(mode)}")
                with tape, share, self.witness.part():
                    (self._synthetic if kind == "synthetic" else self._sessions)(mode)
        except EnoughFailures:
            # --max-failures: no more fuzzing; what was found is shrunk and confirmed below.
            self.report.max_failures_reached = True
        self.report.not_served = self.witness.line(self.target.base_url)  # no API answered
        if not self.store.by_key:
            return
        with self._tape("shrink"):
            self.meter.enter("reduce", "shrink")
            for key in list(self.store.by_key):
                self._reduce(self.store.by_key[key])
                if by_symptom(key[1]):
                    self._split(key)
            for finding in list(self.store.by_key.values()):
                self._explain(finding)
                # On disk as it now stands, should the run stop while it is confirmed.
                finding.bundle = self.store.write(finding)
            self.meter.enter("confirm", "confirm")
            for finding in self.store.by_key.values():
                self._trials(finding)
                finding.bundle = self.store.write(finding)

    def _fuzz_mode(
        self,
        phase: str,
        strategy: SearchStrategy[Any],
        judge: Callable[[Any], list[Violation]],
        db_key: str,
        on_pass: Callable[[], None] = lambda: None,
        openers: Sequence[Opening] = (),
    ) -> None:
        """Fuzz one api/stream mode in passes (``passes.fuzz_mode``); the meter counts its
        examples as ``phase``."""
        meter, config = self.meter, self.config

        def new_pass(number: int) -> None:
            on_pass()
            meter.enter("generate" if number == 0 else "target", phase)

        fuzz_mode(
            strategy,
            judge,
            on_example=lambda: meter.example(phase),
            on_shrink=lambda: meter.shrink(phase),
            on_failure=lambda: meter.enter("shrink"),
            on_pass=new_pass,
            max_examples=config.max_examples,
            seed=config.seed,
            database=config.database,
            db_key=db_key,
            keep_database=config.seed_drawn,
            openers=openers,
        )

    def _db_key(self, mode: Mode, kind: Kind) -> str:
        """The example database key of one mode's failures: where they failed (the target and
        model, or the embedded server's profile, whose port is new each run), the fuzz profile
        and the mode, so the next run against the same target replays them first."""
        api, stream = mode
        target, profile = self.target, self.config.profile.name
        where = target.base_url if self.config.serve is None else f"serve:{self.config.serve}"
        key = f"{where}|{target.model}|{profile}|{api}|{stream}"
        return key if kind == "synthetic" else f"{key}|{kind}"

    def _synthetic(self, mode: Mode) -> None:
        config = self.config
        strategy, openers = synthetic(
            config.profile, *mode, config.modes, config.seeds, config.puppet, config.openings
        )
        judge = self._tried(self._judge)
        key = self._db_key(mode, "synthetic")
        self._fuzz_mode(label(mode), strategy, judge, key, openers=openers)

    def _sessions(self, mode: Mode) -> None:
        """Fuzz one starting mode with whole sessions; add the last pass's turns to the report."""
        api, stream = mode
        tally: TurnTable = {}
        try:
            self._fuzz_mode(
                f"session {label(mode)}",
                sessions(self.config.profile, api, stream, self.config.modes, self.config.puppet),
                self._tried(lambda plan: self._run_plan(plan, tally)),
                self._db_key(mode, "session"),
                tally.clear,
            )
        finally:
            # A part cut short by its share of --max-time still reports its turns.
            table = self.report.turns
            for number, (reached, failed) in tally.items():
                before = table.get(number, (0, 0))
                table[number] = (before[0] + reached, before[1] + failed)

    def _run_plan(self, plan: Plan, tally: TurnTable) -> list[Violation]:
        """Run one session; offer each turn's violations as they appear, with the transcript."""
        turns: list[Turn] = []
        found: list[Violation] = []
        recorded: list[Recorded] = []

        # A turn sent again without its refused fields is counted once: reached, and failed.
        reached_at: set[int] = set()
        failed_at: set[int] = set()

        def record(turn: Turn) -> None:
            turns.append(turn)
            server_side = self.judge.faults(turn.violations)
            number = turn.number
            first = number not in reached_at
            newly_failed = bool(server_side) and number not in failed_at
            reached_at.add(number)
            if newly_failed:
                failed_at.add(number)
            reached, failed = tally.get(number, (0, 0))
            tally[number] = (reached + first, failed + newly_failed)
            together = frozenset(v.key for v in server_side)
            for v in server_side:
                offer = partial(self.store.offer, v, turn.case, turn.observation, tuple(turns))
                self.witness.offer(turn.observation, partial(offer, together))
            found.extend(server_side)
            recorded.append(Recorded(turn.observation, turn.case, turn.violations))

        try:
            run_session(plan, self.judge.observe, self.judge.judged, record, self._elsewhere)
        finally:
            ids = [t.observation.response_id for t in turns if t.observation.response_id]
            self._elsewhere = ids[-1] if ids else self._elsewhere
            # Even a session the target died in, or the run stopped in, is kept so far.
            self._record("session", recorded)
        return found

    def _judge(self, case: Case) -> list[Violation]:
        """Send ``case`` once; its server-side violations (``_seen`` has offered them)."""
        return list(self.judge.verdict(case).faults)

    def _seen(self, verdict: Verdict) -> None:
        """Offer a one-request verdict's faults to the store and record its exchange.

        The cassette keeps every verdict, the model's own included, so a replay judges alike.
        """
        case, obs = verdict.case, verdict.observation
        together = frozenset(v.key for v in verdict.faults)
        for v in verdict.faults:
            self.witness.offer(obs, partial(self.store.offer, v, case, obs, together=together))
        self._record("synthetic", [Recorded(obs, case, verdict.violations)])

    def _observe(self, case: Case) -> Observation:
        obs = self._send(case)
        sent = self.target.last_answered  # the case as sent, defaults and all
        dimension = None if sent is None else self.tally.suspect(*sent)
        smaller = None if sent is None or dimension is None else without(sent[0], dimension)
        if dimension is not None and smaller is not None:
            # A refusal is the dimension's only if the same request without it is answered.
            self.tally.pin(dimension, self._send(smaller))
        note_minted(self.minted, case, obs)
        return obs

    def _send(self, case: Case) -> Observation:
        # Every request of every stage passes here: a stop takes effect before the next one.
        self.meter.halt()
        try:
            obs = self.target.observe(case)
        except TargetUnreachable as exc:
            raise TargetGone(str(exc)) from None
        except NotInCassette as exc:
            raise Diverged(str(exc)) from None
        assert self.target.last_answered is not None
        self.tally.count(*self.target.last_answered)  # the case as sent, defaults and all
        self.pace.hear(*self.target.last_answered)
        self.witness.hear(obs)
        failure = obs.exchange.failure
        if failure and not obs.exchange.slow and not self.target.alive():
            # It dropped this request's connection and takes no other: this request is the
            # one the server died on, not the next one sent.
            raise TargetGone(f"the connection dropped ({failure}), and no new one is accepted")
        return obs

    def _record(self, kind: Kind, recorded: list[Recorded]) -> None:
        """With ``--record``, write one example's or session's exchanges as one cassette."""
        if self.config.record is not None:
            about = {"target": self.target.base_url, "model": self.target.model}
            about |= {"profile": self.config.profile.name, "kind": kind}
            record_example(self.config.record, recorded, about)

    def _tries(self, finding: Finding | None = None) -> int:
        """Tries per judgement: ``--trials K``, or under ``auto`` what the rate measured needs."""
        if self.config.trials != "auto":
            return self.config.trials
        return finding.tries if finding is not None else 1

    def _tried(self, judge: Callable[[Any], list[Violation]]) -> Callable[[Any], list[Violation]]:
        """``judge`` trying an example up to K times, stopping at the first failure; under
        ``--trials auto`` each new failure's rate is measured first, and K follows the worst."""

        def tried(example: Any) -> list[Violation]:
            tries = max((self._tries(f) for f in self.store.by_key.values()), default=self._tries())
            for _ in range(tries):
                found = judge(example)
                if found:
                    if self.config.trials == "auto":
                        self._measure_new(found)
                    return found
            return []

        return tried

    def _measure_new(self, found: list[Violation]) -> None:
        stage = self.meter.stage
        for v in found:
            finding = self.store.by_key.get(v.key)
            if finding is None or finding.measured:
                continue
            finding.measured = True
            self.meter.enter("confirm")
            hits = self.judge.hits(same_failure(v.key), finding.case)
            # A failure never seen again is not worth K tries on every later example: it is
            # reported as not reproduced, and the run goes on at its pace.
            self.store.by_key[v.key].tries = tries_for(hits / MEASURE_TRIES) if hits else 1
        self.meter.enter(stage)

    def _split(self, key: tuple[str, str]) -> None:
        """Sign a reduced symptom (a bare 500, a dropped connection) by what its repro needs,
        then reduce each example of it that lacks some of that: another fault behind the same
        symptom becomes a finding of its own (``FindingStore.split``)."""
        self.store.split(key)
        while (alternate := self.store.next_alternate(key)) is not None:
            self._reduce(alternate)
            self.store.settle_alternate(key)

    def _reduce(self, finding: Finding) -> None:
        match, tries = same_failure(finding.matches), self._tries(finding)

        def fails(case: Case) -> bool:
            self.meter.step("shrink")
            return self.judge.still_fails(match, case, tries)

        # Bounded by --max-examples too: as many tries as Hypothesis's shrinker of a mode gets.
        budget = min(REDUCE_BUDGET, SHRINK_PER_EXAMPLE * self.config.max_examples)
        reduce_case(finding.case, fails, budget)

    def _explain(self, finding: Finding) -> None:
        """The reduced repro made valid where the failure allows, re-sent on the run's other
        modes, and given the ids this server minted when the failure fires with them
        (``explain``); from here on a smaller example no longer replaces it."""
        match, tries = same_failure(finding.matches), self._tries(finding)

        def fires(case: Case) -> Observation | None:
            self.meter.step("shrink")
            for _ in range(tries):
                verdict = self.judge.verdict(case)
                if any(match(v) for v in verdict.faults):
                    return verdict.observation
            return None

        done = explain(finding.case, fires, self.config.modes, self.minted)
        if done.observation is not None:
            finding.case, finding.observation = done.case, done.observation
        finding.needs, finding.reproduces_on = done.needs, done.reproduces_on
        finding.mechanism, finding.cleared_by = done.mechanism, done.cleared_by
        finding.settled = True
        # The symptoms the final request shows are gathered again as it is confirmed.
        finding.cofired = set()

    def _trials(self, finding: Finding) -> None:
        """Measure the final repro's rate: over ``MEASURE_TRIES`` tries (or K, if more), and
        over ``RATE_TRIES`` when neither 0 nor 1, so the rate a flaky repro states can be quoted."""
        self.meter.step("confirm")
        match, tries = same_failure(finding.matches), self._tries(finding)
        hits, tries = self.judge.rate(match, finding.case, max(MEASURE_TRIES, tries))
        finding.reproduced = f"{hits}/{tries}"
        finding.flaky = 0 < hits < tries

    def _tape(self, part: str) -> contextlib.AbstractContextManager[None]:
        """The cassette one part of a campaign plays from or records into (none without
        --cassette)."""
        config = self.config
        if config.cassette is None:
            return contextlib.nullcontext()
        about: dict[str, Any] = {"target": self.target.base_url, "model": self.target.model}
        about |= {"profile": config.profile.name, "seed": config.seed, "part": part}
        return self.target.cassette(config.cassette / f"{part}.yaml", about)


class RunBroke(Exception):
    """A bug of agentfuzz's ended the run; ``report`` holds what it had found by then (its
    ``error`` is this exception's one line, its ``traceback`` the cause's)."""

    def __init__(self, report: Report) -> None:
        super().__init__(report.error)
        self.report = report
