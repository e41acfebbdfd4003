"""``agentfuzz puppet``: what a vLLM server needs to run the puppet processor.

``agentfuzz puppet vllm-args`` prints the arguments to add to ``vllm serve`` and the
environment its process needs. The processor's module imports only vLLM, torch and the stdlib
(and its two stdlib-only neighbours), so the server's Python needs agentfuzz on its
``PYTHONPATH``, not installed. Where agentfuzz itself sits in an environment's site-packages,
that folder would bring every package of the environment with it; ``--export DIR`` writes the
processor's files alone to DIR instead, for a server on another machine or in a container.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import click

import agentfuzz
from agentfuzz.cli._common import Exit
from agentfuzz.cli._group import cli
from agentfuzz.errors import EXIT_USAGE, InputError
from agentfuzz.puppet.channel import KEY
from agentfuzz.puppet.formats import format_named

__all__ = ["PROCESSOR", "SERVER_FILES", "export", "puppet", "server_args", "server_env"]

# What `--logits-processors` names: module:class, importable by the server's Python.
PROCESSOR = "agentfuzz.puppet.vllm_processor:PuppetProcessor"
# The files of agentfuzz/puppet/ the server imports.
SERVER_FILES = ("channel.py", "forcing.py", "vllm_processor.py")

PUPPET_EXIT_CODES = """\b
Exit codes:
  0    printed
  2    unknown --parser, or --export cannot be written"""


@cli.group()
def puppet() -> None:
    """The puppet model: a vLLM server that writes what agentfuzz scripts.

    A logits processor loaded into the server forces each scripted request's output, token by
    token, through the real tokenizer, chat template, tool parser and streaming code.
    """


@puppet.command("vllm-args", epilog=PUPPET_EXIT_CODES)
@click.option(
    "--format",
    "form",
    type=click.Choice(["text", "args", "env", "json"]),
    default="text",
    help="text: both, explained; args: the arguments on one line, for $(...); env: NAME=VALUE "
    "lines; json: an object with args, env, the processor and the vllm_xargs key.",
)
@click.option(
    "--parser",
    metavar="NAME",
    default=None,
    help="Also add --enable-auto-tool-choice --tool-call-parser NAME (a format of the "
    "catalog, e.g. hermes, kimi_k2).",
)
@click.option(
    "--export",
    "export_to",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write the processor's files alone to this folder and point PYTHONPATH at it "
    "(for a server on another machine or in a container: copy the folder there).",
)
def vllm_args(form: str, parser: str | None, export_to: Path | None) -> None:
    """Print what to add to `vllm serve` so it runs the puppet processor.

    \b
    PYTHONPATH=ROOT vllm serve MODEL $(agentfuzz puppet vllm-args --format args)
    """
    try:
        args = server_args(parser)
    except InputError as exc:
        raise Exit(EXIT_USAGE, str(exc)) from None
    root = _source_root() if export_to is None else _exported(export_to)
    env = server_env(root)
    if form == "args":
        click.echo(shlex.join(args))
    elif form == "env":
        click.echo("\n".join(f"{name}={value}" for name, value in env.items()))
    elif form == "json":
        about = {"args": args, "env": env, "processor": PROCESSOR, "vllm_xargs_key": KEY}
        click.echo(json.dumps(about, indent=2))
    else:
        click.echo("# add to `vllm serve MODEL ...`:")
        click.echo(shlex.join(args))
        click.echo("# in the server's environment:")
        click.echo("\n".join(f"{name}={shlex.quote(value)}" for name, value in env.items()))


def server_args(parser: str | None = None) -> list[str]:
    """The arguments to add to ``vllm serve``; ``InputError`` for an unknown parser."""
    args = ["--logits-processors", PROCESSOR]
    if parser is not None:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", format_named(parser).name]
    return args


def server_env(root: Path) -> dict[str, str]:
    """The environment the server's process needs: ``root`` (the folder holding the
    ``agentfuzz`` package) on its ``PYTHONPATH``."""
    return {"PYTHONPATH": str(root)}


def export(folder: Path) -> Path:
    """Write ``folder/agentfuzz/puppet/`` with the processor's files and empty package
    markers, so ``folder`` on ``PYTHONPATH`` brings nothing else; returns ``folder``."""
    package = folder / "agentfuzz" / "puppet"
    source = Path(agentfuzz.__file__).parent / "puppet"
    if package.resolve() == source.resolve():
        raise OSError(f"{folder} holds agentfuzz itself; pick another folder")
    package.mkdir(parents=True, exist_ok=True)
    (folder / "agentfuzz" / "__init__.py").write_text('"""agentfuzz: the puppet processor."""\n')
    (package / "__init__.py").write_text('"""The puppet processor and its channel."""\n')
    for name in SERVER_FILES:
        shutil.copyfile(source / name, package / name)
    return folder


def _exported(folder: Path) -> Path:
    try:
        return export(folder).resolve()
    except OSError as exc:
        raise Exit(EXIT_USAGE, f"--export {folder}: {exc.strerror or exc}") from None


def _source_root() -> Path:
    """The folder holding the ``agentfuzz`` package; a warning where it is an environment's
    site-packages, which would bring every package of that environment to the server."""
    root = Path(agentfuzz.__file__).resolve().parent.parent
    if root.name in ("site-packages", "dist-packages"):
        click.echo(
            f"agentfuzz: warning: {root} holds every package of this environment; "
            "--export DIR gives the server the processor alone",
            err=True,
        )
    return root
