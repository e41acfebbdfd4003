"""The request surface's coverage on the console: one line by default, the table on request.

The table has a row per dimension (some 50 in a default run): printed by default it pushed the
findings off a CI log's screen. In full it is in ``summary.json`` and the reports; the console
says in one line how many dimensions were sent and which ones the target always refused, and
prints the table with ``--coverage``.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentfuzz.cli._printable import printable
from agentfuzz.model.summary import Coverage

__all__ = ["coverage_line", "coverage_table"]

# Names of always-refused dimensions the line lists before it says how many more there are.
_NAMED = 8


def coverage_line(coverage: dict[str, Coverage]) -> str:
    """``request surface coverage: 56 dimensions sent, 3 always refused: n, stop, user (the
    table: --coverage; every row: summary.json)``."""
    refused = [name for name, row in _by_use(coverage) if row.always_refused]
    said = f"request surface coverage: {len(coverage)} dimensions sent"
    said += f", {len(refused)} always refused"
    if refused:
        more = len(refused) - _NAMED
        said += ": " + ", ".join(refused[:_NAMED]) + (f" and {more} more" if more > 0 else "")
    return printable(said + " (the table: --coverage; every row: summary.json)")


def coverage_table(console: Console, coverage: dict[str, Coverage]) -> None:
    """Per dimension of the request surface: requests that used it, how the target answered."""
    table = Table(title="request surface coverage")
    table.add_column("dimension", no_wrap=True)
    for column in ("requests", "2xx", "4xx", "5xx", "failed", "slow"):
        table.add_column(column, justify="right")
    table.add_column("note", no_wrap=True)
    for name, row in _by_use(coverage):
        counts = (row.requests, row.ok, row.refused, row.error, row.failed, row.slow)
        note = "always refused" if row.always_refused else ""
        table.add_row(Text(printable(name)), *(str(n) for n in counts), note)
    console.print(table)


def _by_use(coverage: dict[str, Coverage]) -> list[tuple[str, Coverage]]:
    """The rows, the dimension most used first."""
    return sorted(coverage.items(), key=lambda kv: -kv[1].requests)
