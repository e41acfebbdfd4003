"""The run's summary for people: the findings table, the session turn table, the closing lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentfuzz.model.summary import Coverage, FindingRow, Summary, TurnRow

__all__ = ["summary"]


def summary(console: Console, done: Summary) -> None:
    """The run's summary (one run's, or the merge of the shards') for people."""
    findings = done.findings
    if done.run:
        console.print(_what_ran(done.run), soft_wrap=True, highlight=False)
    if findings:
        _findings_table(console, findings)
    if done.session_turns:
        _turn_table(console, done.session_turns)
    if done.coverage:
        _coverage_table(console, done.coverage)
    examples = ", ".join(f"{mode} {n}" for mode, n in done.examples.items())
    shards = f" · {done.shards} workers" if done.shards else ""
    # Generated examples (what --max-examples bounds) apart from the shrinking that followed.
    shrinks = sum(done.shrink_steps.values())
    steps = f" · shrink steps {shrinks}" if shrinks else ""
    steps += f" · reduce steps {done.reduce_steps}" if done.reduce_steps else ""
    console.print(
        f"{len(findings)} finding(s) · examples: {examples or 'none'}{steps} · "
        f"{done.requests} requests · {done.elapsed_s:.1f}s{shards}",
        highlight=False,
    )
    if done.latency:
        _latency(console, done)
    for f in findings:
        if f.flaky or f.reproduced.startswith("0/"):
            what = "flaky: reproduced" if f.flaky else "did not reproduce:"
            console.print(f"{what} {f.reproduced} · {f.oracle}: {f.message}", highlight=False)
    if done.stopped_answering:
        console.print("the server stopped answering: the last request it answered is the repro")
    if done.interrupted:
        console.print("interrupted: findings so far are written")
    if done.out_of_time:
        console.print(
            "stopped at --max-time: findings so far are written, the last ones maybe not fully "
            "shrunk or confirmed"
        )
    if done.max_failures_reached:
        console.print("stopped at --max-failures: what was found is shrunk, confirmed and written")
    for failed in done.failed_shards:
        console.print(f"shard {failed.shard} failed: {failed.why}", highlight=False)
    if done.error and not done.failed_shards:
        console.print(f"internal error: {done.error}", highlight=False)


def _findings_table(console: Console, findings: list[FindingRow]) -> None:
    """One row per finding, then the paths of its bundle, each on a line of its own."""
    table = Table(title="agentfuzz findings")
    table.add_column("oracle", no_wrap=True)
    table.add_column("size", justify="right")
    table.add_column("reproduced", justify="right", no_wrap=True)
    table.add_column("message")
    for f in findings:
        rate = f.reproduced + (" flaky" if f.flaky else "")
        more = f" (+{len(f.symptoms) - 1} symptoms of the same cause)" if f.symptoms else ""
        table.add_row(f.oracle, str(f.size), rate, f.message + more)
    console.print(table)
    # Paths on lines of their own, whole, so they can be copied.
    for f in findings:
        folder = Path(f.bundle)
        for line in (
            f"report: {folder / 'REPORT.md'}",
            f"re-send: sh {folder / 'repro.sh'}",
            f"regression test: pytest {folder}",
        ):
            console.print(line, soft_wrap=True, highlight=False)


def _what_ran(run: dict[str, Any]) -> str:
    """``fuzzed http://…/v1 (reference profile vllm-kimi-k2) · model m · profile default ·
    seed 1``: what the run fuzzed, and how to run it again."""
    target = run.get("target") or {}
    where = str(target.get("base_url") or "?")
    if target.get("reference_profile"):
        where += f" (reference profile {target['reference_profile']})"
    seed = run.get("seed")
    seeded = f"seed {seed}" if seed is not None else "seed random (pass --seed N to repeat it)"
    return (
        f"fuzzed {where} · model {target.get('model', '?')} · profile "
        f"{run.get('profile', '?')} · {seeded}"
    )


def _latency(console: Console, done: Summary) -> None:
    """Seconds per answer, per mode, and the slow answers: counted, never findings."""
    rows = [
        f"{mode} p50 {row.p50_s:.2f}s p95 {row.p95_s:.2f}s"
        for mode, row in done.latency.items()
        if row.p50_s is not None and row.p95_s is not None
    ]
    console.print(f"latency: {', '.join(rows)}", highlight=False)
    slow = sum(row.timeouts for row in done.latency.values())
    if slow:
        console.print(
            f"{slow} request(s) ran out of time with the server still at work: slow answers, "
            "counted, not findings (raise --timeout, or bound max_tokens in the profile)",
            highlight=False,
        )


def _coverage_table(console: Console, coverage: dict[str, Coverage]) -> None:
    """Per dimension of the request surface: requests that used it, how the target answered."""
    table = Table(title="request surface coverage")
    table.add_column("dimension", no_wrap=True)
    for column in ("requests", "2xx", "4xx", "5xx", "failed", "slow"):
        table.add_column(column, justify="right")
    table.add_column("")
    for name, row in sorted(coverage.items(), key=lambda kv: -kv[1].requests):
        counts = (row.requests, row.ok, row.refused, row.error, row.failed, row.slow)
        note = "always refused" if row.always_refused else ""
        table.add_row(name, *(str(n) for n in counts), note)
    console.print(table)


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
