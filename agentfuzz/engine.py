"""The fuzz loop: a Hypothesis property per api/stream mode, distinct findings, shrinking, trials.

Each example is one request. Every violation an example shows is offered to the ``FindingStore``,
which writes a repro bundle the first time a distinct failure (oracle + signature) is seen and
rewrites it whenever a smaller example fails the same way. The property then raises an exception
whose *class* is unique to the first violation's key, so Hypothesis treats each distinct failure
as its own bug and shrinks each one separately (``report_multiple_bugs``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky
from hypothesis.strategies import SearchStrategy

from agentfuzz import oracles
from agentfuzz.findings import Finding, FindingStore, Report, Status, TurnTable
from agentfuzz.history import Api, Case
from agentfuzz.observation import Observation, Violation
from agentfuzz.plan import Plan
from agentfuzz.profiles import Profile
from agentfuzz.reduce import reduce_case
from agentfuzz.replay import Recorded, write_cassette
from agentfuzz.session import Turn, run_session
from agentfuzz.strategies import cases, plans
from agentfuzz.target import BackendLog, Target
from agentfuzz.transport.cassette import NotInCassette
from agentfuzz.transport.live import TargetUnreachable
from agentfuzz.trials import MEASURE_TRIES, fails_within, measure, rate, tries_for

__all__ = [
    "ALL_MODES",
    "Finding",
    "FindingStore",
    "FuzzConfig",
    "Kind",
    "Progress",
    "Report",
    "Status",
    "Target",
    "TurnTable",
    "run",
]

Mode = tuple[Api, bool]
ALL_MODES: tuple[Mode, ...] = (
    ("chat", False),
    ("chat", True),
    ("responses", False),
    ("responses", True),
)
# What an example is: one generated request, or a whole session driven by the server's answers.
Kind = Literal["synthetic", "session"]


def _label(mode: Mode) -> str:
    """How a mode is named in progress and in the summary: ``chat/stream``."""
    api, stream = mode
    return f"{api}/{'stream' if stream else 'no-stream'}"


@dataclass(frozen=True)
class FuzzConfig:
    """What one ``agentfuzz fuzz`` run does."""

    base_url: str
    model: str
    profile: Profile
    out: Path
    modes: tuple[Mode, ...] = ALL_MODES
    kinds: tuple[Kind, ...] = ("synthetic",)
    api_key: str | None = None
    max_examples: int = 100
    seed: int | None = None
    # Tries per judgement: a number, or "auto" to measure each failure's rate and derive it.
    trials: int | Literal["auto"] = 1
    only: Collection[str] | None = None
    skip: Collection[str] = ()
    timeout: float = 60.0
    database: Path | None = Path(".agentfuzz/examples")
    # Write every example (one request) or session (its requests) as a cassette here.
    record: Path | None = None
    # Run the campaign through cassettes in this folder, under a vcrpy record mode.
    cassette: Path | None = None
    record_mode: str = "once"
    # Seconds the run may take: past them it stops at its next example or shrink step.
    max_time: float | None = None
    # Proxy mode: the log of the backend behind the proxy at base_url (proxy_fidelity reads it).
    backend: BackendLog | None = None
    # Send every request a second time with ``stream`` flipped, for stream_divergence (2x cost).
    differential: bool = False


class _Failure(AssertionError):
    """Base of the per-key failure classes Hypothesis sees."""

    violation: Violation


_FAILURE_CLASSES: dict[tuple[str, str], type[_Failure]] = {}
# Shards of one --workers campaign run as threads: one class per key, whichever thread asks.
_CLASSES_LOCK = threading.Lock()


def _failure_class(key: tuple[str, str]) -> type[_Failure]:
    # A distinct class per (oracle, signature) makes Hypothesis treat each as a distinct bug.
    with _CLASSES_LOCK:
        if key not in _FAILURE_CLASSES:
            tag = hashlib.sha1("\0".join(key).encode()).hexdigest()[:8]
            _FAILURE_CLASSES[key] = type(f"{key[0]}_{tag}", (_Failure,), {})
        return _FAILURE_CLASSES[key]


class _StopRun(BaseException):
    """Raised through Hypothesis (which only catches Exception) when the target went away."""


class _Diverged(BaseException):
    """Raised through Hypothesis when a replayed campaign asks for what its cassette lacks."""


Progress = Callable[[Status], None]


class _OutOfTime(BaseException):
    """Raised through Hypothesis when ``--max-time`` has passed."""


class _Meter:
    """Counts examples over the whole run, hands the progress callback a ``Status``, and ends
    the run when asked to stop or out of time."""

    def __init__(
        self,
        store: FindingStore,
        progress: Progress,
        stop: Callable[[], bool] = lambda: False,
        deadline: float | None = None,
    ) -> None:
        self.store, self.progress, self.stop, self.deadline = store, progress, stop, deadline
        self.examples = 0
        # Examples per mode, counted as they run: a run cut short still reports them.
        self.by_phase: dict[str, int] = {}

    def example(self, phase: str) -> None:
        self._halt()
        self.examples += 1
        self.by_phase[phase] = self.by_phase.get(phase, 0) + 1
        self.progress(self.store.status(phase, self.examples))

    def step(self, phase: str) -> None:
        """A request that is not an example: a shrink or confirmation try."""
        self._halt()
        self.progress(self.store.status(phase, self.examples))

    def _halt(self) -> None:
        if self.stop():
            # As if Ctrl-C reached this thread: the run ends and reports what it found.
            raise KeyboardInterrupt
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _OutOfTime


MAX_PASSES = 8


def _fuzz_mode(
    config: FuzzConfig,
    store: FindingStore,
    label: str,
    strategy: SearchStrategy[Any],
    judge: Callable[[Any], list[Violation]],
    db_key: str,
    meter: _Meter,
    on_pass: Callable[[], None] = lambda: None,
) -> None:
    """Fuzz one api/stream mode with ``strategy``; ``meter`` counts its examples as ``label``.

    Hypothesis stops generating soon after its first failures, and only the first failure an
    example shows can steer its shrinker. So the mode runs in passes: each pass fails only on
    failures no earlier pass has shrunk, and passes go on while they find new ones. The last
    pass finds nothing new, so it has explored ``max_examples`` examples in full, and it never
    shrinks: what it measures (the session turn table) is an unbiased sample.
    """
    shrunk: set[tuple[str, str]] = set()
    raised: set[tuple[str, str]] = set()

    def check(example: Any) -> None:
        meter.example(label)
        fresh = [v for v in judge(example) if v.key not in shrunk]
        if fresh:
            first = fresh[0]
            raised.add(first.key)
            failure = _failure_class(first.key)(f"{first.oracle}: {first.message}")
            failure.violation = first
            raise failure

    for number in range(MAX_PASSES):
        before = len(raised)
        on_pass()
        seed = None if config.seed is None else config.seed + number
        _hypothesis_pass(config, strategy, check, seed, db_key)
        shrunk |= raised
        if len(raised) == before:
            break


def _hypothesis_pass(
    config: FuzzConfig,
    strategy: SearchStrategy[Any],
    check: Callable[[Any], None],
    seed: int | None,
    db_key: str,
) -> None:
    db = None
    if config.database is not None:
        db = DirectoryBasedExampleDatabase(str(config.database))
    prop = settings(
        max_examples=config.max_examples,
        deadline=None,
        database=db,
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )(given(strategy)(check))
    if seed is not None:
        prop = hypothesis_seed(seed)(prop)
    # One example database key per target and mode, so saved failures replay where they failed.
    prop._hypothesis_internal_database_key = hashlib.sha1(db_key.encode()).digest()  # type: ignore[attr-defined]
    # The failures themselves are already in the store; what Hypothesis raises at the end
    # only confirms them (or says one would not reproduce: the trials measure that).
    with contextlib.suppress(AssertionError, ExceptionGroup, Flaky):
        prop()


def _db_key(config: FuzzConfig, target: Target, mode: Mode, kind: Kind) -> str:
    api, stream = mode
    key = f"{target.base_url}|{target.model}|{config.profile.name}|{api}|{stream}"
    return key if kind == "synthetic" else f"{key}|{kind}"


def _synthetic(
    config: FuzzConfig, target: Target, store: FindingStore, mode: Mode, meter: _Meter
) -> None:
    api, stream = mode
    _fuzz_mode(
        config,
        store,
        _label(mode),
        cases(config.profile, api, stream),
        _tried(config, target, store, lambda case: _judge(config, target, store, case)),
        _db_key(config, target, mode, "synthetic"),
        meter,
    )


def _sessions(
    config: FuzzConfig,
    target: Target,
    store: FindingStore,
    mode: Mode,
    meter: _Meter,
    table: TurnTable,
) -> None:
    """Fuzz one starting mode with whole sessions; add the last pass's turns to ``table``."""
    api, stream = mode
    tally: TurnTable = {}

    def fresh_pass() -> None:
        tally.clear()

    def judge(plan: Plan) -> list[Violation]:
        return _run_plan(config, target, store, plan, tally)

    _fuzz_mode(
        config,
        store,
        f"session {_label(mode)}",
        plans(config.profile, api, stream, config.modes),
        _tried(config, target, store, judge),
        _db_key(config, target, mode, "session"),
        meter,
        fresh_pass,
    )
    for number, (reached, failed) in tally.items():
        before = table.get(number, (0, 0))
        table[number] = (before[0] + reached, before[1] + failed)


def _run_plan(
    config: FuzzConfig, target: Target, store: FindingStore, plan: Plan, tally: TurnTable
) -> list[Violation]:
    """Run one session; offer each turn's violations as they appear, with the transcript."""
    turns: list[Turn] = []
    found: list[Violation] = []

    def send(case: Case) -> Observation:
        return _observe(target, case)

    def check(case: Case, obs: Observation) -> list[Violation]:
        return oracles.check(case, obs, only=config.only, skip=config.skip)

    recorded: list[Recorded] = []

    def record(turn: Turn) -> None:
        turns.append(turn)
        server_side = _server_side(config, turn.violations)
        reached, failed = tally.get(turn.number, (0, 0))
        tally[turn.number] = (reached + 1, failed + bool(server_side))
        interaction = target.last_interaction
        for v in server_side:
            store.offer(v, turn.case, turn.observation, tuple(turns), interaction)
        found.extend(server_side)
        if interaction is not None:
            recorded.append(Recorded(interaction, turn.case, turn.violations))

    try:
        run_session(plan, send, check, record)
    finally:
        # Even a session the target died in is kept, up to its last answer.
        _record(config, target, "session", recorded)
    return found


def _judge(config: FuzzConfig, target: Target, store: FindingStore, case: Case) -> list[Violation]:
    """Send ``case`` once, offer every server-side violation to the store, and return them.

    The cassette keeps every verdict, the model's own included, so a replay judges alike.
    """
    obs = _observe(target, case)
    found = oracles.check(case, obs, only=config.only, skip=config.skip)
    interaction = target.last_interaction
    server_side = _server_side(config, found)
    for v in server_side:
        store.offer(v, case, obs, interaction=interaction)
    if interaction is not None:
        _record(config, target, "synthetic", [Recorded(interaction, case, tuple(found))])
    return server_side


def _server_side(config: FuzzConfig, found: Sequence[Violation]) -> list[Violation]:
    """``found`` without what the profile says this target's model produces on its own."""
    prefixes = config.profile.model_signatures
    return [v for v in found if not (prefixes and v.signature.startswith(prefixes))]


def _observe(target: Target, case: Case) -> Observation:
    try:
        return target.observe(case)
    except TargetUnreachable as exc:
        raise _StopRun(str(exc)) from None
    except NotInCassette as exc:
        raise _Diverged(str(exc)) from None


def _record(config: FuzzConfig, target: Target, kind: Kind, recorded: list[Recorded]) -> None:
    """With ``--record``, write one example's or session's exchanges as one cassette."""
    if config.record is None or not recorded:
        return
    first = recorded[0].case
    digest = hashlib.sha1()
    for item in recorded:
        body = item.interaction[0].body or b""
        digest.update(body.encode() if isinstance(body, str) else body)
    mode = f"{first.api}-{'stream' if first.stream else 'no-stream'}"
    about = {
        "target": target.base_url,
        "model": target.model,
        "profile": config.profile.name,
        "kind": kind,
        "api": first.api,
        "stream": first.stream,
    }
    path = config.record / f"{kind}-{mode}-{digest.hexdigest()[:12]}.yaml"
    write_cassette(path, recorded, about)


def _shows(key: tuple[str, str], violations: list[Violation]) -> bool:
    return any(v.key == key for v in violations)


def _tries(config: FuzzConfig, finding: Finding | None = None) -> int:
    """Tries per judgement: ``--trials K``, or under ``auto`` what the rate measured needs."""
    if config.trials != "auto":
        return config.trials
    return finding.tries if finding is not None else 1


def _tried(
    config: FuzzConfig,
    target: Target,
    store: FindingStore,
    judge: Callable[[Any], list[Violation]],
) -> Callable[[Any], list[Violation]]:
    """``judge`` trying an example up to K times, stopping at the first failure; under
    ``--trials auto`` each new failure's rate is measured first, and K follows the worst."""

    def tried(example: Any) -> list[Violation]:
        tries = max((_tries(config, f) for f in store.by_key.values()), default=_tries(config))
        for _ in range(tries):
            found = judge(example)
            if found:
                if config.trials == "auto":
                    _measure_new(config, target, store, found)
                return found
        return []

    return tried


def _measure_new(
    config: FuzzConfig, target: Target, store: FindingStore, found: list[Violation]
) -> None:
    for v in found:
        finding = store.by_key.get(v.key)
        if finding is None or finding.measured:
            continue
        finding.measured = True
        attempt = functools.partial(_fires, config, target, store, v.key, finding.case)
        hits = measure(MEASURE_TRIES, attempt)
        # A failure never seen again is not worth K tries on every later example: it is
        # reported as not reproduced, and the run goes on at its pace.
        store.by_key[v.key].tries = tries_for(hits / MEASURE_TRIES) if hits else 1


def _fires(
    config: FuzzConfig, target: Target, store: FindingStore, key: tuple[str, str], case: Case
) -> bool:
    return _shows(key, _judge(config, target, store, case))


def _reduce(
    config: FuzzConfig, target: Target, store: FindingStore, finding: Finding, meter: _Meter
) -> None:
    key, tries = finding.violation.key, _tries(config, finding)

    def fails(case: Case) -> bool:
        meter.step("shrink")
        return fails_within(tries, functools.partial(_fires, config, target, store, key, case))

    reduce_case(finding.case, fails)


def _trials(
    config: FuzzConfig, target: Target, store: FindingStore, finding: Finding, meter: _Meter
) -> None:
    """Measure the final repro's rate: over ``MEASURE_TRIES`` tries (or K, if more), and over
    ``RATE_TRIES`` when it is neither 0 nor 1, so the rate a flaky repro states can be quoted."""
    key, case = finding.violation.key, finding.case
    meter.step("confirm")
    attempt = functools.partial(_fires, config, target, store, key, case)
    hits, tries = rate(attempt, max(MEASURE_TRIES, _tries(config, finding)))
    finding.reproduced = f"{hits}/{tries}"
    finding.flaky = 0 < hits < tries


@contextlib.contextmanager
def _same_questions() -> Iterator[None]:
    """Make generation a function of the seed alone while a campaign plays from cassettes.

    Hypothesis mixes into its draws constants it finds in the "local" modules already imported
    (an editable install of agentfuzz counts), so a replay that never imports the reference
    server would ask other questions than the live run that recorded it. There is no public
    switch: this swaps the private collector for an empty one, and is a no-op if it is gone.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without local constants
        yield
        return
    collector = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if collector is None or cache is None:  # pragma: no cover
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    # Cached draws may already hold local constants: start from an empty cache of that kind.
    providers.CONSTANTS_CACHE = type(cache)(1024)
    try:
        yield
    finally:
        providers._get_local_constants = collector
        providers.CONSTANTS_CACHE = cache


def _slug(mode: Mode) -> str:
    api, stream = mode
    return f"{api}-{'stream' if stream else 'no-stream'}"


def _tape(config: FuzzConfig, target: Target, part: str) -> contextlib.AbstractContextManager[None]:
    """The cassette one part of a campaign plays from or records into (none without --cassette)."""
    if config.cassette is None:
        return contextlib.nullcontext()
    about = {
        "target": target.base_url,
        "model": target.model,
        "profile": config.profile.name,
        "seed": config.seed,
        "part": part,
    }
    return target.cassette(config.cassette / f"{part}.yaml", about)


def _campaign(
    config: FuzzConfig, target: Target, store: FindingStore, report: Report, meter: _Meter
) -> None:
    """Fuzz every mode and kind, then shrink and re-run each finding, each part on its tape."""
    for mode in config.modes:
        for kind in config.kinds:  # in the order given: shards start on different kinds
            with _tape(config, target, f"{kind}-{_slug(mode)}"):
                if kind == "synthetic":
                    _synthetic(config, target, store, mode, meter)
                else:
                    _sessions(config, target, store, mode, meter, report.turns)
    with _tape(config, target, "shrink"):
        for key in list(store.by_key):
            _reduce(config, target, store, store.by_key[key], meter)
        for finding in store.by_key.values():
            _trials(config, target, store, finding, meter)
            finding.bundle = store.write(finding)


def run(
    config: FuzzConfig,
    progress: Progress = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    """Fuzz every configured mode; return the report. Bundles are on disk as findings appear.

    ``progress`` gets a ``Status`` after every example and shrink step; once ``stop()`` is true,
    the run ends at its next example as if interrupted (for runs in threads, which Ctrl-C misses).
    """
    started = time.monotonic()
    if config.cassette is not None:
        # A campaign replays only if it asks the same questions: no saved examples, a fixed seed.
        config = dataclasses.replace(config, database=None, seed=config.seed or 0)
    mode_of_tapes = None if config.cassette is None else config.record_mode
    target = Target(
        config.base_url,
        config.model,
        config.api_key,
        config.timeout,
        mode_of_tapes,
        config.profile.knob_defaults,
        config.backend,
        config.differential,
    )

    store = FindingStore(config.out)
    report = Report()
    deadline = None if config.max_time is None else started + config.max_time
    meter = _Meter(store, progress, stop, deadline)
    steady = _same_questions() if config.cassette is not None else contextlib.nullcontext()
    try:
        with steady:
            _campaign(config, target, store, report, meter)
    except _Diverged as diverged:
        # Findings so far are on disk; the replay itself cannot go on.
        target.close()
        raise NotInCassette(str(diverged)) from None
    except _StopRun as stop:
        if target.last_answered is None:
            raise TargetUnreachable(str(stop)) from None
        report.stopped_answering = True
        case, obs = target.last_answered
        crash = Violation(
            "error",
            "the server stopped answering after this request",
            evidence=str(stop),
            signature="error:stopped_answering",
        )
        store.offer(crash, case, obs)
    except KeyboardInterrupt:
        report.interrupted = True
    except _OutOfTime:
        report.out_of_time = True
    finally:
        report.examples = dict(meter.by_phase)
        report.calls = target.calls
        if target.answered and target.not_served == target.answered:
            report.not_served = target.last_not_served.strip()
        target.close()
    report.findings = sorted(store.by_key.values(), key=lambda f: f.violation.key)
    report.elapsed = time.monotonic() - started
    return report
