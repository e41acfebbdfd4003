"""``agentfuzz serve``: the embedded reference server on a port of its own."""

from __future__ import annotations

import click

from agentfuzz.cli._common import fail
from agentfuzz.cli._group import cli
from agentfuzz.errors import EXIT_USAGE

SERVE_EXIT_CODES = """\b
Exit codes:
  0    stopped (Ctrl-C or SIGTERM)
  2    unknown PROFILE, or the address cannot be listened on"""

__all__ = ["serve"]


@cli.command(epilog=SERVE_EXIT_CODES)
@click.argument("profile")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: a free one; the line 'listening on http://HOST:PORT' says which).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0.0),
    default=0.0,
    show_default=True,
    help="The scripted model's temperature: above 0 its faults fire at random (a flaky target).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the server's random choices (at --temperature above 0).",
)
@click.option(
    "--latency",
    "latency_ms",
    type=click.IntRange(min=0),
    default=0,
    help="Delay before each answer, refusals included, in milliseconds (a GPU server's queue "
    "and prefill).",
)
@click.option(
    "--latency-per-token",
    "per_token_ms",
    type=click.FloatRange(min=0.0),
    default=0.0,
    help="Further delay per token the scripted model writes (4 characters of its text), in "
    "milliseconds, spread over a stream's events.",
)
@click.option(
    "--capacity",
    type=click.IntRange(min=1),
    default=None,
    help="Requests worked on at once; the rest queue, so throughput stops growing at this many "
    "in flight, as a GPU server's does once its batch is full. GET /load says how many were in "
    "flight, and for how long. Default: no limit.",
)
def serve(
    profile: str,
    host: str,
    port: int,
    temperature: float,
    seed: int,
    latency_ms: int,
    per_token_ms: float,
    capacity: int | None,
) -> None:
    """Run the embedded reference server with a behaviour PROFILE until stopped.

    PROFILE: which seed bug (or fix) the server carries, one of {serve_profiles}
    (`agentfuzz profiles` says what each does).
    """
    from agentfuzz.reference import PROFILES
    from agentfuzz.reference import run as run_server

    if profile not in PROFILES:
        fail(EXIT_USAGE, f"unknown profile {profile!r} (known: {', '.join(sorted(PROFILES))})")
    try:
        timing = {"latency_ms": latency_ms, "per_token_ms": per_token_ms, "capacity": capacity}
        run_server(profile, host, port, temperature=temperature, seed=seed, **timing)
    except OSError as exc:  # the address is in use, not ours, or the host does not resolve
        fail(EXIT_USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}")
