"""Every test runs in its own empty working directory.

``agentfuzz fuzz`` keeps its example database in ``./.agentfuzz`` and writes bundles under
``./agentfuzz-out`` by default; a fresh directory per test keeps one test's saved failures from
replaying in another (two tests can get the same loopback port one after the other).
"""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
