"""The ``agentfuzz`` command line: ``fuzz``, ``reduce``, ``replay`` and ``serve``.

Exit codes are a contract: 0 nothing found · 1 failures found (repros written) · 2 usage, config or
input error · 3 target unreachable. Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

import click
from rich.console import Console
from rich.table import Table

from agentfuzz import oracles
from agentfuzz._progress import HEARTBEAT_GAP, Watch
from agentfuzz.engine import ALL_MODES, FuzzConfig, Kind, Progress, run
from agentfuzz.options import RECORD_MODES, base_url_problem
from agentfuzz.profiles import ProfileError, load_profile
from agentfuzz.target import BackendLog, first_model
from agentfuzz.transport.errors import (
    CassetteError,
    ModelListError,
    NotInCassette,
    TargetUnreachable,
)

__all__ = ["cli", "main"]

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
DEFAULT_SERVE_PROFILE = "vllm-kimi-k2"
_KINDS: dict[str, tuple[Kind, ...]] = {
    "synthetic": ("synthetic",),
    "session": ("session",),
    "both": ("synthetic", "session"),
}


class _Exit(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _fail(code: int, message: str) -> NoReturn:
    raise _Exit(code, message)


def _names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = sorted(set(names) - set(oracles.names()))
    if unknown:
        known = ", ".join(oracles.names())
        _fail(EXIT_USAGE, f"unknown oracle {', '.join(unknown)} (known: {known})")
    return names


def _base_url(value: str | None) -> str | None:
    """``value`` if it is an http(s) URL with a host and a valid port; else exit 2."""
    problem = None if value is None else base_url_problem(value)
    if problem:
        _fail(EXIT_USAGE, f"--base-url {value!r}: {problem}")
    return value


def _api_key(value: str | None) -> str | None:
    # A header value must be printable ASCII; anything else fails on every request instead.
    if value and not all("!" <= c <= "~" for c in value):
        _fail(EXIT_USAGE, "--api-key: only printable ASCII without spaces can be sent")
    return value


def _trials(value: str) -> int | Literal["auto"]:
    if value == "auto":
        return "auto"
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        _fail(EXIT_USAGE, f"--trials {value}: expected a positive integer")
    return int(value)


def _writable_out(out: Path, flag: str = "--out") -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".agentfuzz-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        _fail(EXIT_USAGE, f"{flag} {out}: not writable ({exc.strerror or exc})")
    return out


def _first_model(base_url: str, api_key: str | None, timeout: float) -> str:
    try:
        return first_model(base_url, api_key, timeout)
    except ModelListError as exc:
        _fail(EXIT_USAGE, f"{exc}; pass --model")


def _sharded(config: FuzzConfig, workers: int, watch: Progress) -> dict[str, Any]:
    from agentfuzz.workers import run_sharded

    return run_sharded(config, workers, watch)


def _replay_only(folder: Path, mode: str) -> dict[str, Any] | None:
    """The recorded campaign's metadata when this run will only play it back (no server to
    start, no network), else None."""
    from agentfuzz.campaigns import recorded_campaign

    about = recorded_campaign(folder)
    if mode == "none" and about is None:
        _fail(EXIT_USAGE, f"--cassette {folder}: no cassette to replay (--record-mode none)")
    return about if mode in ("none", "once") else None


@contextlib.contextmanager
def _target(base_url: str | None, serve: str | None, recorded: str | None = None) -> Iterator[str]:
    """The URL to fuzz: the given one, the recorded one of a replay-only campaign, or the
    embedded reference server started for this run."""
    if base_url or recorded:
        yield base_url or str(recorded)
        return
    try:
        from agentfuzz.reference import serve_in_thread
    except ImportError:  # pragma: no cover - the reference server ships with the package
        _fail(EXIT_USAGE, "no --base-url given and the reference server is not available")
    profile = DEFAULT_SERVE_PROFILE if serve is None else serve
    try:
        server = serve_in_thread(profile)
        url = server.__enter__()
    except (KeyError, ValueError) as exc:
        _fail(EXIT_USAGE, f"--serve {profile}: {exc.args[0] if exc.args else exc}")
    except (OSError, RuntimeError) as exc:
        _fail(EXIT_USAGE, f"--serve {profile}: cannot start the reference server: {exc}")
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


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
        _fail(EXIT_USAGE, f"--backend {profile}: {exc.args[0] if exc.args else exc}")
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        _fail(EXIT_USAGE, f"--backend {profile}: cannot listen on 127.0.0.1:{port}: {reason}")
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
            _fail(EXIT_USAGE, "--backend-port needs --backend PROFILE")
        return
    if serve is not None:
        _fail(EXIT_USAGE, "--backend runs behind a proxy given by --base-url, not with --serve")
    if base_url is None:
        _fail(EXIT_USAGE, "--backend needs --base-url: the proxy in front of the backend")
    if workers > 1:
        # Which backend request belongs to which client request is only exact one at a time.
        _fail(EXIT_USAGE, "proxy mode (--backend) runs with --workers 1")


def _summary(console: Console, data: dict[str, Any]) -> None:
    """The run's summary (``Report.summary()`` or the merge of the shards') for people."""
    findings = data["findings"]
    table = Table(title="agentfuzz findings")
    table.add_column("oracle", no_wrap=True)
    table.add_column("size", justify="right")
    table.add_column("reproduced", justify="right", no_wrap=True)
    table.add_column("message")
    for f in findings:
        rate = f["reproduced"] + (" flaky" if f["flaky"] else "")
        table.add_row(f["oracle"], str(f["size"]), rate, f["message"])
    if findings:
        console.print(table)
        # Paths on lines of their own, whole, so they can be copied.
        for f in findings:
            path = Path(f["bundle"]) / "repro.json"
            console.print(f"repro: {path}", soft_wrap=True, highlight=False)
    if data["session_turns"]:
        _turn_table(console, data["session_turns"])
    examples = ", ".join(f"{mode} {n}" for mode, n in data["examples"].items())
    shards = f" · {data['shards']} workers" if data.get("shards") else ""
    console.print(
        f"{len(findings)} finding(s) · examples: {examples or 'none'} · "
        f"{data['requests']} requests · {data['elapsed_s']:.1f}s{shards}",
        highlight=False,
    )
    for f in findings:
        if f["flaky"] or f["reproduced"].startswith("0/"):
            what = "flaky: reproduced" if f["flaky"] else "did not reproduce:"
            console.print(
                f"{what} {f['reproduced']} · {f['oracle']}: {f['message']}", highlight=False
            )
    if data["stopped_answering"]:
        console.print("the server stopped answering: the last request it answered is the repro")
    if data["interrupted"]:
        console.print("interrupted: findings so far are written")
    if data.get("out_of_time"):
        console.print(
            "stopped at --max-time: findings so far are written, the last ones maybe not fully "
            "shrunk or confirmed"
        )
    for failed in data.get("failed_shards") or []:
        console.print(f"shard {failed['shard']} failed: {failed['why']}", highlight=False)
    if data.get("error") and not data.get("failed_shards"):
        console.print(f"internal error: {data['error']}", highlight=False)


def _turn_table(console: Console, turns: dict[str, dict[str, int]]) -> None:
    """Sessions per turn number: how many got there, how many failed there."""
    table = Table(title="session turns (last pass of each mode)")
    table.add_column("turn", justify="right")
    table.add_column("sessions reached", justify="right")
    table.add_column("failed there", justify="right")
    table.add_column("rate", justify="right")
    for number, row in turns.items():
        reached, failed = row["reached"], row["failed"]
        table.add_row(number, str(reached), str(failed), f"{failed / reached:.0%}")
    console.print(table)


class _Group(click.Group):
    """A click group whose every failure is one line on stderr and a contract exit code."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        kwargs.setdefault("prog_name", "agentfuzz")

        def invoke() -> Any:
            return click.Group.main(self, *args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]

        code = _run_group(invoke)
        if standalone_mode:
            sys.exit(code)
        return code


def _run_group(invoke: Any) -> int:
    try:
        invoke()
    except _Exit as exc:
        if str(exc):
            click.echo(f"agentfuzz: {exc}", err=True)
        return exc.code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        # Bare ``agentfuzz``: the help is the answer, not an error line.
        click.echo(exc.format_message())
        return EXIT_CLEAN
    except click.UsageError as exc:
        click.echo(f"agentfuzz: {exc.format_message()}", err=True)
        return EXIT_USAGE
    except click.Abort:
        click.echo("agentfuzz: aborted", err=True)
        return 130
    except ProfileError as exc:
        click.echo(f"agentfuzz: {exc}", err=True)
        return EXIT_USAGE
    except TargetUnreachable as exc:
        click.echo(f"agentfuzz: {exc}", err=True)
        return EXIT_UNREACHABLE
    except (CassetteError, NotInCassette) as exc:
        click.echo(f"agentfuzz: {exc}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        click.echo("agentfuzz: interrupted", err=True)
        return 130
    except Exception as exc:  # a bug of ours: still one line, and bundles on disk stay
        click.echo(f"agentfuzz: internal error: {type(exc).__name__}: {exc}", err=True)
        return EXIT_USAGE
    return EXIT_CLEAN


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentfuzz")
def cli() -> None:
    """Fuzz multi-turn tool calling on OpenAI-compatible servers."""


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
def fuzz(
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    api: str | None,
    stream: bool | None,
    mode: str,
    profile: str,
    serve: str | None,
    backend: str | None,
    backend_port: int | None,
    max_examples: int,
    seed: int | None,
    out: Path,
    max_time: float | None,
    workers: int,
    trials: str,
    only: str | None,
    skip: str | None,
    timeout: float,
    record: Path | None,
    cassette: Path | None,
    record_mode: str | None,
    differential: bool,
    quiet: bool,
) -> None:
    """Generate agent histories, send them, check every answer, shrink and write repros."""
    if workers > 1 and cassette is not None:
        _fail(EXIT_USAGE, "--workers > 1 cannot be combined with --cassette yet")
    trial_count = _trials(trials)
    base_url = _base_url(base_url)
    _proxy_mode(backend, backend_port, base_url, serve, workers)
    if differential and workers > 1:
        # Batching on a real server changes greedy outputs: twins must not run beside others.
        _fail(EXIT_USAGE, "--differential runs with --workers 1")
    if backend is not None and cassette is not None:
        _fail(EXIT_USAGE, "proxy mode (--backend) cannot run through --cassette yet")
    if base_url is not None and serve is not None:
        _fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")
    api_key = _api_key(api_key)
    if model is not None and not model.strip():
        _fail(EXIT_USAGE, "--model: empty model name")
    fuzz_profile = load_profile(profile)
    modes = tuple(m for m in ALL_MODES if (api in (None, m[0])) and (stream in (None, m[1])))
    selected, skipped = _names(only), _names(skip) or []
    if selected == []:
        _fail(EXIT_USAGE, f"--oracles {only!r}: names no oracle")
    if not set(oracles.names() if selected is None else selected) - set(skipped):
        _fail(EXIT_USAGE, "--oracles/--skip-oracles leave no oracle to run")
    _writable_out(out)
    if record is not None:
        _writable_out(record, "--record")
    if record_mode is not None and cassette is None:
        _fail(EXIT_USAGE, "--record-mode needs --cassette DIR")
    mode_of_tapes = record_mode or "once"
    recorded = None if cassette is None else _replay_only(cassette, mode_of_tapes)
    replay_only = recorded is not None
    if cassette is not None and not replay_only:
        _writable_out(cassette, "--cassette")
    err = Console(stderr=True)
    about = recorded or {}
    target = about.get("target") if isinstance(about.get("target"), str) else None
    recorded_url = (target or "http://cassette.invalid/v1") if replay_only else None
    with (
        _backend(backend, backend_port or 0, quiet) as backend_log,
        _target(base_url, serve, recorded=recorded_url) as url,
    ):
        recorded_model = about.get("model") if isinstance(about.get("model"), str) else None
        name = model or recorded_model or _first_model(url, api_key, timeout)
        config = FuzzConfig(
            base_url=url,
            model=name,
            profile=fuzz_profile,
            out=out,
            modes=modes,
            kinds=_KINDS[mode],
            api_key=api_key,
            max_examples=max_examples,
            seed=seed,
            trials=trial_count,
            only=selected,
            skip=skipped,
            timeout=timeout,
            record=record,
            cassette=cassette,
            record_mode=mode_of_tapes,
            max_time=max_time,
            backend=backend_log,
            differential=differential,
        )
        total = max_examples * len(modes) * len(config.kinds) * max(workers, 1)
        gap = HEARTBEAT_GAP if workers > 1 else 0.0
        with Watch(err, total, quiet, gap) as watch, _sigterm_as_interrupt():
            data = _campaign(config, workers, watch)
    _summary(Console(), data)
    # For machines: the same summary as data, beside the bundles.
    (out / "summary.json").write_text(json.dumps(data, indent=2) + "\n")
    _exit_for(data)


def _campaign(config: FuzzConfig, workers: int, watch: Progress) -> dict[str, Any]:
    """Run the campaign and return its summary: whatever ended it, what it found is in it."""
    if workers > 1:
        return _sharded(config, workers, watch)
    report = run(config, watch)
    if report.error:
        log = config.out / "error.log"
        log.write_text(report.traceback, encoding="utf-8")
        report.error = f"{report.error} (traceback in {log})"
    return report.summary()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (what CI timeouts and process managers send) stops the run the way Ctrl-C does:
    it ends before its next request and writes its summary. The default comes back after."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (an embedding program): leave its handler be
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _exit_for(data: dict[str, Any]) -> NoReturn:
    """The documented exit code for a finished run's summary, with its one line if any."""
    if data["not_served"]:
        # Repros written so far stay on disk; the run itself tested nothing.
        _fail(
            EXIT_USAGE,
            f"every request was answered {data['not_served']}: nothing was tested "
            "(check --base-url, --api-key, --model)",
        )
    if data["findings"]:
        raise _Exit(EXIT_FOUND, "")
    failed = data.get("failed_shards") or []
    if failed and len(failed) == data["shards"] and all(f["unreachable"] for f in failed):
        _fail(EXIT_UNREACHABLE, str(data["unreachable"]))
    if data.get("error") or failed:
        # The summary above says what broke; nothing was found before it did.
        _fail(EXIT_USAGE, "")
    raise _Exit(EXIT_CLEAN, "")


@cli.command()
@click.argument("profile")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0.0), default=0.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--latency", "latency_ms", type=click.IntRange(min=0), default=0, help="Delay, ms.")
def serve(
    profile: str, host: str, port: int, temperature: float, seed: int, latency_ms: int
) -> None:
    """Run the embedded reference server with a behaviour PROFILE until stopped."""
    from agentfuzz.reference import PROFILES
    from agentfuzz.reference import run as run_server

    if profile not in PROFILES:
        _fail(EXIT_USAGE, f"unknown profile {profile!r} (known: {', '.join(sorted(PROFILES))})")
    try:
        run_server(profile, host, port, temperature=temperature, seed=seed, latency_ms=latency_ms)
    except OSError as exc:  # the address is in use, not ours, or the host does not resolve
        _fail(EXIT_USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}")


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the body splits.")
@click.option("--whole", is_flag=True, help="Replay each body in one piece, unsplit.")
def replay(paths: tuple[Path, ...], seed: int, whole: bool) -> None:
    """Re-check recorded cassettes (files or folders) offline through every oracle.

    Exit 1 if any turn fails an oracle, 2 if a cassette cannot be read.
    """
    from agentfuzz.replay import cassette_files, replay_cassette

    files = cassette_files(paths)
    if not files:
        _fail(EXIT_USAGE, f"no cassette (*.yaml) under {', '.join(map(str, paths))}")
    failing = unreadable = 0
    for path in files:
        try:
            result = replay_cassette(path, None if whole else seed)
        except (CassetteError, NotInCassette) as exc:
            click.echo(f"agentfuzz: {exc}", err=True)
            unreadable += 1
            continue
        failing += result.failed
        click.echo(f"{path}: {len(result.turns)} turn(s)")
        for turn in result.turns:
            now = ", ".join(f"{v.oracle}: {v.message}" for v in turn.violations) or "ok"
            then = (
                ""
                if turn.same
                else "  [recorded: " + (", ".join(v["oracle"] for v in turn.recorded) or "ok") + "]"
            )
            click.echo(f"  turn {turn.number}: {now}{then}")
    click.echo(f"{len(files)} cassette(s): {failing} failing, {unreadable} unreadable")
    if unreadable:
        raise _Exit(EXIT_USAGE, "")
    raise _Exit(EXIT_FOUND if failing else EXIT_CLEAN, "")


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
    from agentfuzz.dialects import InputError, parse_text
    from agentfuzz.minimize import NothingToReduce, reduce_input, write_reduction
    from agentfuzz.target import Target

    if oracle is not None:
        _names(oracle)
    tries = _trials(trials)
    base_url = _base_url(base_url)
    if base_url is not None and serve is not None:
        _fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")
    api_key = _api_key(api_key)
    honours = load_profile(profile).server_honours_seed
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(EXIT_USAGE, f"{file}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    try:
        cases = parse_text(text)
    except InputError as exc:
        _fail(EXIT_USAGE, f"{file}: {exc}")
    if not cases:
        _fail(EXIT_USAGE, f"{file}: holds no request")
    _writable_out(out)
    with _target(base_url, serve) as url:
        name = model or _first_model(url, api_key, timeout)
        target = Target(url, name, api_key, timeout)
        try:
            with _sigterm_as_interrupt():
                reduction = reduce_input(target, cases, oracle, tries, budget, honours)
        except NothingToReduce as exc:
            click.echo(f"agentfuzz: {exc}")
            raise _Exit(EXIT_CLEAN, "") from None
        finally:
            target.close()
    folder = write_reduction(out, reduction, str(file))
    hits, total = reduction.rate
    v = reduction.violation
    click.echo(f"confirmed: {v.oracle} on request {reduction.source + 1} of {len(cases)}")
    click.echo(
        f"reduced: {reduction.original.history.size} -> {reduction.reduced.history.size} items "
        f"({reduction.tries} tries per candidate, {reduction.calls} target calls)"
    )
    rate = f"{hits}/{total}" + (" (flaky)" if 0 < hits < total else "")
    if reduction.interrupted:
        rate = "not measured (interrupted: the smallest failing request so far is written)"
    click.echo(f"reproduced: {rate} · {v.oracle}: {v.message}")
    click.echo(f"repro: {folder / 'repro.json'}")
    raise _Exit(EXIT_FOUND, "")


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the exit code of ``agentfuzz ARGS``."""
    return int(cli.main(args=argv, standalone_mode=False))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
