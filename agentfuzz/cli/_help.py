"""What ``--help`` says beyond click's own: the exit codes, and the command list uncut.

Help names no profile or oracle: ``agentfuzz profiles`` and ``agentfuzz oracles`` list them, so the
help stays short and cannot fall behind a new one, and importing the command line loads neither
the reference server nor the oracles.
"""

from __future__ import annotations

import click

__all__ = ["EXIT_CODES", "REPLAY_EXIT_CODES", "HelpfulGroup"]

# Kept whole by click (``\b``): the contract of DESIGN.md, for the commands that judge a target.
EXIT_CODES = """\b
Exit codes:
  0    nothing found
  1    failures found (repros written)
  2    usage, config or input error
  3    target unreachable
  130  interrupted (Ctrl-C or SIGTERM) before the run could report"""

# ``replay`` sends nothing, so it has no target to miss.
REPLAY_EXIT_CODES = """\b
Exit codes:
  0    every turn passes every oracle
  1    some turn fails an oracle
  2    no cassette found, or one cannot be read
  130  interrupted (Ctrl-C)"""


class HelpfulGroup(click.Group):
    """The group: its command list uncut."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                # No limit: click cuts a line it thinks too long to "shrink...".
                rows.append((name, command.get_short_help_str(limit=1_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
