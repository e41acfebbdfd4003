"""The run's summary for people: the findings table, the session turn table, the closing lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["summary"]


def summary(console: Console, data: dict[str, Any]) -> None:
    """The run's summary (``Report.summary()`` or the merge of the shards') for people."""
    findings = data["findings"]
    table = Table(title="agentfuzz findings")
    table.add_column("oracle", no_wrap=True)
    table.add_column("size", justify="right")
    table.add_column("reproduced", justify="right", no_wrap=True)
    table.add_column("message")
    for f in findings:
        rate = f["reproduced"] + (" flaky" if f["flaky"] else "")
        table.add_row(f["oracle"], str(f["size"]), rate, f["message"])
    if findings:
        console.print(table)
        # Paths on lines of their own, whole, so they can be copied.
        for f in findings:
            path = Path(f["bundle"]) / "repro.json"
            console.print(f"repro: {path}", soft_wrap=True, highlight=False)
    if data["session_turns"]:
        _turn_table(console, data["session_turns"])
    examples = ", ".join(f"{mode} {n}" for mode, n in data["examples"].items())
    shards = f" · {data['shards']} workers" if data.get("shards") else ""
    console.print(
        f"{len(findings)} finding(s) · examples: {examples or 'none'} · "
        f"{data['requests']} requests · {data['elapsed_s']:.1f}s{shards}",
        highlight=False,
    )
    for f in findings:
        if f["flaky"] or f["reproduced"].startswith("0/"):
            what = "flaky: reproduced" if f["flaky"] else "did not reproduce:"
            console.print(
                f"{what} {f['reproduced']} · {f['oracle']}: {f['message']}", highlight=False
            )
    if data["stopped_answering"]:
        console.print("the server stopped answering: the last request it answered is the repro")
    if data["interrupted"]:
        console.print("interrupted: findings so far are written")
    if data.get("out_of_time"):
        console.print(
            "stopped at --max-time: findings so far are written, the last ones maybe not fully "
            "shrunk or confirmed"
        )
    for failed in data.get("failed_shards") or []:
        console.print(f"shard {failed['shard']} failed: {failed['why']}", highlight=False)
    if data.get("error") and not data.get("failed_shards"):
        console.print(f"internal error: {data['error']}", highlight=False)


def _turn_table(console: Console, turns: dict[str, dict[str, int]]) -> None:
    """Sessions per turn number: how many got there, how many failed there."""
    table = Table(title="session turns (last pass of each mode)")
    table.add_column("turn", justify="right")
    table.add_column("sessions reached", justify="right")
    table.add_column("failed there", justify="right")
    table.add_column("rate", justify="right")
    for number, row in turns.items():
        reached, failed = row["reached"], row["failed"]
        table.add_row(number, str(reached), str(failed), f"{failed / reached:.0%}")
    console.print(table)
