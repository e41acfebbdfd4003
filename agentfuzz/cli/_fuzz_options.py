"""``agentfuzz fuzz``'s options: the click declarations, one short line of help each, and
``FuzzOptions``, the command line as click parsed it. The options other commands share come from
``_options``; the manual (docs/live-server.md) says what each does at length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click

from agentfuzz.cli._options import (
    BASE_URL,
    MODEL,
    ORACLES,
    OUT,
    PROFILE,
    SERVE,
    SKIP_ORACLES,
    TIMEOUT,
    TRIALS,
    Seconds,
    secret_options,
)
from agentfuzz.model.accepted import RECORD_MODES
from agentfuzz.output.reports import FORMATS as REPORT_FORMATS

__all__ = ["FuzzOptions", "fuzz_options"]


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


class _PuppetFormat(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2 only
    """``--puppet``: a tool-call format of the puppet's catalog, with the closest ones named."""

    name = "FORMAT"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from agentfuzz.errors import InputError
        from agentfuzz.puppet.formats import format_named

        try:
            return format_named(str(value)).name
        except InputError as exc:
            self.fail(str(exc), param, ctx)


_SECONDS = Seconds(min=0.0, min_open=True)
_FOLDER = click.Path(path_type=Path)

# In the order --help lists them.
_OPTIONS: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...] = (
    BASE_URL,
    MODEL,
    secret_options,
    click.option(
        "--wait-for-server",
        type=_SECONDS,
        metavar="SECONDS",
        help="First wait for GET /models to answer 200; then exit 3.",
    ),
    click.option("--api", type=click.Choice(["chat", "responses"]), help="Only this API."),
    click.option(
        "--stream/--no-stream",
        default=None,
        show_default=False,
        help="Only streaming, or only non-streaming requests.",
    ),
    click.option(
        "--mode",
        type=click.Choice(["synthetic", "session", "both"]),
        metavar="KIND",
        default="synthetic",
        help="synthetic, session (real sessions) or both.",
    ),
    PROFILE,
    SERVE,
    click.option(
        "--backend", metavar="PROFILE", help="Middleman mode: reference server behind --base-url."
    ),
    click.option(
        "--backend-port",
        type=click.IntRange(0, 65535),
        metavar="PORT",
        help="Port of --backend. Default: a free one.",
    ),
    click.option(
        "--max-examples",
        type=click.IntRange(min=1),
        metavar="N",
        default=100,
        help="Examples per mode, kind and worker.",
    ),
    click.option(
        "--seed",
        type=int,
        metavar="N",
        help="Seed of a repeatable run. Default: one drawn, and printed.",
    ),
    OUT,
    click.option(
        "--max-time",
        type=_SECONDS,
        metavar="SECONDS",
        help="Stop after this long, and report. Default: no limit.",
    ),
    click.option(
        "--max-failures",
        type=click.IntRange(min=1),
        metavar="N",
        help="Stop fuzzing at N distinct failures. Default: no limit.",
    ),
    click.option(
        "--workers",
        type=_Workers(),
        default=1,
        help="Shards in parallel, or auto: the server's knee.",
    ),
    TRIALS,
    ORACLES,
    SKIP_ORACLES,
    TIMEOUT,
    click.option(
        "--record", type=_FOLDER, metavar="DIR", help="Write every example as a cassette here."
    ),
    click.option(
        "--cassette", type=_FOLDER, metavar="DIR", help="Run the campaign through cassettes here."
    ),
    click.option(
        "--record-mode",
        type=click.Choice(RECORD_MODES),
        metavar="MODE",
        help="With --cassette: once (default), none, new_episodes, all.",
    ),
    click.option(
        "--seed-sessions",
        type=_FOLDER,
        metavar="DIR",
        help="Start from the requests captured under DIR.",
    ),
    click.option(
        "--differential", is_flag=True, help="Send each request again, stream flipped; compare."
    ),
    click.option(
        "--puppet",
        type=_PuppetFormat(),
        help="Script what the model writes, in this tool-call format (docs/puppet.md).",
    ),
    click.option("--quiet", is_flag=True, help="No progress bar or heartbeat lines."),
    click.option(
        "--coverage",
        is_flag=True,
        help="Print the request surface coverage table, not its one line.",
    ),
    click.option(
        "--report",
        "reports",
        type=(click.Choice(REPORT_FORMATS), _FOLDER),
        multiple=True,
        metavar="FORMAT PATH",
        help="Also write html DIR, or markdown FILE (repeatable).",
    ),
    click.option("--junit-xml", type=_FOLDER, metavar="FILE", help="Also write JUnit XML for CI."),
)


def fuzz_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with every option of ``agentfuzz fuzz``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


@dataclass(frozen=True)
class FuzzOptions:
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
    puppet: str | None
    quiet: bool
    coverage: bool
    reports: tuple[tuple[str, Path], ...]
    junit_xml: Path | None
