"""One campaign, whichever face runs it: ``agentfuzz fuzz``, ``agentfuzz.run()`` and the pytest
plugin's ``agentfuzz_campaign`` all come here, so one seed leaves the same findings on disk.

A campaign is the engine run once in this process (``run_unfolded``), or ``--workers`` shards of
it merged (``workers.run_sharded``). However it ends, what it found is settled the same way: a
bug of ours leaves its traceback in ``error.log`` beside the bundles, the findings are folded to
one per root cause (``findings.fold``, which rewrites the bundles on disk), and the folded
summary is written to ``summary.json``.

Before it runs, a campaign sets aside what an earlier run left in its ``--out``
(``findings.bundle.set_aside``): the bundles there are always the ones its ``summary.json``
lists, and the summary says where the earlier ones went. A full disk ends the run with one
line (``disk full …``), what was written before it kept.

A campaign through cassettes follows its tapes: one that only plays them back takes its target
and model from them (``replayed``), and record mode ``all`` forgets the old campaign's parts
first (``forget_campaign``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentfuzz.errors import NotInCassette, TargetUnreachable
from agentfuzz.judge.judge import oracle_names
from agentfuzz.model.files import disk_full, disk_full_line, write_atomically
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Violation
from agentfuzz.model.secrets import remember
from agentfuzz.model.summary import Summary
from agentfuzz.output.findings.bundle import set_aside
from agentfuzz.output.findings.fold import fold
from agentfuzz.output.findings.report import Report
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.runs import engine
from agentfuzz.runs.config import FuzzConfig, found_by
from agentfuzz.runs.engine import Engine, RunBroke
from agentfuzz.runs.meter import Meter, Progress
from agentfuzz.runs.passes import DiskFull, Diverged, OutOfTime, TargetGone
from agentfuzz.runs.reduce import captured_folder
from agentfuzz.runs.workers import run_sharded
from agentfuzz.tape.campaigns import (
    campaign_parts,
    forget_campaign,
    recorded_campaign,
    shard_tapes,
)
from agentfuzz.wire.target import Target

__all__ = [
    "NOWHERE",
    "CampaignReport",
    "RecordedTarget",
    "RunBroke",
    "recorded_workers",
    "replayed",
    "run",
    "run_campaign",
    "run_unfolded",
    "seed_sessions",
]

# Where a campaign that only plays its tapes back sends, when they do not name the target:
# a host nothing answers on, so that a request the tapes lack never reaches a server.
NOWHERE = "http://cassette.invalid/v1"


@dataclass
class CampaignReport(Report):
    """A campaign's report once settled: ``findings`` are its root causes, each bundle on disk
    listing the symptoms folded into it, and ``summary()`` is what ``summary.json`` holds."""

    folded: Summary | None = None

    def summary(self) -> Summary:
        return self.folded if self.folded is not None else super().summary()


def run(
    config: FuzzConfig,
    progress: Progress = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    """Run one campaign in this process; return its report, folded: one finding per root cause.

    ``progress`` gets a ``Status`` after every example and shrink step; once ``stop()`` is true,
    the run ends before its next request as if interrupted (for runs in threads, which Ctrl-C
    misses). However the run ends (done, out of time, stopped, the target gone), the bundles of
    what it found are on disk, folded, ``summary.json`` beside them, and the report says how it
    ended. A target never reached raises ``TargetUnreachable``, a cassette replay that cannot go
    on ``NotInCassette``, and a bug of ours ``RunBroke``, which carries the folded report all
    the same (the traceback is in ``error.log``).
    """
    _forget_old_tapes(config)
    previous = _begun(config)
    try:
        report = run_unfolded(config, progress, stop)
    except RunBroke as broke:
        broke.report = _settled(config, broke.report, previous)
        raise
    return _settled(config, report, previous)


def run_campaign(
    config: FuzzConfig,
    workers: int = 1,
    progress: Progress = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
) -> Summary:
    """Run the campaign, in this process or as ``workers`` shards, and return its folded
    summary, as ``summary.json`` holds it: whatever ended the campaign, a bug of ours included
    (its ``error``), what it found is in it. Raises what ``run`` raises, but ``RunBroke``."""
    if workers == 1:
        try:
            return run(config, progress, stop).summary()
        except RunBroke as broke:
            return broke.report.summary()
    _forget_old_tapes(config)
    previous = _begun(config)
    merged = run_sharded(config, workers, progress).model_copy(update={"set_aside": previous})
    return _written(config.out, _folded(merged))


def _begun(config: FuzzConfig) -> str | None:
    """What a campaign does before it sends anything: remember its secrets, so that none a
    server echoes is written (``model.secrets``), and set aside the bundles an earlier run left
    in its ``--out``. Where those went, if anywhere."""
    remember(config.api_key, config.headers)
    folder = set_aside(config.out)
    return None if folder is None else str(folder)


def run_unfolded(
    config: FuzzConfig,
    progress: Progress = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    """The engine run once in this process, as ``run`` runs it, but its findings as they were
    found, one per distinct failure, not yet folded, and nothing written beside the bundles:
    what each shard of a ``--workers`` campaign runs, its shards' findings folded once merged."""
    started = engine.now()
    config = _pairs_judged(config)
    if config.cassette is not None:
        # A campaign replays only if it asks the same questions: no saved examples, a fixed seed.
        config = config.model_copy(update={"database": None, "seed": config.seed or 0})
    mode_of_tapes = None if config.cassette is None else config.record_mode
    target = Target(
        config.base_url,
        config.model,
        config.api_key,
        config.timeout,
        mode_of_tapes,
        config.profile.knob_defaults,
        config.backend,
        headers=config.headers,
    )
    about = target.describe()
    store = FindingStore(config.out, found_by(config), about)
    deadline = None if config.max_time is None else started + config.max_time
    meter = Meter(store, progress, stop, deadline, engine.now, config.max_failures)
    fuzz = Engine(config, target, store, meter)
    fuzz.report.run = found_by(config) | {"target": about}
    broke = _ended(fuzz)
    report = fuzz.report
    report.findings = sorted(store.by_key.values(), key=lambda f: f.violation.key)
    report.elapsed = engine.now() - started
    if broke is not None:
        raise RunBroke(report) from broke
    return report


def _ended(fuzz: Engine) -> Exception | None:
    """Run the engine's campaign; however it ends, its report says how. A bug of ours is
    returned, for ``run_unfolded`` to raise with the report."""
    target, report = fuzz.target, fuzz.report
    try:
        fuzz.campaign()
    except Diverged as diverged:
        # Findings so far are on disk; the replay itself cannot go on.
        target.close()
        raise NotInCassette(str(diverged)) from None
    except TargetGone as gone:
        if target.last_answered is None:
            raise TargetUnreachable(str(gone)) from None
        report.stopped_answering = True
        case, obs = target.last_answered
        crash = Violation(
            "error",
            "the server stopped answering after this request",
            evidence=str(gone),
            signature="error:server_died",
        )
        fuzz.store.offer(crash, case, obs)
    except OutOfTime:
        report.out_of_time = True
    except DiskFull as full:
        report.error = str(full)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM in this thread, or stop() (Interrupted)
        report.interrupted = True
    except Exception as exc:  # a bug of ours: returned, with the report of what was found
        if disk_full(exc):  # not one: the machine's state, said in one line
            report.error = disk_full_line(exc)
            return None
        report.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        report.traceback = traceback.format_exc()
        return exc
    finally:
        report.examples = dict(fuzz.meter.by_phase)
        report.shrink_steps, report.reduce_steps = dict(fuzz.meter.shrinks), fuzz.meter.steps
        report.calls = target.calls
        report.latency, report.timeouts = fuzz.tally.latency, fuzz.tally.timeouts
        report.coverage = fuzz.tally.coverage
        if target.answered and target.not_served == target.answered:
            report.not_served = target.last_not_served.strip()
        target.close()
    return None


def _pairs_judged(config: FuzzConfig) -> FuzzConfig:
    """``config`` whose profile pairs requests only by relations an oracle of the run judges:
    a partner nobody reads would be a request for nothing (and its preparation a change to the
    case for nothing)."""
    judged = set(oracle_names() if config.only is None else config.only) - set(config.skip)
    kept = tuple(
        name
        for name in config.profile.relations
        if ("stream_divergence" if name == "stream" else "relation") in judged
    )
    if kept == config.profile.relations:
        return config
    profile = config.profile.model_copy(update={"relations": kept})
    return config.model_copy(update={"profile": profile})


def _settled(config: FuzzConfig, report: Report, previous: str | None) -> CampaignReport:
    """``report`` as the campaign leaves it on disk: a bug of ours' traceback in ``error.log``,
    the findings folded to one per root cause, ``summary.json`` written. Its ``findings`` are the
    root causes; its ``error`` stays the bug's one line, where the summary says where the
    traceback is. ``previous``: where an earlier run's bundles were set aside."""
    summary = report.summary().model_copy(update={"set_aside": previous})
    if report.error and report.traceback:
        log = config.out / "error.log"
        with contextlib.suppress(OSError):  # a full disk: the one line says what broke
            config.out.mkdir(parents=True, exist_ok=True)
            write_atomically(log, report.traceback)
            summary = summary.model_copy(update={"error": f"{report.error} (traceback in {log})"})
    done = _written(config.out, _folded(summary))
    causes = {row.bundle for row in done.findings}
    fields = {field.name: getattr(report, field.name) for field in dataclasses.fields(report)}
    fields["findings"] = [f for f in report.findings if str(f.bundle) in causes]
    return CampaignReport(**fields, folded=done)


def _folded(summary: Summary) -> Summary:
    """``fold(summary)``; on a full disk, ``summary`` as it is, its bundles as they were, and
    its ``error`` saying so."""
    try:
        return fold(summary)
    except OSError as exc:
        if not disk_full(exc):
            raise
        return summary.model_copy(update={"error": summary.error or disk_full_line(exc)})


def _written(out: Path, summary: Summary) -> Summary:
    """``summary``, once written to ``out/summary.json`` for machines, beside the bundles; on a
    full disk, unwritten, its ``error`` saying so."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / "summary.json", json.dumps(summary.dump(), indent=2) + "\n")
    except OSError as exc:
        if not disk_full(exc):
            raise
        return summary.model_copy(update={"error": summary.error or disk_full_line(exc)})
    return summary


def _forget_old_tapes(config: FuzzConfig) -> None:
    """Record mode ``all`` records the campaign anew: an old campaign's parts the new one never
    reaches (no findings, so no ``shrink.yaml``) must not linger and pass for its own."""
    if config.cassette is not None and config.record_mode == "all":
        forget_campaign(config.cassette)


@dataclass(frozen=True)
class RecordedTarget:
    """What a campaign's tapes say of the run that recorded them: the target (``NOWHERE`` when
    they do not say) and the model (None when they do not say)."""

    base_url: str
    model: str | None


def replayed(folder: Path, record_mode: str) -> RecordedTarget | None:
    """The target and model a campaign through the tapes in ``folder`` takes from them, when
    under ``record_mode`` it only plays them back (``none``, or ``once`` with a campaign there
    already): no server to start, nothing sent. None when it records, and so needs its target."""
    if record_mode not in ("none", "once"):
        return None
    about = recorded_campaign(folder)
    if about is None:
        return None
    target, model = about.get("target"), about.get("model")
    return RecordedTarget(
        target if isinstance(target, str) else NOWHERE, model if isinstance(model, str) else None
    )


def recorded_workers(folder: Path) -> int:
    """How many workers recorded the campaign in ``folder`` (0: none is there). Each shard plays
    its own tapes (``shard-K``), so a campaign plays back with as many workers as recorded it."""
    if not folder.is_dir():
        return 0
    return len(shard_tapes(folder)) or (1 if campaign_parts(folder) else 0)


def seed_sessions(folder: Path) -> tuple[Case, ...]:
    """The captured requests under ``folder`` that a campaign's synthetic mode starts from and
    mutates (``--seed-sessions``), read as ``agentfuzz reduce`` reads them (``InputError``, one
    line naming the file, for one that cannot be read)."""
    return tuple(captured_folder(folder))
