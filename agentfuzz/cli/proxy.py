"""``agentfuzz proxy``: watch a real agent's traffic to a server, turn by turn."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from agentfuzz.cli._common import (
    Exit,
    checked_url,
    command_line,
    fail,
    oracle_names,
    stop_signals,
    url_hint,
    waited_for,
    writable_out,
    write_pytest_ini,
)
from agentfuzz.cli._group import cli
from agentfuzz.cli._options import HOST, ORACLES, OUT, PROFILE, SKIP_ORACLES, port
from agentfuzz.errors import EXIT_CLEAN, EXIT_FOUND, EXIT_UNREACHABLE, EXIT_USAGE
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.config import new_run_id, version

if TYPE_CHECKING:
    from agentfuzz.runs.watch import Watch

PROXY_EXIT_CODES = """\b
Exit codes (once stopped with Ctrl-C or SIGTERM):
  0    nothing found in what went through
  1    failures found (bundles written under --out)
  2    usage error, or the address cannot be listened on
  3    the upstream cannot be reached when the proxy starts (or, with
       --wait-for-server, its GET /models did not answer 200 in time)"""

__all__ = ["proxy"]


@cli.command(epilog=PROXY_EXIT_CODES)
@click.option(
    "--upstream", required=True, metavar="URL", help="The server the agent talks to, with its /v1."
)
@HOST
@port(8100)
@click.option(
    "--record",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Also write every session here as it grows.",
)
@OUT
@PROFILE
@ORACLES
@SKIP_ORACLES
@click.option(
    "--timeout",
    type=click.FloatRange(min=1.0),
    metavar="SECONDS",
    default=600.0,
    help="Seconds one answer may take in all; then it is cut (the client's connection dropped).",
)
@click.option(
    "--wait-for-server",
    type=click.FloatRange(min=0.0, min_open=True),
    metavar="SECONDS",
    help="First wait for the upstream's GET /models to answer 200; then exit 3.",
)
def proxy(
    upstream: str,
    host: str,
    port: int,
    record: Path | None,
    out: Path,
    profile: str,
    only: str | None,
    skip: str | None,
    timeout: float,
    wait_for_server: float | None,
) -> None:
    """Stand between an agent and its server, and judge every turn that goes through.

    Point the client's base URL at the proxy (the line 'listening on URL' says where). Each
    request goes upstream unchanged, its headers and key too, and each answer streams back as
    it comes, byte for byte. Meanwhile every chat and Responses turn is assembled and judged,
    and the turns of one conversation are judged as a session. A failing turn prints one line
    and writes a bundle at once, with the whole session up to it (session.json, session.yaml):
    `agentfuzz reduce BUNDLE/session.json` cuts it down. Stop with Ctrl-C; nothing is lost.

    One answer is relayed for --timeout seconds at most, and the proxy keeps only its first
    32 MiB to judge: an upstream that streams without end cannot hang it or fill its memory.
    With --wait-for-server the proxy may start before its upstream (the key for GET /models
    is $OPENAI_API_KEY, when set).
    """
    from agentfuzz.runs.watch import run_proxy

    checked_url(upstream, "--upstream")
    _finite(timeout, "--timeout")
    if wait_for_server is not None:
        _wait(upstream, wait_for_server)
    watch = _watch(upstream, out, record, profile, only, skip, timeout)

    def listening(url: str) -> None:
        click.echo(f"listening on {url} (forwarding to {upstream.rstrip('/')})")

    try:
        # uvicorn stops on Ctrl-C or SIGTERM, then raises the signal again: taken as Ctrl-C here,
        # so what is still queued is judged and written before the command ends.
        with stop_signals():
            run_proxy(upstream, watch, host, port, listening)
    except OSError as exc:
        watch.close()
        fail(EXIT_USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass
    watch.close()
    _tally(watch, out)


def _finite(seconds: float, flag: str) -> None:
    """Exit 2 for ``inf`` or ``nan``, which click's range lets through: no bound at all."""
    if not math.isfinite(seconds):
        fail(EXIT_USAGE, f"{flag} {seconds}: expected a finite number of seconds")


def _wait(upstream: str, seconds: float) -> None:
    """``--wait-for-server``, as ``fuzz`` waits; its last line says what to try when the URL
    itself suggests it (no ``/v1``: the models list is never found there)."""
    _finite(seconds, "--wait-for-server")
    try:
        waited_for(upstream, seconds, os.environ.get("OPENAI_API_KEY"), {})
    except Exit as exc:
        hint = url_hint(upstream)
        raise Exit(exc.code, f"{exc} ({hint})" if hint else str(exc)) from None


def _watch(
    upstream: str,
    out: Path,
    record: Path | None,
    profile: str,
    only: str | None,
    skip: str | None,
    timeout: float,
) -> Watch:
    """What judges the traffic; first exit 2 for an option that cannot work, and 3 for an
    upstream that cannot be reached."""
    from agentfuzz.runs.watch import Watch, reachable

    chosen, skipped = oracle_names(only), oracle_names(skip) or []
    fuzz_profile = load_profile(profile)
    writable_out(out)
    if record is not None:
        writable_out(record, "--record")
    if not reachable(upstream):
        hint = url_hint(upstream)
        fail(EXIT_UNREACHABLE, f"cannot connect to {upstream}" + (f" ({hint})" if hint else ""))
    found_by = {"command": command_line(), "agentfuzz": version(), "run": new_run_id()}
    return Watch(
        upstream,
        out,
        record,
        # ``captured``: the request came from a client, as it sent it (REPORT.md says so).
        found_by=found_by | {"profile": fuzz_profile.name, "captured": True},
        only=chosen,
        skip=skipped,
        model_signatures=fuzz_profile.quiet_signatures,
        markup=fuzz_profile.markup,
        say=lambda line: click.echo(f"agentfuzz: {line}"),
        timeout=timeout,
        hint=url_hint(upstream),
    )


def _tally(watch: Watch, out: Path) -> NoReturn:
    """What went through, in one line, and the exit code it makes."""
    sessions = len(watch.sessions.all)
    unread = f"; {watch.unread} requests not read as chat or Responses" if watch.unread else ""
    unread += f"; {watch.cut} answers too large to judge" if watch.cut else ""
    click.echo(
        f"agentfuzz proxy: {watch.judged} turns judged in {sessions} sessions, "
        f"{len(watch.caught)} findings" + (f" (bundles in {out})" if watch.caught else "") + unread
    )
    if watch.caught:
        write_pytest_ini(out)
        raise Exit(EXIT_FOUND, "")
    raise Exit(EXIT_CLEAN, "")
