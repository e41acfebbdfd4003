"""The ``agentfuzz`` command line: ``fuzz``, ``reduce``, ``replay``, ``serve``, ``proxy``,
``profiles`` and ``oracles``.

One module per command (``fuzz.py``, ``reduce.py``, ``replay.py``, ``serve.py``, ``proxy.py``;
the two listings in ``listing.py``); ``fuzz``'s options and their checks (``_fuzz_options.py``,
``_preflight.py``); the options several commands share (``_options.py``); the summary's
rendering (``_render.py``), the click group (``_group.py``), its config file (``_config.py``),
what help says beyond click (``_help.py``) and what every command shares (``_common.py``: the
one-line failures, the shared option checks, the embedded reference server, the signals). A
command parses its options, calls ``agentfuzz.runs``, and maps what comes back to an exit code.
"""

from __future__ import annotations

from agentfuzz.cli import fuzz, listing, proxy, reduce, replay, serve
from agentfuzz.cli._group import cli

__all__ = ["cli", "main"]

# The commands register with the group when imported.
_COMMANDS = (fuzz, reduce, replay, serve, proxy, listing)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the exit code of ``agentfuzz ARGS``."""
    return int(cli.main(args=argv, standalone_mode=False))
