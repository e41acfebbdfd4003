"""Files written at once: a reader sees the old file or the new one, never half of either.

``write_atomically`` is the one way agentfuzz writes a file (bundles, cassettes, reports,
``summary.json``, ``error.log``), so what every file must hold true holds here: the secrets a
run knows are masked (``model.secrets``), and a write that fails (a full disk, Ctrl-C) leaves
the old file and no ``.part`` behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import IO, TypeGuard

from agentfuzz.model.secrets import mask

__all__ = ["disk_full", "disk_full_line", "write_atomically"]


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then replace.

    The temporary name is unique, so threads or processes writing the same path do not collide
    (the last replace wins, whole), and it does not end like the file, so nothing collecting
    ``*.yaml`` or ``*.json`` meanwhile takes it for one.
    """
    text = mask(text)
    part: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w",
            encoding="utf-8",
            dir=path.parent,
            prefix=f".{path.name}.",
            suffix=".part",
            delete=False,
        ) as sink:
            part = sink.name
            _fill(sink, text)
        os.chmod(part, mode)
        os.replace(part, path)
    except BaseException as exc:
        if part is not None:
            with contextlib.suppress(OSError):
                os.unlink(part)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a failed write names no file: the one it was for
        raise


def _fill(sink: IO[str], text: str) -> None:
    """Where the bytes go (tests make it fail as a full disk does)."""
    sink.write(text)


def disk_full(exc: BaseException) -> TypeGuard[OSError]:
    """Whether ``exc`` says the disk (or the user's quota on it) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_line(exc: OSError) -> str:
    """The one line a run that met a full disk ends with."""
    where = f" writing {exc.filename}" if exc.filename else ""
    return f"disk full{where}: what was written before stays (free some space and run again)"
