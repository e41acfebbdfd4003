"""What ``--help`` says beyond click's own: the names an option takes and the exit codes.

Help texts may name ``{fuzz_profiles}``, ``{serve_profiles}`` and ``{oracles}``: they are filled
in when the help is printed, from what exists then (``strategies/*.toml``, the reference
server's profiles, the oracle registry), so the help cannot fall behind a new profile or
oracle, and importing the command line loads neither the reference server nor the oracles.
The command list shows each command's whole first docstring line, never click's cut "...".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import click

__all__ = [
    "EXIT_CODES",
    "REPLAY_EXIT_CODES",
    "HelpfulCommand",
    "HelpfulGroup",
    "names",
    "serve_profiles",
]

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


def serve_profiles() -> list[str]:
    """The reference server's profile names (``agentfuzz serve PROFILE``, ``--serve``)."""
    from agentfuzz.reference import PROFILES

    return list(PROFILES)


def _fuzz_profiles() -> list[str]:
    from agentfuzz.request.profiles import list_profiles

    return list_profiles()


def _oracles() -> list[str]:
    from agentfuzz.judge.judge import oracle_names

    return oracle_names()


_NAMES: dict[str, Callable[[], list[str]]] = {
    "{fuzz_profiles}": _fuzz_profiles,
    "{serve_profiles}": serve_profiles,
    "{oracles}": _oracles,
}


# A name is never wrapped at its hyphens (``vllm-`` / ``kimi-k2``): it is written with
# non-breaking ones, which the formatter turns back into plain hyphens once the text is laid out.
_KEEP = "\u2011"


def names(text: str) -> str:
    """``text`` with each ``{…}`` placeholder above replaced by the names it stands for."""
    for placeholder, known in _NAMES.items():
        if placeholder in text:
            text = text.replace(placeholder, ", ".join(n.replace("-", _KEEP) for n in known()))
    return text


class _Formatter(click.HelpFormatter):
    def getvalue(self) -> str:
        return super().getvalue().replace(_KEEP, "-")


class _Context(click.Context):
    formatter_class = _Formatter


class _Named(click.Command):
    """A command whose help, option help and epilog have their placeholders filled (``names``);
    its arguments are described in its help text, so only options are listed."""

    context_class = _Context

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.help and "{" in self.help:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(names(inspect.cleandoc(self.help)))
            return
        super().format_help_text(ctx, formatter)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue
            record = param.get_help_record(ctx)
            if record is not None:
                rows.append((record[0], names(record[1])))
        if rows:
            with formatter.section("Options"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.epilog:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(names(self.epilog))


class HelpfulCommand(_Named):
    """Every ``agentfuzz`` subcommand (the group's ``command_class``)."""


class HelpfulGroup(_Named, click.Group):
    """The group: its options filled like a command's, and its command list uncut."""

    command_class = HelpfulCommand

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _Named.format_options(self, ctx, formatter)
        self.format_commands(ctx, formatter)

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
