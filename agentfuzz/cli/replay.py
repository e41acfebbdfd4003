"""``agentfuzz replay``: recorded cassettes re-checked offline through every oracle."""

from __future__ import annotations

from pathlib import Path

import click

from agentfuzz.cli._common import Exit, fail
from agentfuzz.cli._group import cli
from agentfuzz.cli._help import REPLAY_EXIT_CODES
from agentfuzz.cli._printable import printable
from agentfuzz.errors import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, CassetteError, NotInCassette

__all__ = ["replay"]


@cli.command(epilog=REPLAY_EXIT_CODES)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the random byte boundaries each recorded body is cut at when played back.",
)
@click.option("--whole", is_flag=True, help="Replay each body in one piece, unsplit.")
def replay(paths: tuple[Path, ...], seed: int, whole: bool) -> None:
    """Re-check recorded cassettes (files or folders) offline through every oracle.

    PATHS: cassette files (*.yaml) or folders holding them. Offline: nothing is sent, so there
    is no --base-url.
    """
    from agentfuzz.tape.replay import cassette_files, replay_cassette

    files = cassette_files(paths)
    if not files:
        fail(EXIT_USAGE, f"no cassette (*.yaml) under {', '.join(map(str, paths))}")
    failing = unreadable = 0
    for path in files:
        try:
            result = replay_cassette(path, None if whole else seed)
        except (CassetteError, NotInCassette) as exc:
            click.echo(f"agentfuzz: {printable(exc)}", err=True)
            unreadable += 1
            continue
        failing += result.failed
        click.echo(f"{path}: {len(result.turns)} turn(s)")
        for turn in result.turns:
            now = ", ".join(f"{v.oracle}: {printable(v.message)}" for v in turn.violations)
            now = now or "ok"
            then = (
                ""
                if turn.same
                else "  [recorded: " + (", ".join(v["oracle"] for v in turn.recorded) or "ok") + "]"
            )
            click.echo(f"  turn {turn.number}: {now}{then}")
    click.echo(f"{len(files)} cassette(s): {failing} failing, {unreadable} unreadable")
    if unreadable:
        raise Exit(EXIT_USAGE, "")
    raise Exit(EXIT_FOUND if failing else EXIT_CLEAN, "")
