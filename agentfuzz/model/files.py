"""Files written at once: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then replace.

    The temporary name is unique, so threads or processes writing the same path do not collide
    (the last replace wins, whole), and it does not end like the file, so nothing collecting
    ``*.yaml`` or ``*.json`` meanwhile takes it for one.
    """
    with tempfile.NamedTemporaryFile(
        "w",
        encoding="utf-8",
        dir=path.parent,
        prefix=f".{path.name}.",
        suffix=".part",
        delete=False,
    ) as part:
        part.write(text)
    os.chmod(part.name, mode)
    os.replace(part.name, path)
