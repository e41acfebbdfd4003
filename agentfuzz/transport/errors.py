"""The transport's failures that the faces map to exit codes: each ``str()`` is one line.

The one part of ``agentfuzz.transport`` the command line, the pytest modules, findings and
bundles may import.
"""

from __future__ import annotations

__all__ = ["CassetteError", "ModelListError", "NotInCassette", "TargetUnreachable"]


class TargetUnreachable(Exception):
    """The server could not be connected to at all (refused, DNS failure, connect timeout)."""


class ModelListError(Exception):
    """``GET /models`` answered, but not with a model list (or with an empty one)."""


class CassetteError(Exception):
    """A cassette that cannot be used; ``str()`` is one line naming the file and the fault."""


class NotInCassette(Exception):
    """A request the cassette does not hold; ``str()`` names the closest one and what differs."""
