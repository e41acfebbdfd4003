"""Every failure a face maps to an exit code, and the codes themselves.

Each ``str()`` is one line, the line a user reads. Imports nothing of the package, so any layer
may raise these and any face may catch them without reaching into the layer that raised them.
"""

from __future__ import annotations

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FOUND",
    "EXIT_INTERRUPTED",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "CassetteError",
    "InputError",
    "ModelListError",
    "NotInCassette",
    "NothingToReduce",
    "ProbeFailed",
    "ProfileError",
    "TargetUnreachable",
]

# The contract's exit codes: nothing found, failures found, usage/config/input error, the
# target unreachable; and a run a person interrupted (Ctrl-C), as shells count SIGINT.
EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130


class TargetUnreachable(Exception):
    """The server could not be connected to at all (refused, DNS failure, connect timeout)."""


class ModelListError(Exception):
    """``GET /models`` answered, but not with a model list (or with an empty one)."""


class NotAnApi(ModelListError):
    """``GET /models`` answered with a web page: what answers there is no OpenAI API, so
    naming a model would not help."""


class CassetteError(Exception):
    """A cassette that cannot be used; ``str()`` is one line naming the file and the fault."""


class NotInCassette(Exception):
    """A request the cassette does not hold; ``str()`` names the closest one and what differs."""


class InputError(ValueError):
    """An input agentfuzz cannot import; ``str()`` is one line saying what is wrong and where."""


class ProfileError(Exception):
    """A profile that cannot be used; the message is one line naming the file and the field."""


class NothingToReduce(Exception):
    """No request of the input fails on the target; ``str()`` says so in one line."""


class ProbeFailed(Exception):
    """The probe's requests were not answered: no curve to read a knee from."""
