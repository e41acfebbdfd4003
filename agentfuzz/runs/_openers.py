"""A mode's openers: examples judged before its first Hypothesis pass (``passes.fuzz_mode``),
and the example database they write to as Hypothesis would, so what they found replays first
in the next run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, choices_to_bytes

from agentfuzz.model.observation import Violation

__all__ = ["Opening", "database_key", "run_openers", "saver"]

Opening = tuple[Any, tuple[Any, ...] | None]
"""An example and the choices that draw it from the mode's strategy (None: written by hand,
nothing to save)."""


def database_key(db_key: str) -> bytes:
    """The example database's key for a pass keyed ``db_key``."""
    return hashlib.sha1(db_key.encode()).digest()


def saver(database: Path, db_key: str) -> Callable[[tuple[Any, ...]], None]:
    """Saving choices as a failure of the pass keyed ``db_key``, as Hypothesis saves one."""
    saved = DirectoryBasedExampleDatabase(str(database))
    return lambda choices: saved.save(database_key(db_key), choices_to_bytes(choices))


def run_openers(
    openers: Sequence[Opening],
    judged: Callable[[Any], list[Violation]],
    left: dict[str, int],
    on_example: Callable[[], None],
    save: Callable[[tuple[Any, ...]], None] | None,
) -> None:
    """Judge ``openers`` in order, one example of the budget ``left`` each; ``save`` the
    choices of each that shows a violation (where it has any)."""
    for example, choices in openers:
        left["examples"] -= 1
        on_example()
        if judged(example) and save is not None and choices is not None:
            save(choices)
