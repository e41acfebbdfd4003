"""Recorded campaigns on disk: which cassettes are parts of one, and what they say about it.

Light on purpose (standard library only at the top): the pytest plugin's collector asks
``is_campaign_cassette`` about every YAML file in every pytest run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = [
    "campaign_parts",
    "forget_campaign",
    "is_campaign_cassette",
    "recorded_campaign",
    "shard_tapes",
]

# How much of a cassette's end holds a campaign's metadata (a handful of short keys).
_TAIL_BYTES = 4096
_CAMPAIGN_KIND = re.compile(r"\Ametadata:\n  agentfuzz:\n(?:    .*\n)*?    kind: campaign$", re.M)


def is_campaign_cassette(path: Path) -> bool:
    """Whether ``path`` is a part of a recorded campaign (metadata ``kind: campaign``).

    Only the file's end is read: the metadata comes last, and a campaign's is a few short lines.
    """
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - _TAIL_BYTES))
            tail = file.read().decode("utf-8", errors="replace")
    except OSError:
        return False
    start = tail.rfind("\nmetadata:\n")
    return start >= 0 and _CAMPAIGN_KIND.search(tail[start + 1 :]) is not None


def campaign_parts(folder: Path) -> list[Path]:
    """The campaign cassettes in ``folder``, sorted."""
    return sorted(p for p in folder.glob("*.yaml") if is_campaign_cassette(p))


def shard_tapes(folder: Path) -> list[Path]:
    """The folders a ``--workers N`` campaign recorded under ``folder``, one per shard
    (``shard-K``) that holds a part, sorted by K."""
    found = [d for d in folder.glob("shard-*") if d.name[6:].isdigit() and campaign_parts(d)]
    return sorted(found, key=lambda d: int(d.name[6:]))


def forget_campaign(folder: Path) -> None:
    """Remove a campaign's parts before ``--record-mode all`` records it anew: a part the new
    campaign never reaches (no findings, so no ``shrink.yaml``) must not linger from an old one,
    where it would pass for part of the new campaign and lend it its metadata."""
    for tapes in [folder, *shard_tapes(folder)] if folder.is_dir() else []:
        for part in campaign_parts(tapes):
            part.unlink()


def recorded_campaign(folder: Path) -> dict[str, Any] | None:
    """What the campaign cassettes in ``folder`` say about the run that recorded them (target,
    model, profile, seed), or None when the folder holds none."""
    from agentfuzz.wire.transport.cassette import load_cassette, metadata

    parts = campaign_parts(folder) if folder.is_dir() else []
    if not parts and folder.is_dir() and (shards := shard_tapes(folder)):
        parts = campaign_parts(shards[0])
    if not parts:
        return None
    # Every part carries the same metadata: read the smallest.
    smallest = min(parts, key=lambda p: p.stat().st_size)
    return metadata(load_cassette(smallest))
