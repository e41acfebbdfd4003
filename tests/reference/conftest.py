"""Fixtures: reference servers on loopback, started once per profile and settings."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentfuzz.reference import serve_in_thread


@pytest.fixture(scope="session")
def serve() -> Iterator[Callable[..., str]]:
    """``serve(profile, **kw)`` -> base URL; each distinct server is started once per session."""
    urls: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}
    with contextlib.ExitStack() as stack:

        def start(profile: str, **kw: Any) -> str:
            key = (profile, tuple(sorted(kw.items())))
            if key not in urls:
                urls[key] = stack.enter_context(serve_in_thread(profile, **kw))
            return urls[key]

        yield start
