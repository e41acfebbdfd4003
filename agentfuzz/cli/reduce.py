"""``agentfuzz reduce``: a captured failure cut down to its smallest request."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentfuzz.cli._common import (
    Exit,
    checked_headers,
    checked_key,
    checked_url,
    command_line,
    config_used,
    fail,
    first_model_of,
    oracle_names,
    reference_server,
    stop_signals,
    trials_of,
    writable_out,
    write_pytest_ini,
)
from agentfuzz.cli._group import cli
from agentfuzz.cli._help import EXIT_CODES
from agentfuzz.cli._options import (
    BASE_URL,
    MODEL,
    OUT,
    PROFILE,
    SERVE,
    TIMEOUT,
    TRIALS,
    secret_options,
)
from agentfuzz.cli._printable import printable
from agentfuzz.errors import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE
from agentfuzz.request.profiles import load_profile

if TYPE_CHECKING:
    from agentfuzz.model.history import Case
    from agentfuzz.runs.reduce import Reduction

__all__ = ["reduce"]


@cli.command(epilog=EXIT_CODES)
@click.argument("file", type=click.Path(path_type=Path))
@BASE_URL
@SERVE
@MODEL
@secret_options
@click.option(
    "--oracle", metavar="NAME", help="The oracle that must keep firing. Default: the first."
)
@TRIALS
@PROFILE
@OUT
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    metavar="N",
    default=400,
    help="Candidate requests to judge at most.",
)
@TIMEOUT
@click.option(
    "--offline",
    is_flag=True,
    help="Judge a cassette's recorded answers again; send nothing.",
)
def reduce(
    file: Path,
    base_url: str | None,
    serve: str | None,
    model: str | None,
    api_key: str | None,
    headers: tuple[str, ...],
    oracle: str | None,
    trials: str,
    profile: str,
    out: Path,
    budget: int,
    timeout: float,
    offline: bool,
) -> None:
    """Cut a failing captured request or session (FILE) to the smallest request that still fails.

    FILE: a repro.json, a chat or Responses request body, a bare messages or input array, a
    JSONL session of request bodies, a session.json, or a cassette (.yaml) such as the one
    `agentfuzz proxy` writes beside each failing session (the last failing request is
    reduced). Exit 1 with a bundle when reduced, 0 when nothing in FILE fails on the target.
    `agentfuzz profiles` and `agentfuzz oracles` list the names --serve, --profile and --oracle
    take.
    """
    from agentfuzz.errors import NothingToReduce
    from agentfuzz.runs.reduce import reduce_input
    from agentfuzz.wire.target import Target

    if oracle is not None:
        oracle_names(oracle)
    if offline:
        _offline(file, base_url, serve, oracle, out)
    tries = trials_of(trials)
    base_url = checked_url(base_url)
    if base_url is not None and serve is not None:
        fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")
    api_key = checked_key(api_key)
    sent = checked_headers(headers)
    honours = load_profile(profile).server_honours_seed
    text, cases = _captured(file)
    writable_out(out)
    with reference_server(base_url, serve) as url:
        name = model or first_model_of(url, api_key, timeout, sent)
        target = Target(url, name, api_key, timeout, headers=sent)
        try:
            with stop_signals():
                reduction = reduce_input(target, cases, oracle, tries, budget, honours)
        except NothingToReduce as exc:
            click.echo(f"agentfuzz: {printable(exc)}")
            raise Exit(EXIT_CLEAN, "") from None
        finally:
            target.close()
    _say(reduction, len(cases), _written(file, text, reduction, out))
    raise Exit(EXIT_FOUND, "")


def _captured(file: Path) -> tuple[str, list[Case]]:
    """What ``file`` says and the cases it holds; exit 2 with one line when it cannot be read
    or holds none."""
    from agentfuzz.errors import InputError
    from agentfuzz.runs.reduce import captured_cases, cassette_cases

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(EXIT_USAGE, f"{file}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    if file.suffix in (".yaml", ".yml"):
        # A cassette (CassetteError, exit 2, for one that is not): its turns' own cases.
        return "", cassette_cases(file)
    try:
        cases = captured_cases(text)
    except InputError as exc:
        fail(EXIT_USAGE, f"{file}: {exc}")
    if not cases:
        fail(EXIT_USAGE, f"{file}: holds no request")
    return text, cases


def _offline(
    file: Path, base_url: str | None, serve: str | None, oracle: str | None, out: Path
) -> None:
    """``--offline``: the last failing recorded turn of a cassette as the repro; exits."""
    from agentfuzz.errors import NothingToReduce
    from agentfuzz.runs.reduce import offline

    if base_url is not None or serve is not None:
        fail(EXIT_USAGE, "--offline judges a recording: it takes neither --base-url nor --serve")
    if file.suffix not in (".yaml", ".yml") or not file.is_file():
        fail(EXIT_USAGE, f"--offline {file}: expected a cassette (.yaml), such as session.yaml")
    writable_out(out)
    try:
        reduction = offline(file, oracle)
    except NothingToReduce as exc:
        click.echo(f"agentfuzz: {printable(exc)}")
        raise Exit(EXIT_CLEAN, "") from None
    # A cassette names no campaign: who found it is its bundle's word, if it has one.
    folder = _written(file, "", reduction, out)
    v = reduction.violation
    click.echo(f"recorded: {v.oracle} on request {reduction.source + 1} (judged offline)")
    click.echo(f"{v.oracle}: {printable(v.message)}")
    click.echo(f"repro: {folder / 'repro.json'}")
    raise Exit(EXIT_FOUND, "")


def _written(file: Path, text: str, reduction: Reduction, out: Path) -> Path:
    """Write ``reduction``'s bundle, its ``found_by`` saying who found FILE (``text``) and
    that this run cut it down, and make ``out`` collectable by pytest; the bundle's folder."""
    from agentfuzz.runs.reduce import found_by_after, write_reduction

    found_by = found_by_after(_bundle_text(file, text), command_line(), config_used())
    folder = write_reduction(out, reduction, str(file), found_by)
    write_pytest_ini(out)
    return folder


def _bundle_text(file: Path, text: str) -> str:
    """What says who found FILE: a session's own bundle (its ``repro.json`` beside it, as the
    proxy writes them), else FILE itself."""
    beside = file.parent / "repro.json"
    if file.name in ("session.json", "session.yaml") and beside.is_file():
        try:
            return beside.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return text
    return text


def _say(reduction: Reduction, inputs: int, folder: Path) -> None:
    """What ``reduce`` did, in the lines a person reads."""
    hits, total = reduction.rate
    v = reduction.violation
    click.echo(f"confirmed: {v.oracle} on request {reduction.source + 1} of {inputs}")
    click.echo(
        f"reduced: {reduction.original.history.size} -> {reduction.reduced.history.size} items "
        f"({reduction.tries} tries per candidate, {reduction.calls} target calls)"
    )
    rate = f"{hits}/{total}" + (" (flaky)" if 0 < hits < total else "")
    if reduction.interrupted:
        rate = "not measured (interrupted: the smallest failing request so far is written)"
    click.echo(f"reproduced: {rate} · {v.oracle}: {printable(v.message)}")
    click.echo(f"repro: {folder / 'repro.json'}")
