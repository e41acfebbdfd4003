"""One Hypothesis pass over a strategy, and the halts that end a run without Hypothesis keeping any.

The fuzz property raises ``failure(violation)`` for the first fresh violation an example shows: an
exception whose *class* is unique to the violation's (oracle, signature), so Hypothesis shrinks each
distinct failure on its own (``report_multiple_bugs``). The failures themselves are already in the
finding store; what Hypothesis raises at the end of a pass only confirms them, and is dropped.

A run ends early by raising a ``Halt`` from inside the property: out of time, stopped (Ctrl-C,
SIGTERM, a caller's ``stop()``), the target gone, a cassette with no answer left. A halt is a
``KeyboardInterrupt`` on purpose: that is the one exception Hypothesis's engine treats as "the user
stopped this", in every phase (generation, shrinking, a later pass), so it keeps nothing of the
example, saves nothing to its database and re-raises it. Only when Hypothesis replays its minimal
failing examples at the end of a pass does it collect whatever each one raises, a halt included,
into one ``BaseExceptionGroup``; ``run_pass`` takes such a group apart and re-raises the halt alone.
A bug of ours outranks every halt: ``fuzz_mode`` keeps the first one the property met and raises
it however the pass ended, so a spent budget or the clock never turns it into "nothing found".
A full disk halts the run (``DiskFull``): nothing found after it could be written.

Each pass draws from the seed, the strategy and agentfuzz alone (``_pass_seed``): a campaign
replayed from cassettes asks what the live run asked. ``fuzz_mode`` runs the passes of one
api/stream mode.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, HypothesisException, HypothesisWarning
from hypothesis.internal.conjecture.engine import ConjectureRunner as _Runner
from hypothesis.reporting import with_reporter
from hypothesis.strategies import SearchStrategy

from agentfuzz.model.files import disk_full, disk_full_line
from agentfuzz.model.observation import Violation
from agentfuzz.runs._openers import Opening, database_key, run_openers, saver
from agentfuzz.runs._pass_seed import seed_alone, thread_random

# A history holding a long text makes Hypothesis warn that building its repr is costly; a
# campaign never prints that repr, so the warning is noise on a user's terminal.
warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)

__all__ = [
    "DiskFull",
    "Diverged",
    "EnoughFailures",
    "Failure",
    "Halt",
    "Interrupted",
    "OutOfTime",
    "TargetGone",
    "failure",
    "fuzz_mode",
    "run_pass",
]


class Failure(AssertionError):
    """Base of the per-key failure classes Hypothesis sees."""

    violation: Violation


class Halt(KeyboardInterrupt):
    """Ends the run from inside a Hypothesis property (see the module docstring for why a
    ``KeyboardInterrupt``). ``str()`` is the reason, for the kinds that have one."""


class OutOfTime(Halt):
    """``--max-time`` has passed."""


class Interrupted(Halt):
    """The caller's ``stop()`` said so: Ctrl-C or SIGTERM reached another thread."""


class TargetGone(Halt):
    """The target stopped accepting connections."""


class Diverged(Halt):
    """A replayed campaign asked for what its cassette lacks."""


class DiskFull(Halt):
    """The disk is full: what is found from now on could not be written. ``str()`` is the line
    that says so."""


class EnoughFailures(Halt):
    """``--max-failures`` distinct failures are found: fuzzing ends, shrinking goes on."""


class _Spent(Halt):
    """A mode's budget of examples or of Hypothesis shrink steps is spent: its pass ends
    (``fuzz_mode`` takes it, it never leaves the mode)."""


_CLASSES: dict[tuple[str, str], type[Failure]] = {}
# Shards of one --workers campaign run as threads: one class per key, whichever thread asks.
_CLASSES_LOCK = threading.Lock()


def failure(violation: Violation) -> Failure:
    """The exception the property raises for ``violation``: its class is its key's own."""
    key = violation.key
    with _CLASSES_LOCK:
        if key not in _CLASSES:
            tag = hashlib.sha1("\0".join(key).encode()).hexdigest()[:8]
            _CLASSES[key] = type(f"{key[0]}_{tag}", (Failure,), {})
        kind = _CLASSES[key]
    raised = kind(f"{violation.oracle}: {violation.message}")
    raised.violation = violation
    return raised


def run_pass(
    strategy: SearchStrategy[Any],
    check: Callable[[Any], None],
    *,
    max_examples: int,
    seed: int | None,
    database: Path | None,
    db_key: str,
    keep_database: bool = False,
) -> None:
    """Run ``check`` over ``strategy`` as one Hypothesis test; re-raise a halt as itself.

    Hypothesis's own messages (how to reproduce a failure with ``@seed``, falsifying examples,
    slow shrinking) are for people running a test suite, not a fuzz campaign: the pass runs
    quiet, and whatever Hypothesis reports all the same (its seed line when a Ctrl-C ends a
    pass, at any verbosity a profile sets) goes to a reporter that drops it. The summary
    says what was found.
    """
    thread_random()
    prop = settings(
        max_examples=max_examples,
        deadline=None,
        database=None if database is None else DirectoryBasedExampleDatabase(str(database)),
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        verbosity=Verbosity.quiet,
    )(given(strategy)(check))
    if seed is not None and keep_database:
        # A drawn seed pins the draws and leaves the example database on (``@seed`` would
        # turn it off): saved failures still replay first.
        prop._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    elif seed is not None:
        prop = hypothesis_seed(seed)(prop)
    # One example database key per target and mode, so saved failures replay where they failed.
    prop._hypothesis_internal_database_key = database_key(db_key)  # type: ignore[attr-defined]
    try:
        with with_reporter(_dropped), seed_alone():
            prop()
    except BaseException as raised:
        leaves = [_interrupt_behind(e) or e for e in _leaves(raised)]
        halts = [e for e in leaves if isinstance(e, KeyboardInterrupt)]
        if halts:
            raise max(halts, key=_severity) from None
        foreign = [e for e in leaves if not isinstance(e, Failure | Flaky)]
        if foreign:
            # A bug of ours (or of a strategy), not a finding: it must not pass for one.
            raise foreign[0] from None


def _dropped(text: object) -> None:
    """Hypothesis's reporter while a pass runs: nothing of it reaches the user."""


def _interrupt_behind(raised: BaseException) -> KeyboardInterrupt | None:
    """The interrupt another error was raised while handling, if any: a Ctrl-C or SIGTERM that
    lands while Hypothesis sets up a pass makes its own cleanup fail an assertion (its runner is
    not made yet), and that error must stop the run as the interrupt it hides, not as a bug."""
    seen: set[int] = set()
    inner = raised.__context__
    while inner is not None and id(inner) not in seen:
        if isinstance(inner, KeyboardInterrupt):
            return inner
        seen.add(id(inner))
        inner = inner.__context__
    return None


def _leaves(raised: BaseException) -> Iterator[BaseException]:
    if isinstance(raised, BaseExceptionGroup):
        for inner in raised.exceptions:
            yield from _leaves(inner)
    else:
        yield raised


def _severity(halt: KeyboardInterrupt) -> int:
    """Which halt ends the run when several were collected: the target's state outranks a stop,
    a stop (Ctrl-C, SIGTERM) outranks the clock, the clock ``--max-failures``, and any of them
    a mode's spent budget. A full disk outranks them all: nothing more can be written."""
    if isinstance(halt, DiskFull):
        return 4
    if isinstance(halt, TargetGone):
        return 3
    if isinstance(halt, Diverged):
        return 2
    if isinstance(halt, _Spent):
        return -2
    if isinstance(halt, EnoughFailures):
        return -1
    return 0 if isinstance(halt, OutOfTime) else 1


MAX_PASSES = 8
# Hypothesis's shrinking of a mode gets this many calls per generated example the mode may run.
SHRINK_PER_EXAMPLE = 2


def fuzz_mode(
    strategy: SearchStrategy[Any],
    judge: Callable[[Any], list[Violation]],
    *,
    on_example: Callable[[], None],
    on_shrink: Callable[[], None],
    on_failure: Callable[[], None],
    on_pass: Callable[[int], None],
    max_examples: int,
    seed: int | None,
    database: Path | None,
    db_key: str,
    keep_database: bool = False,
    openers: Sequence[Opening] = (),
) -> None:
    """Fuzz one mode with ``strategy``, ``judge`` giving each example's violations.

    Hypothesis stops generating soon after its first failures, and only the first failure an
    example shows can steer its shrinker. So the mode runs in passes, each failing only on what
    no earlier pass shrank, while they find new failures and the mode's budget lasts: over all
    passes, ``max_examples`` generated examples (Hypothesis's own count leaves out failing ones:
    the surplus it asks for is rejected unsent) and ``SHRINK_PER_EXAMPLE`` times as many shrink
    calls (its final replay included); a pass that spends those ends there. A bug of ours the
    property met is raised however the pass ended (a halt included). ``openers`` are judged
    first, at most half the budget (``_open``). ``on_example`` hears of each generated example
    before it is judged, ``on_shrink`` of each shrink call, ``on_failure`` of each fresh
    failure raised, ``on_pass`` of each pass (by number, from 0) before it starts.
    """
    shrunk: set[tuple[str, str]] = set()
    raised: set[tuple[str, str]] = set()
    left = {"examples": max_examples, "shrinks": SHRINK_PER_EXAMPLE * max_examples}
    bugs: list[Exception] = []
    check = _property(judge, left, shrunk, raised, on_example, on_shrink, on_failure, bugs)
    kept = None if seed is not None and not keep_database else database
    _open(openers[: max_examples // 2], judge, left, on_example, bugs, kept, db_key)
    for number in range(MAX_PASSES):
        if left["examples"] <= 0:
            break
        before = len(raised)
        on_pass(number)
        try:
            with contextlib.suppress(_Spent):
                run_pass(
                    strategy,
                    check,
                    max_examples=left["examples"],
                    seed=None if seed is None else seed + number,
                    database=database,
                    keep_database=keep_database,
                    # A key per pass: a later pass no longer fails on what an earlier one
                    # shrank, and Hypothesis deletes a saved example that replays without failing.
                    db_key=db_key if number == 0 else f"{db_key}|pass {number}",
                )
        finally:
            # Hypothesis may have dropped it (a halt mid-shrink, a flaky replay): never.
            _raise_first(bugs)
        shrunk |= raised
        if len(raised) == before:
            break


def _open(
    openers: Sequence[Opening],
    judge: Callable[[Any], list[Violation]],
    left: dict[str, int],
    on_example: Callable[[], None],
    bugs: list[Exception],
    database: Path | None,
    db_key: str,
) -> None:
    """Judge ``openers`` (each an example and the choices that draw it from the mode's
    strategy) in order, one example of the budget each. What they find is in the store already;
    a pass that meets it again shrinks it as any failure, and in the example ``database`` (None:
    off) it is saved under the first pass's key, so the next run replays it first whatever its
    budget. A bug of ours is raised as the passes raise it."""
    save = None if database is None else saver(database, db_key)
    try:
        run_openers(openers, lambda e: _judged(judge, e, bugs), left, on_example, save)
    finally:
        _raise_first(bugs)


def _property(
    judge: Callable[[Any], list[Violation]],
    left: dict[str, int],
    shrunk: set[tuple[str, str]],
    raised: set[tuple[str, str]],
    on_example: Callable[[], None],
    on_shrink: Callable[[], None],
    on_failure: Callable[[], None],
    bugs: list[Exception],
) -> Callable[[Any], None]:
    """The property a mode's passes run: each call spends one of the mode's examples (or shrink
    steps) ``left``, judges the example and raises its first failure whose key is not in
    ``shrunk``, that key added to ``raised``. A spent budget raises ``_Spent``, a full disk
    ``DiskFull``; the first bug of ours the judging raises is kept in ``bugs``."""

    def check(example: Any) -> None:
        spend = "examples" if _generating() else "shrinks"
        if left[spend] <= 0:
            if spend == "examples":
                # Hypothesis's own count leaves out failing examples: reject the surplus
                # unsent (it soon moves on to shrinking), rather than end the pass unshrunk.
                reject()
            raise _Spent(spend)
        left[spend] -= 1
        on_example() if spend == "examples" else on_shrink()
        fresh = [v for v in _judged(judge, example, bugs) if v.key not in shrunk]
        if fresh:
            raised.add(fresh[0].key)
            on_failure()
            raise failure(fresh[0])

    return check


def _judged(
    judge: Callable[[Any], list[Violation]], example: Any, bugs: list[Exception]
) -> list[Violation]:
    """``judge(example)``; a full disk raised as ``DiskFull``, the first bug of ours kept in
    ``bugs`` (Hypothesis's own signals, and an error a stop caused, are none)."""
    try:
        return judge(example)
    except OSError as exc:
        if disk_full(exc):
            raise DiskFull(disk_full_line(exc)) from exc
        _keep(bugs, exc)
        raise
    except Exception as exc:
        _keep(bugs, exc)
        raise


def _raise_first(bugs: list[Exception]) -> None:
    if bugs:
        raise bugs[0]


def _keep(bugs: list[Exception], exc: Exception) -> None:
    if not bugs and not isinstance(exc, HypothesisException) and not _interrupt_behind(exc):
        bugs.append(exc)


def _generating() -> bool:
    """Whether Hypothesis calls the property with a new example (reusing a saved one, generating,
    targeting), not shrinking one or replaying a minimal failing one.

    Hypothesis has no public word for its phase: this reads its runner's, from the frame that
    called the property. Without a runner behind the call (the final replay of what failed,
    or a Hypothesis whose internals moved), the call counts as a shrink step, so a budget of
    examples is never overspent.
    """
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_DEPTH):
        if frame is None:
            return False
        runner = frame.f_locals.get("self")
        if isinstance(runner, _Runner):
            return getattr(runner, "_current_phase", "") in _GENERATING
        frame = frame.f_back
    return False


_GENERATING = ("reuse", "generate", "target")
_DEPTH = 40
