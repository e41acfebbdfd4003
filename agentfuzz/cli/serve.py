"""``agentfuzz serve``: the embedded reference server on a port of its own."""

from __future__ import annotations

import click

from agentfuzz.cli._common import EXIT_USAGE, fail
from agentfuzz.cli._group import cli

__all__ = ["serve"]


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
        fail(EXIT_USAGE, f"unknown profile {profile!r} (known: {', '.join(sorted(PROFILES))})")
    try:
        run_server(profile, host, port, temperature=temperature, seed=seed, latency_ms=latency_ms)
    except OSError as exc:  # the address is in use, not ours, or the host does not resolve
        fail(EXIT_USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}")
