"""The ``agentfuzz`` command line: ``fuzz``, ``reduce``, ``replay``, ``serve``, ``proxy``,
``profiles`` and ``oracles``.

One module per command (``fuzz.py``, ``reduce.py``, ``replay.py``, ``serve.py``, ``proxy.py``;
the two listings in ``listing.py``); ``fuzz``'s options and their checks (``_fuzz_options.py``,
``_preflight.py``); the options several commands share (``_options.py``); the summary's
rendering (``_render.py``, ``_coverage.py``), the click group (``_group.py``), its config file
(``_config.py``), what help says beyond click (``_help.py``), text from a server made safe to
print (``_printable.py``), "did you mean" (``_suggest.py``) and what every command shares
(``_common.py``: the one-line failures, the shared option checks, the embedded reference
server, the signals). A command parses its options, calls ``agentfuzz.runs``, and maps what
comes back to an exit code.

This module imports nothing of them until ``main`` runs (or ``cli`` is asked for): loading the
commands takes a second or more, and a Ctrl-C in it is an interrupt like any other, one line
and exit 130, not a traceback from the console script's import.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentfuzz.cli._group import cli

__all__ = ["cli", "main"]

# Exit code of an interrupted command (``errors.EXIT_INTERRUPTED``, not imported: see above).
_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the exit code of ``agentfuzz ARGS``."""
    try:
        group = _commands()
    except KeyboardInterrupt:
        sys.stderr.write("agentfuzz: interrupted\n")
        return _INTERRUPTED
    return int(group.main(args=argv, standalone_mode=False))


def _commands() -> Any:
    """The click group with every command registered (each registers when imported)."""
    from agentfuzz.cli import fuzz, listing, proxy, puppet, reduce, replay, serve  # noqa: F401
    from agentfuzz.cli._group import cli

    return cli


def __getattr__(name: str) -> Any:
    if name == "cli":
        return _commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
