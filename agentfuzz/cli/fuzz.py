"""``agentfuzz fuzz``: generate agent histories, send them, check every answer, shrink, write."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

import click
from rich.console import Console

from agentfuzz.cli._common import (
    DEFAULT_SERVE_PROFILE,
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
    secret_options,
    stop_signals,
    trials_of,
    url_hint,
    waited_for,
    writable_out,
    write_pytest_ini,
)
from agentfuzz.cli._group import cli
from agentfuzz.cli._help import EXIT_CODES
from agentfuzz.cli._render import summary
from agentfuzz.cli.progress import HEARTBEAT_GAP, Watch
from agentfuzz.errors import EXIT_CLEAN, EXIT_FOUND, EXIT_UNREACHABLE, EXIT_USAGE
from agentfuzz.findings.store import fold
from agentfuzz.judge.judge import oracle_names as known_oracles
from agentfuzz.model.history import Case
from agentfuzz.model.modes import ALL_MODES, Kind
from agentfuzz.model.options import RECORD_MODES
from agentfuzz.model.summary import Summary
from agentfuzz.reports import FORMATS as REPORT_FORMATS
from agentfuzz.reports import unwritable, write_reports
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.config import FuzzConfig
from agentfuzz.runs.engine import Progress, RunBroke, run
from agentfuzz.tape.campaigns import forget_campaign
from agentfuzz.target import BackendLog

__all__ = ["fuzz"]

_KINDS: dict[str, tuple[Kind, ...]] = {
    "synthetic": ("synthetic",),
    "session": ("session",),
    "both": ("synthetic", "session"),
}


class _Workers(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2 only
    """``--workers``: a positive number, or ``auto``."""

    name = "N|auto"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | Literal["auto"]:
        text = str(value).strip()
        if text == "auto":
            return "auto"
        if isinstance(value, bool) or not (text.isascii() and text.isdigit()) or int(text) < 1:
            self.fail(f"{value!r}: a positive number, or auto", param, ctx)
        return int(text)


def _sharded(config: FuzzConfig, workers: int, watch: Progress) -> Summary:
    from agentfuzz.runs.workers import run_sharded

    return run_sharded(config, workers, watch)


def _same_shards(folder: Path, workers: int | Literal["auto"], mode: str) -> None:
    """Exit 2 unless a recorded campaign is played with as many workers as recorded it (each
    shard plays its own tapes, ``shard-K``)."""
    from agentfuzz.tape.campaigns import campaign_parts, shard_tapes

    if workers == "auto":
        fail(EXIT_USAGE, "--workers auto measures a live server: with --cassette, give a number")
    if mode not in ("none", "once") or not folder.is_dir():
        return
    shards = len(shard_tapes(folder))
    recorded = shards or (1 if campaign_parts(folder) else 0)
    if recorded and recorded != workers:
        fail(
            EXIT_USAGE,
            f"--cassette {folder}: recorded with --workers {recorded}, "
            f"so play it with --workers {recorded} (or --record-mode all)",
        )


def _replay_only(folder: Path, mode: str) -> dict[str, Any] | None:
    """The recorded campaign's metadata when this run will only play it back (no server to
    start, no network), else None."""
    from agentfuzz.tape.campaigns import recorded_campaign

    about = recorded_campaign(folder)
    if mode == "none" and about is None:
        fail(EXIT_USAGE, f"--cassette {folder}: no cassette to replay (--record-mode none)")
    return about if mode in ("none", "once") else None


@contextlib.contextmanager
def _backend(profile: str | None, port: int, quiet: bool) -> Iterator[BackendLog | None]:
    """Proxy mode: the reference server with ``profile`` on 127.0.0.1:``port`` as the proxy's
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
        fail(EXIT_USAGE, f"--backend {profile}: {exc.args[0] if exc.args else exc}")
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        fail(EXIT_USAGE, f"--backend {profile}: cannot listen on 127.0.0.1:{port}: {reason}")
    if not quiet:
        click.echo(f"backend listening on {url.removesuffix('/v1')}", err=True)
    try:
        yield log
    finally:
        server.__exit__(None, None, None)


def _proxy_mode(
    backend: str | None, port: int | None, base_url: str | None, serve: str | None, workers: int
) -> None:
    """Exit 2 for a proxy-mode flag combination that cannot work."""
    if backend is None:
        if port is not None:
            fail(EXIT_USAGE, "--backend-port needs --backend PROFILE")
        return
    if serve is not None:
        fail(EXIT_USAGE, "--backend runs behind a proxy given by --base-url, not with --serve")
    if base_url is None:
        fail(EXIT_USAGE, "--backend needs --base-url: the proxy in front of the backend")
    if workers > 1:
        # Which backend request belongs to which client request is only exact one at a time.
        fail(EXIT_USAGE, "proxy mode (--backend) runs with --workers 1")


@cli.command(epilog=EXIT_CODES)
@click.option(
    "--base-url",
    help="Server to fuzz, with its /v1, e.g. http://host:8000/v1. Default: start the embedded "
    "reference server (see --serve).",
)
@click.option("--model", help="Model name. Default: the first one /v1/models lists.")
@secret_options
@click.option(
    "--wait-for-server",
    type=click.FloatRange(min=0.0, min_open=True),
    metavar="SECONDS",
    help="First wait until GET /models answers 200 (a server still loading its model), at "
    "most this many seconds; then exit 3. Default: no wait.",
)
@click.option(
    "--api", type=click.Choice(["chat", "responses"]), help="Only this api. Default: both."
)
@click.option(
    "--stream/--no-stream",
    default=None,
    show_default=False,
    help="Only streaming / non-streaming requests. Default: both.",
)
@click.option(
    "--mode",
    type=click.Choice(["synthetic", "session", "both"]),
    default="synthetic",
    show_default=True,
    help="Generated histories, real sessions fed the server's own answers, or both.",
)
@click.option(
    "--profile",
    default="default",
    show_default=True,
    help="Fuzz profile: what histories are generated. A name ({fuzz_profiles}) or a TOML path.",
)
@click.option(
    "--serve",
    help="Without --base-url: the embedded reference server's profile, i.e. which bug it plants "
    f"({{serve_profiles}}). Default: {DEFAULT_SERVE_PROFILE}.",
)
@click.option(
    "--backend",
    help="Proxy mode: run the reference server with this profile ({serve_profiles}) as the "
    "backend of the proxy at --base-url, and check what reaches it (proxy_fidelity). "
    "Default: off.",
)
@click.option(
    "--backend-port",
    type=click.IntRange(0, 65535),
    help="Port the --backend listens on, on 127.0.0.1 (default 0: a free one, printed).",
)
@click.option(
    "--max-examples",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Examples (generated histories, or sessions in session mode) to try per mode "
    "(api/stream), per kind (synthetic/session) and per worker. Shrinking is bounded by it "
    "too: at most 2N shrink steps per mode and kind, and 2N (at most 200) reduce steps per "
    "finding, each times --trials.",
)
@click.option("--seed", type=int, help="Derandomize the run with this seed. Default: a random one.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("agentfuzz-out"),
    help="Folder for the repro bundles (one per finding) and summary.json.",
)
@click.option(
    "--max-time",
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds the run may take; then it stops at its next example (or shrink step) and "
    "reports what it has. Default: no limit.",
)
@click.option(
    "--max-failures",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop fuzzing after N distinct failures (per worker); then shrink, confirm and "
    "write them, as at --max-time. Default: no limit.",
)
@click.option(
    "--workers",
    type=_Workers(),
    default=1,
    help="Requests kept in flight: N shards in parallel, each with its own seed, as threads of "
    "about one process per core; their findings are merged into --out. auto: first measure "
    "the server's throughput at 1, 2, 4, ... in flight and run as many as its knee (where "
    "throughput stops growing), printing the curve: the way to fuzz a GPU server you do not "
    "know. Default: 1.",
)
@click.option(
    "--trials",
    default="1",
    show_default=True,
    help="Tries per judgement, K (a positive integer: a failure counts if it shows in any of "
    "K) or auto: measure each failure's rate and try enough to miss it at most 3% of the time.",
)
@click.option(
    "--oracles",
    "only",
    help="Only these oracles, comma-separated ({oracles}). Default: all.",
)
@click.option(
    "--skip-oracles", "skip", help="Not these oracles, comma-separated. Default: none skipped."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds one request may take, answer included; past them it is a slow answer, "
    "not a finding.",
)
@click.option(
    "--record",
    type=click.Path(path_type=Path),
    help="Write every example (or session) as a vcrpy cassette in this folder. Default: none.",
)
@click.option(
    "--cassette",
    type=click.Path(path_type=Path),
    help="Run the campaign through cassettes in this folder (see --record-mode). Default: "
    "live only.",
)
@click.option(
    "--record-mode",
    type=click.Choice(RECORD_MODES),
    help="With --cassette: once (default: record if absent, else replay), none (replay only, "
    "never touch the network), new_episodes, all.",
)
@click.option(
    "--seed-sessions",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Start synthetic mode from the real requests captured under DIR (agentfuzz proxy's "
    "session folders or bundles, session.json, request bodies, JSONL) and mutate them: client "
    "id policies, dropped calls and results, tools left out, the request surface. A failure "
    "shrinks back toward the captured request. Default: generate from scratch only.",
)
@click.option(
    "--differential",
    is_flag=True,
    help="Send every request twice, as generated and with stream flipped, and compare the "
    "answers (stream_divergence; judged at temperature 0 only, and only when each side repeats "
    "itself when sent again). Doubles the requests.",
)
@click.option("--quiet", is_flag=True, help="No progress bar or heartbeat lines.")
@click.option(
    "--report",
    "reports",
    type=(click.Choice(REPORT_FORMATS), click.Path(path_type=Path)),
    multiple=True,
    metavar="html DIR|markdown FILE",
    help="After the run, write a report of it: 'html DIR' (DIR/index.html, one "
    "self-contained page) or 'markdown FILE' (for a CI job summary). May be given twice. "
    "Default: none.",
)
@click.option(
    "--junit-xml",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="After the run, write JUnit XML to FILE for CI dashboards: a test case per mode "
    "that ran and per finding. Default: none.",
)
def fuzz(**given: Any) -> None:
    """Generate agent histories, send them, check every answer, shrink and write repros."""
    _fuzz(_Options(**given))


@dataclass(frozen=True)
class _Options:
    """The command line of ``agentfuzz fuzz``, as click parsed it."""

    base_url: str | None
    model: str | None
    api_key: str | None
    headers: tuple[str, ...]
    wait_for_server: float | None
    api: str | None
    stream: bool | None
    mode: str
    profile: str
    serve: str | None
    backend: str | None
    backend_port: int | None
    max_examples: int
    seed: int | None
    out: Path
    max_time: float | None
    max_failures: int | None
    workers: int | Literal["auto"]
    trials: str
    only: str | None
    skip: str | None
    timeout: float
    record: Path | None
    cassette: Path | None
    record_mode: str | None
    seed_sessions: Path | None
    differential: bool
    quiet: bool
    reports: tuple[tuple[str, Path], ...]
    junit_xml: Path | None


def _fuzz(o: _Options) -> None:
    base_url = checked_url(o.base_url)
    many = 2 if o.workers == "auto" else o.workers
    _conflicts(many, o.cassette, o.backend, o.backend_port, base_url, o.serve)
    if o.record_mode is not None and o.cassette is None:
        fail(EXIT_USAGE, "--record-mode needs --cassette DIR")
    if o.model is not None and not o.model.strip():
        fail(EXIT_USAGE, "--model: empty model name")
    modes = tuple(m for m in ALL_MODES if o.api in (None, m[0]) and o.stream in (None, m[1]))
    selected, skipped = _chosen_oracles(o.only, o.skip)
    fields: dict[str, Any] = {
        "profile": load_profile(o.profile),
        "api_key": checked_key(o.api_key),
        "headers": checked_headers(o.headers),
        "trials": trials_of(o.trials),
        "modes": modes,
        "kinds": _KINDS[o.mode],
        "only": selected,
        "skip": skipped,
        "record_mode": o.record_mode or "once",
        "command": command_line(),
        "config_file": config_used(),
    }
    fields |= {k: getattr(o, k) for k in _PASSED_ON}
    if o.seed_sessions is not None:
        fields["seeds"] = _seeds(o.seed_sessions, fields["kinds"])
    writable_out(o.out)
    if (problem := unwritable(o.reports, o.junit_xml)) is not None:
        fail(EXIT_USAGE, problem)
    if o.record is not None:
        writable_out(o.record, "--record")
    if o.cassette is not None:
        _same_shards(o.cassette, o.workers, fields["record_mode"])
    recorded = None if o.cassette is None else _replay_only(o.cassette, fields["record_mode"])
    if o.cassette is not None and recorded is None:
        writable_out(o.cassette, "--cassette")
    about = recorded or {}
    target = about.get("target") if isinstance(about.get("target"), str) else None
    recorded_url = (target or "http://cassette.invalid/v1") if recorded is not None else None
    # Ctrl-C and SIGTERM alike from here on: one that comes before the campaign (the server
    # starting or loading its model, the model asked for) ends the command as a Ctrl-C there
    # does, "interrupted" and exit 130; in the campaign, it stops it and the summary is written.
    signals = contextlib.ExitStack()
    termed = signals.enter_context(stop_signals())
    with (
        signals,
        _backend(o.backend, o.backend_port or 0, o.quiet) as backend_log,
        reference_server(base_url, o.serve, recorded=recorded_url) as url,
    ):
        if recorded is None:
            waited_for(url, o.wait_for_server, fields["api_key"], fields["headers"])
        recorded_model = about.get("model") if isinstance(about.get("model"), str) else None
        key, headers = fields["api_key"], fields["headers"]
        name = o.model or recorded_model or first_model_of(url, key, o.timeout, headers)
        # The embedded server's port is new each run: its profile names the target instead.
        embedded = base_url is None and recorded is None
        serve = (o.serve or DEFAULT_SERVE_PROFILE) if embedded else None
        config = FuzzConfig(base_url=url, model=name, backend=backend_log, serve=serve, **fields)
        if o.cassette is not None and config.record_mode == "all":
            # Recorded anew: an old campaign's parts the new one never reaches must go.
            forget_campaign(o.cassette)
        workers = _knee(config) if o.workers == "auto" else o.workers
        total = o.max_examples * len(modes) * len(config.kinds) * workers
        gap = HEARTBEAT_GAP if workers > 1 else 0.0
        with Watch(Console(stderr=True), total, o.quiet, gap) as watch:
            done = _campaign(config, workers, watch, termed)
    summary(Console(), done)
    # For machines: the same summary as data, beside the bundles.
    (o.out / "summary.json").write_text(json.dumps(done.dump(), indent=2) + "\n")
    write_pytest_ini(o.out)
    _reports(o, done)
    _exit_for(done, config.base_url)


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


def _seeds(folder: Path, kinds: tuple[Kind, ...]) -> tuple[Case, ...]:
    """``--seed-sessions DIR``'s requests; exit 2 with one line when there are none to use."""
    from agentfuzz.errors import InputError
    from agentfuzz.runs.reduce import captured_folder

    if not folder.is_dir():
        fail(EXIT_USAGE, f"--seed-sessions {folder}: not a folder")
    if "synthetic" not in kinds:
        fail(EXIT_USAGE, "--seed-sessions seeds synthetic mode: use --mode synthetic or both")
    try:
        found = captured_folder(folder)
    except InputError as exc:
        fail(EXIT_USAGE, f"--seed-sessions: {exc}")
    if not found:
        fail(EXIT_USAGE, f"--seed-sessions {folder}: holds no captured request")
    return tuple(found)


def _reports(o: _Options, done: Summary) -> None:
    """``--report`` and ``--junit-xml``, from the summary just written."""
    if not o.reports and o.junit_xml is None:
        return
    try:
        written = write_reports(done, o.reports, o.junit_xml)
    except OSError as exc:
        fail(EXIT_USAGE, f"cannot write a report: {exc.filename or ''}: {exc.strerror or exc}")
    for path in written:
        click.echo(f"report: {path}")


# Options that go into the configuration as they are.
_PASSED_ON = (
    "out",
    "max_examples",
    "seed",
    "timeout",
    "record",
    "cassette",
    "max_time",
    "max_failures",
    "differential",
)


def _conflicts(
    workers: int,
    cassette: Path | None,
    backend: str | None,
    backend_port: int | None,
    base_url: str | None,
    serve: str | None,
) -> None:
    """Exit 2 for a combination of flags that cannot work."""
    _proxy_mode(backend, backend_port, base_url, serve, workers)
    if backend is not None and cassette is not None:
        fail(EXIT_USAGE, "proxy mode (--backend) cannot run through --cassette yet")
    if base_url is not None and serve is not None:
        fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")


def _chosen_oracles(only: str | None, skip: str | None) -> tuple[list[str] | None, list[str]]:
    """``--oracles`` and ``--skip-oracles`` as names; exit 2 unless some oracle is left."""
    selected, skipped = oracle_names(only), oracle_names(skip) or []
    if selected == []:
        fail(EXIT_USAGE, f"--oracles {only!r}: names no oracle")
    if not set(known_oracles() if selected is None else selected) - set(skipped):
        fail(EXIT_USAGE, "--oracles/--skip-oracles leave no oracle to run")
    return selected, skipped


def _campaign(
    config: FuzzConfig, workers: int, watch: Progress, stop: Callable[[], bool]
) -> Summary:
    """Run the campaign and return its summary: whatever ended it, what it found is in it.
    ``stop``: whether SIGTERM came (its interrupt may have been lost, see
    ``stop_signals``)."""
    if workers > 1:
        return fold(_sharded(config, workers, watch))
    try:
        report = run(config, watch, stop)
    except RunBroke as broke:
        report = broke.report
    if report.error:
        log = config.out / "error.log"
        log.write_text(report.traceback, encoding="utf-8")
        report.error = f"{report.error} (traceback in {log})"
    # One finding per root cause: symptoms one request shows together are one bundle.
    return fold(report.summary())


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
