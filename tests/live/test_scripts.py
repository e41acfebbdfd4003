"""The live vLLM scripts fail in one line, and skip when the package index is out of reach.

These run without vLLM: the index is a closed port on 127.0.0.1, the cache an empty folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live" / "vllm"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{port}/simple")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)


@pytest.mark.usefixtures("offline")
def test_build_says_it_cannot_reach_the_index(tmp_path: Path) -> None:
    done = _run("build.py", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach the package index" in line
    assert not (tmp_path / "cache" / "venv.done").exists()


@pytest.mark.usefixtures("offline")
def test_a_campaign_offline_skips_when_asked_and_fails_otherwise(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    skipped = _run("campaign.py", "--cache", cache, "--skip-offline")
    assert skipped.returncode == 0
    assert "skipped: cannot reach the package index" in skipped.stdout
    assert "Traceback" not in skipped.stderr
    assert _run("campaign.py", "--cache", cache).returncode == 3


def test_serving_an_unbuilt_cache_is_one_line(tmp_path: Path) -> None:
    done = _run("serve.py", "--cache", str(tmp_path))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "is not built" in line and "build.py" in line
