"""The live targets' script tests run offline: the package index is a closed port on 127.0.0.1."""

from __future__ import annotations

import os
import socket

import pytest


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{port}/simple")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    # The machine's pip config adds local indexes and wheel folders: none of them may answer.
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
