"""The ``agentfuzz`` click group: every failure one line on stderr and a contract exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agentfuzz.cli._common import Exit
from agentfuzz.cli._help import EXIT_CODES, HelpfulGroup
from agentfuzz.cli._printable import printable
from agentfuzz.errors import (
    EXIT_CLEAN,
    EXIT_INTERRUPTED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CassetteError,
    NotInCassette,
    ProfileError,
    TargetUnreachable,
)

__all__ = ["cli"]


class _Group(HelpfulGroup):
    """A click group whose every failure is one line on stderr and a contract exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # ``agentfuzz fuzz --config F`` as ``agentfuzz --config F fuzz``: the file must be read
        # before the command's options are (it is their default_map).
        return super().parse_args(ctx, _config_first(args))

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        kwargs.setdefault("prog_name", "agentfuzz")
        # The words as typed (click's own default is sys.argv), for each bundle's found_by.
        given = kwargs.get("args", args[0] if args else None)
        words = sys.argv[1:] if given is None else list(given)
        kwargs.setdefault("obj", {"argv": words})

        def invoke() -> Any:
            return click.Group.main(self, *args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]

        code = _run_group(invoke)
        if standalone_mode:
            sys.exit(code)
        return code


def _say(line: str) -> None:
    """One line on stderr; what a server said in it is escaped, never obeyed by the terminal."""
    click.echo(f"agentfuzz: {printable(line)}", err=True)


def _run_group(invoke: Any) -> int:
    try:
        invoke()
    except Exit as exc:
        if str(exc):
            _say(str(exc))
        return exc.code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        # Bare ``agentfuzz``: the help is the answer, not an error line.
        click.echo(exc.format_message())
        return EXIT_CLEAN
    except click.UsageError as exc:
        _say(exc.format_message())
        return EXIT_USAGE
    except click.Abort:
        _say("aborted")
        return EXIT_INTERRUPTED
    except TargetUnreachable as exc:
        _say(str(exc))
        return EXIT_UNREACHABLE
    except (ProfileError, CassetteError, NotInCassette) as exc:
        _say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: still one line, and bundles on disk stay
        _say(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_USAGE
    return EXIT_CLEAN


def _config_first(args: list[str]) -> list[str]:
    """``args`` with a ``--config FILE`` (or ``--config=FILE``) given after the command moved
    before it; nothing past a ``--`` moves."""
    end = args.index("--") if "--" in args else len(args)
    for i, word in enumerate(args[:end]):
        if word == "--config" and i + 1 < end:
            return [*args[i : i + 2], *args[:i], *args[i + 2 :]]
        if word.startswith("--config="):
            return [word, *args[:i], *args[i + 1 :]]
    return args


def _version(ctx: click.Context) -> None:
    """``--version``: the version each bundle's ``found_by`` records, commit and all
    (``0.1.0+g1a2b3c4``), so the two never disagree."""
    from agentfuzz.runs.config import version

    click.echo(f"agentfuzz, version {version()}")
    ctx.exit(EXIT_CLEAN)


_SETTINGS = {"help_option_names": ["-h", "--help"], "show_default": True, "max_content_width": 100}


@click.group(cls=_Group, context_settings=_SETTINGS, epilog=EXIT_CODES)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _, given: _version(ctx) if given else None,
    help="Show the version (as every bundle records it) and exit.",
)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="AGENTFUZZ_CONFIG",
    help="Read option defaults from this TOML file (keys are option names; ${ENV} expanded; the "
    "command line wins). Default: ./agentfuzz.toml, else [tool.agentfuzz] in ./pyproject.toml. "
    "Also $AGENTFUZZ_CONFIG; may follow the command.",
)
@click.pass_context
def cli(ctx: click.Context, config: Path | None) -> None:
    """Fuzz multi-turn tool calling on OpenAI-compatible servers.

    `agentfuzz profiles` and `agentfuzz oracles` list what exists; `agentfuzz COMMAND --help`
    says what each command takes.
    """
    from agentfuzz.cli._config import config_defaults, config_in_force

    assert isinstance(ctx.command, click.Group)
    ctx.default_map = config_defaults(ctx.command, ctx, config)
    if isinstance(ctx.obj, dict):
        ctx.obj["config"] = config_in_force(ctx, ctx.invoked_subcommand)
