"""``agentfuzz fuzz``: generate agent histories, send them, check every answer, shrink, write.

The command reads straight: the options are checked (``_preflight``), the target is started or
reached, the campaign runs (``runs.campaign.run_campaign``, the entry ``agentfuzz.run`` and the
pytest plugin share), and its summary is printed and mapped to an exit code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console

from agentfuzz.cli._common import (
    Exit,
    fail,
    first_model_of,
    not_started,
    puppet_served,
    reference_server,
    serve_profile,
    stop_signals,
    url_hint,
    waited_for,
    warn_unlisted,
    write_pytest_ini,
)
from agentfuzz.cli._fuzz_options import FuzzOptions, fuzz_options
from agentfuzz.cli._group import cli
from agentfuzz.cli._help import EXIT_CODES
from agentfuzz.cli._preflight import preflight
from agentfuzz.cli._render import summary
from agentfuzz.cli.progress import HEARTBEAT_GAP, ProgressLine
from agentfuzz.errors import EXIT_CLEAN, EXIT_FOUND, EXIT_UNREACHABLE, EXIT_USAGE
from agentfuzz.model.summary import Summary
from agentfuzz.output.reports import write_reports
from agentfuzz.runs.campaign import RecordedTarget, run_campaign
from agentfuzz.runs.config import FuzzConfig
from agentfuzz.wire.target import BackendLog

__all__ = ["fuzz"]


@cli.command(epilog=EXIT_CODES)
@fuzz_options
def fuzz(**given: Any) -> None:
    """Generate agent histories, send them, check every answer, shrink and write repros.

    `agentfuzz profiles` lists the profiles --profile, --serve and --backend take; `agentfuzz
    oracles` the oracles. The manual (docs/live-server.md) says what each option does.
    """
    _fuzz(FuzzOptions(**given))


def _fuzz(o: FuzzOptions) -> None:
    fields, replay = preflight(o)
    # Ctrl-C and SIGTERM alike from here on: one that comes before the campaign (the server
    # starting or loading its model, the model asked for) ends the command as a Ctrl-C there
    # does, "interrupted" and exit 130; in the campaign, it stops it and the summary is written.
    signals = contextlib.ExitStack()
    termed = signals.enter_context(stop_signals())
    recorded_url = None if replay is None else replay.base_url
    with (
        signals,
        _backend(o.backend, o.backend_port or 0, o.quiet) as backend_log,
        reference_server(o.base_url, o.serve, recorded_url, fields.get("puppet")) as url,
    ):
        config = _config(o, fields, url, backend_log, replay)
        workers = _knee(config) if o.workers == "auto" else o.workers
        total = o.max_examples * len(config.modes) * len(config.kinds) * workers
        gap = HEARTBEAT_GAP if workers > 1 else 0.0
        with ProgressLine(_console(stderr=True), total, o.quiet, gap) as watch:
            done = run_campaign(config, workers, watch, termed)
    write_pytest_ini(o.out)
    written, problem = _reports(o, done)
    summary(_console(), done, coverage=o.coverage, reports=written)
    if problem is not None:
        # The summary is out, every finding on disk: the report alone is missing.
        fail(EXIT_USAGE, problem)
    _exit_for(done, config.base_url)


# Columns of a console that is not a terminal (a CI log, a pipe): rich's default, 80, cut the
# tables' words ("req…") and wrapped every line.
_LOG_WIDTH = 200


def _console(stderr: bool = False) -> Console:
    """A console for ``agentfuzz fuzz``'s output: no markup read in what it prints, and off a
    terminal wide enough that nothing is cut."""
    console = Console(stderr=stderr, markup=False, highlight=False)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, markup=False, highlight=False, width=_LOG_WIDTH)


def _config(
    o: FuzzOptions,
    fields: dict[str, Any],
    url: str,
    backend: BackendLog | None,
    replay: RecordedTarget | None,
) -> FuzzConfig:
    """The campaign's configuration once its target is up (and answers, with
    ``--wait-for-server``): the model given, else the one its tapes recorded, else the first one
    ``/models`` lists."""
    key, headers = fields["api_key"], fields["headers"]
    if replay is None:
        waited_for(url, o.wait_for_server, key, headers)
    recorded = None if replay is None else replay.model
    if o.model is not None and replay is None:
        warn_unlisted(url, o.model, key, o.timeout, headers)
    name = o.model or recorded or first_model_of(url, key, o.timeout, headers)
    if fields.get("puppet") is not None and replay is None:
        puppet_served(url, name, key, o.timeout, headers)
    # The embedded server's port is new each run: its profile names the target instead.
    embedded = o.base_url is None and replay is None
    serve = serve_profile(o.serve, fields.get("puppet")) if embedded else None
    return FuzzConfig(base_url=url, model=name, backend=backend, serve=serve, **fields)


@contextlib.contextmanager
def _backend(profile: str | None, port: int, quiet: bool) -> Iterator[BackendLog | None]:
    """Middleman mode: the reference server with ``profile`` on 127.0.0.1:``port`` as the proxy's
    backend, logging every request body it receives; nothing without a profile."""
    if profile is None:
        yield None
        return
    from agentfuzz.reference import serve_in_thread

    log = BackendLog()
    try:
        server = serve_in_thread(profile, port=port, on_request=log.add)
        url = server.__enter__()
    except (KeyError, ValueError) as exc:
        fail(EXIT_USAGE, f"--backend {profile}: {not_started(profile, exc)}")
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        fail(EXIT_USAGE, f"--backend {profile}: cannot listen on 127.0.0.1:{port}: {reason}")
    if not quiet:
        click.echo(f"backend listening on {url.removesuffix('/v1')}", err=True)
    try:
        yield log
    finally:
        server.__exit__(None, None, None)


def _knee(config: FuzzConfig) -> int:
    """``--workers auto``: the server's throughput curve, printed, and its knee."""
    from agentfuzz.errors import ProbeFailed
    from agentfuzz.runs.knee import probe

    say = Console(stderr=True)
    say.print("workers auto: measuring the server's throughput by requests in flight", markup=False)
    try:
        curve = probe(
            config.base_url,
            config.model,
            api_key=config.api_key,
            headers=config.headers,
            timeout=config.timeout,
        )
    except ProbeFailed as exc:
        fail(EXIT_USAGE, f"--workers auto: {exc}")
    for line in curve.lines():
        say.print(line, markup=False, highlight=False)
    return curve.knee


def _reports(o: FuzzOptions, done: Summary) -> tuple[list[Path], str | None]:
    """``--report`` and ``--junit-xml``, from the summary just written: their paths, and why
    they could not be written (their paths were checked before the run; a disk can still fill)."""
    if not o.reports and o.junit_xml is None:
        return [], None
    try:
        return list(write_reports(done, o.reports, o.junit_xml)), None
    except OSError as exc:
        return [], f"cannot write a report: {exc.filename or ''}: {exc.strerror or exc}"


def _exit_for(done: Summary, base_url: str) -> NoReturn:
    """The documented exit code for a finished run's summary, with its one line if any."""
    if done.not_served:
        # Repros written so far stay on disk; the run itself tested nothing.
        hint = url_hint(base_url) or "check --base-url, --api-key, --model"
        said = f"every request was answered {done.not_served}"
        fail(EXIT_USAGE, f"{said}: nothing was tested ({hint})")
    if done.findings:
        raise Exit(EXIT_FOUND, "")
    rows = done.latency.values()
    if rows and all(row.timeouts == row.requests for row in rows):
        fail(EXIT_USAGE, "every request ran out of time: nothing was tested (raise --timeout)")
    failed = done.failed_shards
    if failed and len(failed) == done.shards and all(f.unreachable for f in failed):
        fail(EXIT_UNREACHABLE, str(done.unreachable))
    if done.error or failed:
        # The summary above says what broke; nothing was found before it did.
        fail(EXIT_USAGE, "")
    raise Exit(EXIT_CLEAN, "")
