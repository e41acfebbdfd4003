"""Stopping a run is never a failure Hypothesis sees, in any stage, and loses nothing found.

Each run here is stopped the moment the engine enters one stage (generation, Hypothesis's
shrinking, a later targeted pass, the engine's own reduction, confirmation), by one of the ways a
run ends early: the deadline of ``--max-time``, a caller's ``stop()`` (how shards in threads hear
of Ctrl-C), and a real SIGINT delivered in the middle of the run. Every run must return its
report, say why it ended, send no request after the stop, and have every finding on disk.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from agentfuzz import FuzzConfig, Status, oracles, run
from agentfuzz.cli import cli
from agentfuzz.model.modes import Kind
from agentfuzz.model.observation import Violation
from agentfuzz.reduce import validity
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs import engine
from agentfuzz.runs.engine import RunBroke
from agentfuzz.runs.passes import Failure, OutOfTime, TargetGone, failure, run_pass

STAGES = ["generate", "shrink", "target", "reduce", "confirm"]
STOPS = ["deadline", "stop", "sigint"]


class _Counter:
    """Requests the reference server received, counted as they arrive (in its own thread)."""

    def __init__(self) -> None:
        self.lock, self.count = threading.Lock(), 0

    def __call__(self, path: str, body: bytes) -> None:
        with self.lock:
            self.count += 1


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, _Counter]]:
    """The seed-000 reference server: every kind of run finds a failure and shrinks it."""
    counter = _Counter()
    with serve_in_thread("vllm-kimi-k2", on_request=counter) as url:
        yield url, counter


def _config(url: str, out: Path, kind: Kind) -> FuzzConfig:
    return FuzzConfig(
        base_url=url,
        model="m",
        profile=load_profile("default"),
        out=out,
        modes=(("chat", False),),
        kinds=(kind,),
        max_examples=15,
        # Seed 3 meets the seed bug within 15 examples, synthetic and session alike.
        seed=3,
        database=None,
        max_time=10_000.0,
    )


@pytest.mark.parametrize("how", STOPS)
@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_a_run_stopped_in_any_stage_reports_and_keeps_what_it_found(
    server: tuple[str, _Counter],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: Kind,
    stage: str,
    how: str,
) -> None:
    if how == "sigint" and threading.current_thread() is not threading.main_thread():
        pytest.skip("a signal reaches the main thread only")
    url, requests = server
    late = [0.0]
    monkeypatch.setattr(engine, "_clock", lambda: time.monotonic() + late[0])
    stopped = threading.Event()
    seen: list[Status] = []
    at_stop: list[int] = []

    def progress(status: Status) -> None:
        seen.append(status)
        if stopped.is_set() or status.stage != stage:
            return
        stopped.set()
        with requests.lock:
            at_stop.append(requests.count)
        if how == "deadline":
            late[0] = 1e9
        elif how == "sigint":
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, delivered right here, mid-run

    stop = stopped.is_set if how == "stop" else (lambda: False)
    config = _config(url, tmp_path / "out", kind)
    if stage == "target":
        # --max-examples is the mode's over all its passes: leave the first some to spare.
        config = config.model_copy(update={"max_examples": 150})
    report = run(config, progress, stop=stop)

    assert stopped.is_set(), f"the run never reached {stage}"
    assert report.out_of_time == (how == "deadline")
    assert report.interrupted == (how != "deadline")
    assert report.error is None
    # Nothing ran past the stop: no request, no further example or step.
    assert requests.count == at_stop[0]
    assert seen[-1].stage == stage
    # Every finding so far is on disk, and only those: the smallest example of each.
    on_disk = {p.parent.name for p in (tmp_path / "out").glob("*/repro.json")}
    assert on_disk == {f.bundle.name for f in report.findings}
    if stage != "generate":
        assert report.findings
    smallest: dict[str, int] = {}
    for finding in report.findings:
        doc = json.loads((finding.bundle / "repro.json").read_text())
        assert doc["size"] == finding.case.history.size
        if finding.settled:
            # Made a valid conversation after shrinking, which may add turns: it breaks only
            # the rules its failure needs, and says which.
            assert validity.flaws(finding.case) == finding.needs
            assert doc["needs"] == [validity.NEEDS[code] for code in finding.needs]
            continue
        smallest[doc["oracle"]] = min(smallest.get(doc["oracle"], doc["size"]), doc["size"])
    # The progress names a shrink by oracle: the smallest bundle of it is no larger than that.
    for status in seen:
        if status.shrinking is not None and status.shrinking[0] in smallest:
            oracle, size = status.shrinking
            assert smallest[oracle] <= size


def _fails_two_ways(
    halt_after: int, halt: Callable[[int], BaseException] = lambda n: OutOfTime()
) -> tuple[Callable[[int], None], list[int]]:
    """A property with two distinct failures that halts from its ``halt_after``-th call on."""
    calls = [0]

    def check(n: int) -> None:
        calls[0] += 1
        if calls[0] > halt_after:
            raise halt(n)
        if n > 10:
            raise failure(Violation("a" if n % 2 else "b", "boom", signature=str(n % 2)))

    return check, calls


def _pass(check: Callable[[int], None]) -> None:
    run_pass(st.integers(0, 1000), check, max_examples=200, seed=1, database=None, db_key="k")


def test_a_halt_in_any_call_of_a_pass_is_raised_alone_never_as_a_group() -> None:
    # Hypothesis replays each minimal failure at the end of a pass and groups what they raise:
    # a deadline passing between two replays once crashed a shard with a BaseExceptionGroup.
    check, calls = _fails_two_ways(10_000)
    _pass(check)
    for halt_after in range(calls[0]):
        check, _ = _fails_two_ways(halt_after)
        with pytest.raises(OutOfTime):
            _pass(check)


def test_when_halts_are_grouped_the_target_gone_outranks_the_clock() -> None:
    check, calls = _fails_two_ways(10_000)
    _pass(check)
    # The last two calls replay the two minimal failures: both halt, each its own way.
    check, _ = _fails_two_ways(
        calls[0] - 2, lambda n: TargetGone("refused") if n % 2 else OutOfTime()
    )
    with pytest.raises(TargetGone):
        _pass(check)


def test_a_bug_of_ours_in_the_property_is_raised_not_taken_for_a_finding() -> None:
    def broken(n: int) -> None:
        if n > 10:
            raise TypeError("a bug in the property")

    with pytest.raises(TypeError):
        _pass(broken)


def test_an_interrupt_hidden_behind_another_error_still_stops_the_pass() -> None:
    # Ctrl-C or SIGTERM landing while Hypothesis sets up a pass makes its cleanup fail an
    # assertion of its own; the run must stop as interrupted, not report a bug of ours.
    def interrupted_then_broken(n: int) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise AssertionError  # noqa: B904 (as Hypothesis's own assertion does)

    with pytest.raises(KeyboardInterrupt):
        _pass(interrupted_then_broken)


def test_failures_alone_end_a_pass_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    check, _ = _fails_two_ways(10_000)
    _pass(check)
    out = capsys.readouterr()
    # Hypothesis's own advice (how to reproduce, slow shrinking) is not for a fuzz campaign.
    assert "Hypothesis" not in out.out + out.err and "@seed" not in out.out + out.err
    assert issubclass(type(failure(Violation("a", "m"))), Failure)


def _breaks_after(calls: int, check: Callable[..., Any]) -> Callable[..., Any]:
    """``check``, with a bug planted in agentfuzz's own judging from call ``calls`` on."""
    seen = [0]

    def broken(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] > calls:
            raise RuntimeError("a planted bug of ours")
        return check(*args, **kwargs)

    return broken


def test_a_bug_of_ours_mid_run_raises_with_the_report_of_what_was_found(
    server: tuple[str, _Counter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oracles, "check", _breaks_after(40, oracles.check))
    with pytest.raises(RunBroke) as broke:
        run(_config(server[0], tmp_path / "out", "synthetic"))
    report = broke.value.report
    assert report.error == "RuntimeError: a planted bug of ours"
    assert "Traceback" in report.traceback
    assert report.findings and all(f.bundle.is_dir() for f in report.findings)


def test_the_command_line_reports_a_bug_of_ours_and_keeps_what_was_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oracles, "check", _breaks_after(40, oracles.check))
    out = tmp_path / "out"
    argv = ["fuzz", "--api", "chat", "--no-stream", "--max-examples", "15", "--seed", "3"]
    result = CliRunner().invoke(cli, [*argv, "--out", str(out), "--quiet"])
    assert "Traceback" not in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["error"].startswith("RuntimeError: a planted bug of ours")
    assert "internal error: RuntimeError: a planted bug of ours" in result.output
    assert "Traceback" in (out / "error.log").read_text()
    assert summary["findings"] and result.exit_code == 1
    assert all((Path(f["bundle"]) / "repro.json").is_file() for f in summary["findings"])


def test_max_time_is_shared_between_the_modes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A clock that moves one second per request: 40 s for four parts is about ten each, so
    # none may take them all and each must run (the first mode used to spend the whole budget).
    ticks = [0.0]

    def tick(path: str, body: bytes) -> None:
        ticks[0] += 1.0

    monkeypatch.setattr(engine, "_clock", lambda: ticks[0])
    modes = (("chat", False), ("chat", True), ("responses", False), ("responses", True))
    with serve_in_thread("fixed", on_request=tick) as url:
        config = _config(url, tmp_path / "out", "synthetic").model_copy(
            update={"modes": modes, "max_examples": 10_000, "max_time": 40.0}
        )
        report = run(config)
    assert report.out_of_time
    assert set(report.examples) == {
        "chat/no-stream",
        "chat/stream",
        "responses/no-stream",
        "responses/stream",
    }
    assert all(5 <= n <= 15 for n in report.examples.values()), report.examples
