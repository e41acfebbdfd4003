"""``agentfuzz serve``: the embedded reference server on a port of its own."""

from __future__ import annotations

import click

from agentfuzz.cli._common import fail, meant
from agentfuzz.cli._group import cli
from agentfuzz.cli._options import HOST, port
from agentfuzz.errors import EXIT_USAGE

SERVE_EXIT_CODES = """\b
Exit codes:
  0    stopped (Ctrl-C or SIGTERM)
  2    unknown PROFILE or parser, or the address cannot be listened on"""

__all__ = ["serve"]


@cli.command(epilog=SERVE_EXIT_CODES)
@click.argument("profile")
@HOST
@port(8000)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0.0),
    metavar="FLOAT",
    default=0.0,
    help="Above 0: the faults fire at random.",
)
@click.option("--seed", type=int, metavar="N", default=0, help="Seed of its random choices.")
@click.option(
    "--latency",
    "latency_ms",
    type=click.IntRange(min=0),
    metavar="MS",
    default=0,
    help="Delay before each answer.",
)
@click.option(
    "--latency-per-token",
    "per_token_ms",
    type=click.FloatRange(min=0.0),
    metavar="MS",
    default=0.0,
    help="Further delay per token the model writes.",
)
@click.option(
    "--capacity",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="Requests worked on at once; the rest queue. Default: no limit.",
)
@click.option(
    "--tool-call-parser",
    "tool_parser",
    metavar="NAME",
    default=None,
    help="Read the model's output with this format's parser, as vLLM's option does "
    "(hermes, kimi_k2, qwen3_xml, ...). Default: the profile's.",
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
    tool_parser: str | None,
) -> None:
    """Run the embedded reference server with a behaviour PROFILE until stopped.

    PROFILE: which seed bug (or fix) the server carries; `agentfuzz profiles` lists them and
    says what each does.
    """
    from agentfuzz.reference import BEHAVIOURS, UnknownReader, reader_named
    from agentfuzz.reference import run as run_server

    if profile not in BEHAVIOURS:
        known = ", ".join(sorted(BEHAVIOURS))
        fail(EXIT_USAGE, f"unknown profile {profile!r}{meant(profile)} (known: {known})")
    if tool_parser is not None:
        try:
            reader_named(tool_parser)
        except UnknownReader as exc:
            fail(EXIT_USAGE, f"--tool-call-parser: {exc}")
    try:
        timing = {"latency_ms": latency_ms, "per_token_ms": per_token_ms, "capacity": capacity}
        run_server(
            profile,
            host,
            port,
            temperature=temperature,
            seed=seed,
            tool_parser=tool_parser,
            **timing,
        )
    except OSError as exc:  # the address is in use, not ours, or the host does not resolve
        fail(EXIT_USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}")
