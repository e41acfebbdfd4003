"""The ``agentfuzz`` click group: every failure one line on stderr and a contract exit code."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentfuzz.cli._common import EXIT_CLEAN, EXIT_UNREACHABLE, EXIT_USAGE, Exit
from agentfuzz.profiles import ProfileError
from agentfuzz.transport.errors import CassetteError, NotInCassette, TargetUnreachable

__all__ = ["cli"]


class _Group(click.Group):
    """A click group whose every failure is one line on stderr and a contract exit code."""

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


def _run_group(invoke: Any) -> int:
    try:
        invoke()
    except Exit as exc:
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
