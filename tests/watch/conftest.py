"""``agentfuzz proxy`` in front of the reference server, with real agent clients driving it.

The clients are the live recipe's own (``live/agents/clients.py``): the plain openai SDK loop
and the OpenAI Agents SDK's ``Runner``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from agentfuzz.reference import serve_in_thread
from agentfuzz.watch import Watch, watching

RECIPE = Path(__file__).resolve().parents[2] / "live" / "agents"
if str(RECIPE) not in sys.path:
    sys.path.insert(0, str(RECIPE))


@contextlib.contextmanager
def proxied(profile: str, out: Path, record: Path | None = None) -> Iterator[tuple[str, Watch]]:
    """The reference server with ``profile`` and the proxy in front of it: yields the proxy's
    base URL and its watch (closed, every exchange judged, once the block ends)."""
    lines: list[str] = []
    with serve_in_thread(profile) as upstream:
        watch = Watch(upstream, out, record, say=lines.append)
        try:
            with watching(upstream, watch) as url:
                yield url, watch
        finally:
            watch.close()
