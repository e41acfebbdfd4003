"""``agentfuzz reduce``: a captured failure cut down to its smallest request."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentfuzz.cli._common import (
    DEFAULT_SERVE_PROFILE,
    EXIT_CLEAN,
    EXIT_FOUND,
    EXIT_USAGE,
    Exit,
    checked_key,
    checked_url,
    command_line,
    fail,
    first_model_of,
    oracle_names,
    reference_server,
    stop_signals,
    trials_of,
    writable_out,
)
from agentfuzz.cli._group import cli
from agentfuzz.profiles import load_profile

if TYPE_CHECKING:
    from agentfuzz.history import Case
    from agentfuzz.reduce_captured import Reduction

__all__ = ["reduce"]


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--base-url", help="Server to reduce against, e.g. http://host:8000/v1.")
@click.option("--serve", help=f"Reference server profile (default {DEFAULT_SERVE_PROFILE}).")
@click.option("--model", help="Model name. Default: the first one /v1/models lists.")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Bearer key (default $OPENAI_API_KEY).")
@click.option("--oracle", "oracle", help="The oracle that must keep firing. Default: the first.")
@click.option("--trials", default="1", show_default=True, help="Tries per candidate, or auto.")
@click.option("--profile", default="default", show_default=True, help="Fuzz profile name or path.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("agentfuzz-out"))
@click.option("--budget", type=click.IntRange(min=1), default=400, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True)
def reduce(
    file: Path,
    base_url: str | None,
    serve: str | None,
    model: str | None,
    api_key: str | None,
    oracle: str | None,
    trials: str,
    profile: str,
    out: Path,
    budget: int,
    timeout: float,
) -> None:
    """Cut a failing captured request or session (FILE) to the smallest request that still fails.

    FILE: a repro.json, a chat or Responses request body, a bare messages or input array, or a
    JSONL session of request bodies (the last failing one is reduced). Exit 1 with a bundle
    when reduced, 0 when nothing in FILE fails on the target.
    """
    from agentfuzz.reduce_captured import (
        NothingToReduce,
        found_by_after,
        reduce_input,
        write_reduction,
    )
    from agentfuzz.target import Target

    if oracle is not None:
        oracle_names(oracle)
    tries = trials_of(trials)
    base_url = checked_url(base_url)
    if base_url is not None and serve is not None:
        fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")
    api_key = checked_key(api_key)
    honours = load_profile(profile).server_honours_seed
    text, cases = _captured(file)
    writable_out(out)
    with reference_server(base_url, serve) as url:
        name = model or first_model_of(url, api_key, timeout)
        target = Target(url, name, api_key, timeout)
        try:
            with stop_signals():
                reduction = reduce_input(target, cases, oracle, tries, budget, honours)
        except NothingToReduce as exc:
            click.echo(f"agentfuzz: {exc}")
            raise Exit(EXIT_CLEAN, "") from None
        finally:
            target.close()
    found_by = found_by_after(text, command_line())
    _say(reduction, len(cases), write_reduction(out, reduction, str(file), found_by))
    raise Exit(EXIT_FOUND, "")


def _captured(file: Path) -> tuple[str, list[Case]]:
    """What ``file`` says and the cases it holds; exit 2 with one line when it cannot be read
    or holds none."""
    from agentfuzz.reduce_captured import InputError, captured_cases

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(EXIT_USAGE, f"{file}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    try:
        cases = captured_cases(text)
    except InputError as exc:
        fail(EXIT_USAGE, f"{file}: {exc}")
    if not cases:
        fail(EXIT_USAGE, f"{file}: holds no request")
    return text, cases


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
    click.echo(f"reproduced: {rate} · {v.oracle}: {v.message}")
    click.echo(f"repro: {folder / 'repro.json'}")
