"""``agentfuzz profiles`` and ``agentfuzz oracles``: what exists, one line each."""

from __future__ import annotations

import click

from agentfuzz.cli._group import cli
from agentfuzz.errors import ProfileError
from agentfuzz.judge.judge import oracle_summaries
from agentfuzz.request.profiles import list_profiles, load_profile

__all__ = ["oracles", "profiles"]


@cli.command()
def profiles() -> None:
    """List the fuzz profiles (--profile) and the reference server's profiles (--serve).

    A fuzz profile shapes what is generated (strategies/*.toml, or any TOML file by its path); a
    reference server profile picks the bug the embedded server plants (agentfuzz serve).
    """
    from agentfuzz.reference import BEHAVIOURS

    click.echo("fuzz profiles (fuzz --profile NAME, strategies/NAME.toml):")
    rows = [(name, _description(name)) for name in list_profiles()]
    _rows(rows)
    click.echo("reference server profiles (agentfuzz serve NAME, fuzz/reduce --serve NAME):")
    _rows([(b.name, b.summary) for b in BEHAVIOURS.values()])


def _description(name: str) -> str:
    try:
        return load_profile(name).description or "(no description)"
    except ProfileError as exc:
        return f"(cannot be loaded: {exc})"


@cli.command()
def oracles() -> None:
    """List the oracles (--oracles, --skip-oracles, reduce --oracle) and what each checks."""
    _rows(list(oracle_summaries().items()))


def _rows(rows: list[tuple[str, str]]) -> None:
    width = max((len(name) for name, _ in rows), default=0)
    for name, line in rows:
        click.echo(f"  {name:<{width}}  {line}")
