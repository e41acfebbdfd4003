"""The run's summary for people: what ran, how it went, and last the verdict.

The last lines are the ones a CI log shows: the findings, where their bundles are, and how to
re-send them. Everything above them (the session turns, the coverage, latency, why a run ended
early) comes first. Whatever a server said (a finding's message, the model's name) is printed
escaped (``_printable``) and never read as rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentfuzz.cli._coverage import coverage_line, coverage_table
from agentfuzz.cli._printable import printable
from agentfuzz.model.summary import FindingRow, Summary, TurnRow

__all__ = ["summary"]


def summary(
    console: Console,
    done: Summary,
    coverage: bool = False,
    reports: Sequence[Path] = (),
) -> None:
    """The run's summary (one run's, or the merge of the shards') for people: ``coverage``
    prints the coverage table whole, not its one line; ``reports`` are the reports written."""
    if done.run:
        _line(console, _what_ran(done.run))
    if done.session_turns:
        _turn_table(console, done.session_turns)
    if done.coverage:
        if coverage:
            coverage_table(console, done.coverage)
        _line(console, coverage_line(done.coverage))
    if done.latency:
        _latency(console, done)
    for line in _how_it_ended(done):
        _line(console, line)
    for path in reports:
        _line(console, f"report: {path}")
    _verdict(console, done)


def _line(console: Console, text: str) -> None:
    """One line, whole however long (a CI log has no width to fit), escaped, no markup."""
    console.print(Text(printable(text)), soft_wrap=True)


def _what_ran(run: dict[str, Any]) -> str:
    """``fuzzed http://…/v1 (reference profile vllm-kimi-k2) · model m · profile default ·
    seed 1 (--seed 1 repeats it)``: what the run fuzzed, and how to run it again."""
    target = run.get("target") or {}
    where = str(target.get("base_url") or "?")
    if target.get("reference_profile"):
        where += f" (reference profile {target['reference_profile']})"
    seed = run.get("seed")
    seeded = f"seed {seed} (--seed {seed} repeats it)" if seed is not None else "seed not recorded"
    return (
        f"fuzzed {where} · model {target.get('model', '?')} · profile "
        f"{run.get('profile', '?')} · {seeded}"
    )


def _how_it_ended(done: Summary) -> list[str]:
    """A line for each way the run ended early or went wrong (after what it changed on its
    own as it went: a slow target's requests bounded)."""
    lines = list(done.notes)
    if done.stopped_answering:
        lines.append("the server stopped answering: the last request it answered is the repro")
    if done.interrupted:
        lines.append("interrupted: findings so far are written")
    if done.out_of_time:
        lines.append(
            "stopped at --max-time: findings so far are written, the last ones maybe not fully "
            "shrunk or confirmed"
        )
    if done.max_failures_reached:
        lines.append("stopped at --max-failures: what was found is shrunk, confirmed and written")
    lines += [f"shard {failed.shard} failed: {failed.why}" for failed in done.failed_shards]
    if done.error and not done.failed_shards:
        # A full disk is the machine's state, not a bug of ours: its line says so itself.
        full = done.error.startswith("disk full")
        lines.append(done.error if full else f"internal error: {done.error}")
    if done.set_aside:
        lines.append(f"the earlier run's bundles in this --out were moved to {done.set_aside}")
    return lines


def _verdict(console: Console, done: Summary) -> None:
    """The last lines: the run in figures, the findings, and for each its bundle's paths."""
    findings = done.findings
    examples = ", ".join(f"{mode} {n}" for mode, n in done.examples.items())
    shards = f" · {done.shards} workers" if done.shards else ""
    # Generated examples (what --max-examples bounds) apart from the shrinking that followed.
    shrinks = sum(done.shrink_steps.values())
    steps = f" · shrink steps {shrinks}" if shrinks else ""
    steps += f" · reduce steps {done.reduce_steps}" if done.reduce_steps else ""
    _line(
        console,
        f"{len(findings)} finding(s) · examples: {examples or 'none'}{steps} · "
        f"{done.requests} requests · {done.elapsed_s:.1f}s{shards}",
    )
    if not findings:
        return
    _findings_table(console, findings)
    for f in findings:
        if f.flaky or f.reproduced.startswith("0/"):
            what = "flaky: reproduced" if f.flaky else "did not reproduce:"
            _line(console, f"{what} {f.reproduced} · {f.oracle}: {f.message}")
    # Paths on lines of their own, whole, so they can be copied.
    for f in findings:
        folder = Path(f.bundle)
        _line(console, f"report: {folder / 'REPORT.md'}")
        _line(console, f"re-send: sh {folder / 'repro.sh'}")
        _line(console, f"regression test: pytest {folder}")


def _findings_table(console: Console, findings: list[FindingRow]) -> None:
    """One row per finding."""
    table = Table(title="agentfuzz findings")
    table.add_column("oracle", no_wrap=True)
    table.add_column("size", justify="right")
    table.add_column("reproduced", justify="right", no_wrap=True)
    table.add_column("message")
    for f in findings:
        rate = f.reproduced + (" flaky" if f.flaky else "")
        more = f" (+{len(f.symptoms) - 1} symptoms of the same cause)" if f.symptoms else ""
        cells = (f.oracle, str(f.size), rate, f.message + more)
        table.add_row(*(Text(printable(cell)) for cell in cells))
    console.print(table)


def _latency(console: Console, done: Summary) -> None:
    """Seconds per answer, per mode, and the slow answers: counted, never findings."""
    rows = [
        f"{mode} p50 {row.p50_s:.2f}s p95 {row.p95_s:.2f}s"
        for mode, row in done.latency.items()
        if row.p50_s is not None and row.p95_s is not None
    ]
    _line(console, f"latency: {', '.join(rows)}")
    slow = sum(row.timeouts for row in done.latency.values())
    if slow:
        _line(
            console,
            f"{slow} request(s) ran out of time with the server still at work: slow answers, "
            "counted, not findings (raise --timeout, or bound max_tokens in the profile)",
        )


def _turn_table(console: Console, turns: dict[str, TurnRow]) -> None:
    """Sessions per turn number: how many got there, how many failed there."""
    table = Table(title="session turns (last pass of each mode)")
    table.add_column("turn", justify="right")
    table.add_column("sessions reached", justify="right")
    table.add_column("failed there", justify="right")
    table.add_column("rate", justify="right")
    for number, row in turns.items():
        rate = f"{row.failed / row.reached:.0%}"
        table.add_row(number, str(row.reached), str(row.failed), rate)
    console.print(table)
