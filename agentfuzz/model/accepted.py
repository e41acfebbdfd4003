"""What the faces accept, said once: record modes and base URLs.

Imports nothing of the package (the pytest plugin reads it when pytest loads, before anything
heavy may be imported).
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["RECORD_MODES", "base_url_problem"]

# vcrpy's record modes, as ``--record-mode`` and ``--agentfuzz-record-mode`` take them.
RECORD_MODES = ("once", "none", "new_episodes", "all")


def base_url_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a server's base URL (``http://host:8000/v1``), or None."""
    try:
        parts = urlsplit(value)
        port = parts.port  # ValueError when not a number in 0-65535
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return "expected an http:// or https:// URL, e.g. http://host:8000/v1"
    if not parts.hostname:
        return "no host"
    if port == 0:
        return "port 0"
    if any(c.isspace() or not c.isprintable() for c in value):
        return "contains whitespace or control characters"
    return None
