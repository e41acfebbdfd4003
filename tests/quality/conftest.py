"""Fixtures for the quality tests: planted-bug servers on loopback ports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .planted_server import planted_server


@pytest.fixture(scope="module")
def clean_url() -> Iterator[str]:
    """The base URL of a planted server with every bug off (a correct server), one per module."""
    with planted_server() as url:
        yield url
