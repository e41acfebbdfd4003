"""``agentfuzz fuzz``: generate agent histories, send them, check every answer, shrink, write."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console

from agentfuzz._progress import HEARTBEAT_GAP, Watch
from agentfuzz.cli._common import (
    DEFAULT_SERVE_PROFILE,
    EXIT_CLEAN,
    EXIT_FOUND,
    EXIT_UNREACHABLE,
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
from agentfuzz.cli._render import summary
from agentfuzz.config import ALL_MODES, FuzzConfig, Kind
from agentfuzz.engine import Progress, RunBroke, run
from agentfuzz.judge import oracle_names as known_oracles
from agentfuzz.options import RECORD_MODES
from agentfuzz.profiles import load_profile
from agentfuzz.summary import Summary
from agentfuzz.target import BackendLog

__all__ = ["fuzz"]

_KINDS: dict[str, tuple[Kind, ...]] = {
    "synthetic": ("synthetic",),
    "session": ("session",),
    "both": ("synthetic", "session"),
}


def _sharded(config: FuzzConfig, workers: int, watch: Progress) -> Summary:
    from agentfuzz.workers import run_sharded

    return run_sharded(config, workers, watch)


def _replay_only(folder: Path, mode: str) -> dict[str, Any] | None:
    """The recorded campaign's metadata when this run will only play it back (no server to
    start, no network), else None."""
    from agentfuzz.campaigns import recorded_campaign

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


@cli.command()
@click.option("--base-url", help="Server to fuzz, e.g. http://host:8000/v1. Default: --serve.")
@click.option("--model", help="Model name. Default: the first one /v1/models lists.")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Bearer key (default $OPENAI_API_KEY).")
@click.option("--api", type=click.Choice(["chat", "responses"]), help="Only this api.")
@click.option("--stream/--no-stream", default=None, help="Only streaming / non-streaming.")
@click.option(
    "--mode",
    type=click.Choice(["synthetic", "session", "both"]),
    default="synthetic",
    show_default=True,
    help="Generated histories, real sessions fed the server's own answers, or both.",
)
@click.option("--profile", default="default", show_default=True, help="Fuzz profile name or path.")
@click.option("--serve", help=f"Reference server profile (default {DEFAULT_SERVE_PROFILE}).")
@click.option(
    "--backend",
    help="Proxy mode: run the reference server with this profile as the backend of the proxy "
    "at --base-url, and check what reaches it (proxy_fidelity).",
)
@click.option(
    "--backend-port",
    type=click.IntRange(0, 65535),
    help="Port the --backend listens on, on 127.0.0.1 (default 0: a free one, printed).",
)
@click.option("--max-examples", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=int, help="Derandomize the run with this seed.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("agentfuzz-out"))
@click.option(
    "--max-time",
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds the run may take; then it stops at its next example (or shrink step) and "
    "reports what it has.",
)
@click.option("--workers", type=click.IntRange(min=1), default=1)
@click.option(
    "--trials",
    default="1",
    show_default=True,
    help="Tries per judgement (a failure counts if it shows in any), or auto: measure each "
    "failure's rate and try enough to miss it at most 3% of the time.",
)
@click.option("--oracles", "only", help="Only these oracles (comma-separated).")
@click.option("--skip-oracles", "skip", help="Not these oracles (comma-separated).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True)
@click.option(
    "--record",
    type=click.Path(path_type=Path),
    help="Write every example (or session) as a vcrpy cassette in this folder.",
)
@click.option(
    "--cassette",
    type=click.Path(path_type=Path),
    help="Run the campaign through cassettes in this folder (see --record-mode).",
)
@click.option(
    "--record-mode",
    type=click.Choice(RECORD_MODES),
    help="With --cassette: once (default: record if absent, else replay), none (replay only, "
    "never touch the network), new_episodes, all.",
)
@click.option(
    "--differential",
    is_flag=True,
    help="Send every request twice, as generated and with stream flipped, and compare the "
    "answers (stream_divergence; judged at temperature 0 only). Doubles the requests; runs "
    "with --workers 1.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def fuzz(**given: Any) -> None:
    """Generate agent histories, send them, check every answer, shrink and write repros."""
    _fuzz(_Options(**given))


@dataclass(frozen=True)
class _Options:
    """The command line of ``agentfuzz fuzz``, as click parsed it."""

    base_url: str | None
    model: str | None
    api_key: str | None
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
    workers: int
    trials: str
    only: str | None
    skip: str | None
    timeout: float
    record: Path | None
    cassette: Path | None
    record_mode: str | None
    differential: bool
    quiet: bool


def _fuzz(o: _Options) -> None:
    base_url = checked_url(o.base_url)
    _conflicts(o.workers, o.cassette, o.differential, o.backend, o.backend_port, base_url, o.serve)
    if o.record_mode is not None and o.cassette is None:
        fail(EXIT_USAGE, "--record-mode needs --cassette DIR")
    if o.model is not None and not o.model.strip():
        fail(EXIT_USAGE, "--model: empty model name")
    modes = tuple(m for m in ALL_MODES if o.api in (None, m[0]) and o.stream in (None, m[1]))
    selected, skipped = _chosen_oracles(o.only, o.skip)
    fields: dict[str, Any] = {
        "profile": load_profile(o.profile),
        "api_key": checked_key(o.api_key),
        "trials": trials_of(o.trials),
        "modes": modes,
        "kinds": _KINDS[o.mode],
        "only": selected,
        "skip": skipped,
        "record_mode": o.record_mode or "once",
        "command": command_line(),
    }
    fields |= {k: getattr(o, k) for k in _PASSED_ON}
    writable_out(o.out)
    if o.record is not None:
        writable_out(o.record, "--record")
    recorded = None if o.cassette is None else _replay_only(o.cassette, fields["record_mode"])
    if o.cassette is not None and recorded is None:
        writable_out(o.cassette, "--cassette")
    about = recorded or {}
    target = about.get("target") if isinstance(about.get("target"), str) else None
    recorded_url = (target or "http://cassette.invalid/v1") if recorded is not None else None
    with (
        _backend(o.backend, o.backend_port or 0, o.quiet) as backend_log,
        reference_server(base_url, o.serve, recorded=recorded_url) as url,
    ):
        recorded_model = about.get("model") if isinstance(about.get("model"), str) else None
        name = o.model or recorded_model or first_model_of(url, fields["api_key"], o.timeout)
        config = FuzzConfig(base_url=url, model=name, backend=backend_log, **fields)
        total = o.max_examples * len(modes) * len(config.kinds) * max(o.workers, 1)
        gap = HEARTBEAT_GAP if o.workers > 1 else 0.0
        with (
            Watch(Console(stderr=True), total, o.quiet, gap) as watch,
            stop_signals() as termed,
        ):
            done = _campaign(config, o.workers, watch, termed)
    summary(Console(), done)
    # For machines: the same summary as data, beside the bundles.
    (o.out / "summary.json").write_text(json.dumps(done.dump(), indent=2) + "\n")
    _exit_for(done)


# Options that go into the configuration as they are.
_PASSED_ON = (
    "out",
    "max_examples",
    "seed",
    "timeout",
    "record",
    "cassette",
    "max_time",
    "differential",
)


def _conflicts(
    workers: int,
    cassette: Path | None,
    differential: bool,
    backend: str | None,
    backend_port: int | None,
    base_url: str | None,
    serve: str | None,
) -> None:
    """Exit 2 for a combination of flags that cannot work."""
    if workers > 1 and cassette is not None:
        fail(EXIT_USAGE, "--workers > 1 cannot be combined with --cassette yet")
    _proxy_mode(backend, backend_port, base_url, serve, workers)
    if differential and workers > 1:
        # Batching on a real server changes greedy outputs: twins must not run beside others.
        fail(EXIT_USAGE, "--differential runs with --workers 1")
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
        return _sharded(config, workers, watch)
    try:
        report = run(config, watch, stop)
    except RunBroke as broke:
        report = broke.report
    if report.error:
        log = config.out / "error.log"
        log.write_text(report.traceback, encoding="utf-8")
        report.error = f"{report.error} (traceback in {log})"
    return report.summary()


def _exit_for(done: Summary) -> NoReturn:
    """The documented exit code for a finished run's summary, with its one line if any."""
    if done.not_served:
        # Repros written so far stay on disk; the run itself tested nothing.
        fail(
            EXIT_USAGE,
            f"every request was answered {done.not_served}: nothing was tested "
            "(check --base-url, --api-key, --model)",
        )
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
