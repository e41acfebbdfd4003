"""The options several commands share, each defined once: the same flag means the same thing, and
says so in the same words, wherever it appears.

Each is a click decorator; ``secret_options`` gives the two secrets together. Help is one short
line: what the option is and its default. What the names an option takes are, ``agentfuzz
profiles`` and ``agentfuzz oracles`` list.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentfuzz.cli._common import DEFAULT_SERVE_PROFILE

__all__ = [
    "BASE_URL",
    "HOST",
    "MODEL",
    "ORACLES",
    "OUT",
    "PROFILE",
    "SERVE",
    "SKIP_ORACLES",
    "TIMEOUT",
    "TRIALS",
    "Seconds",
    "port",
    "secret_options",
]


class Seconds(click.FloatRange):
    """A number of seconds in a range, and finite: ``nan`` passes every range check (it compares
    false both ways) and ``inf`` means no bound, so both are usage errors, not a run whose
    limits silently never fire."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


BASE_URL = click.option(
    "--base-url",
    metavar="URL",
    help="Server with its /v1. Default: start the reference server.",
)
SERVE = click.option(
    "--serve",
    metavar="PROFILE",
    help=f"Reference server profile to start. Default: {DEFAULT_SERVE_PROFILE}.",
)
MODEL = click.option(
    "--model", metavar="NAME", help="Model name. Default: the first one /v1/models lists."
)
PROFILE = click.option(
    "--profile",
    metavar="NAME|PATH",
    default="default",
    help="Fuzz profile: a name, or a TOML file.",
)
TRIALS = click.option(
    "--trials",
    metavar="K|auto",
    default="1",
    help="Tries per judgement, or auto: by the failure's rate.",
)
OUT = click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="DIR",
    default=Path("agentfuzz-out"),
    help="Folder the repro bundles go in.",
)
TIMEOUT = click.option(
    "--timeout",
    type=Seconds(min=0.1),
    metavar="SECONDS",
    default=60.0,
    help="Seconds one request may take.",
)
ORACLES = click.option("--oracles", "only", metavar="A,B", help="Only these oracles. Default: all.")
SKIP_ORACLES = click.option(
    "--skip-oracles", "skip", metavar="A,B", help="Not these oracles. Default: none."
)
HOST = click.option("--host", metavar="ADDRESS", default="127.0.0.1", help="Address to listen on.")


def port(default: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--port``, listened on; 0 takes a free one, which the command prints."""
    return click.option(
        "--port",
        type=click.IntRange(0, 65535),
        metavar="PORT",
        default=default,
        help="Port to listen on; 0: a free one.",
    )


def secret_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--api-key`` and ``--header/-H``, the secrets a command sends with every request and
    never writes anywhere: one definition for every command that talks to a server."""
    command = click.option(
        "--header",
        "-H",
        "headers",
        multiple=True,
        metavar="'NAME: VALUE'",
        help="Header sent with every request (repeatable); never written.",
    )(command)
    return click.option(
        "--api-key",
        envvar="OPENAI_API_KEY",
        metavar="KEY",
        help="Bearer key; never written. Default: $OPENAI_API_KEY.",
    )(command)
