"""A server that echoes the request's headers in its error page: the secrets agentfuzz sent (the
API key, the ``--header`` values) reach no file it writes (issue 41, item 14).

Every answer is a 500 whose body quotes the headers it got, so every finding, bundle, report,
recorded example and campaign cassette holds what the server said; none of it may hold a
secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.hostile.servers import Request, models_list, raw_server, respond, run_bounded

# A whole campaign in a child process (about 9 s). ``run_bounded`` leaves the child's pipe for
# the collector to close: its ResourceWarning is the helper's, not this test's.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

KEY = "SECRETKEY123"
TEAM = "hushhush"


def _echo(request: Request, out: BinaryIO) -> None:
    if request.method == "GET":
        models_list(out, "m")
        return
    said = {"error": {"message": f"bad request; headers were {request.headers}"}}
    respond(out, 500, json.dumps(said))


def _files_holding(folder: Path, *secrets: str) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return found


def test_secrets_a_server_echoes_are_masked_in_every_file(tmp_path: Path) -> None:
    out, record, tapes = tmp_path / "out", tmp_path / "record", tmp_path / "tapes"
    with raw_server(_echo) as server:
        argv = ["fuzz", "--base-url", server.base_url, "--model", "m", "--api", "chat"]
        argv += ["--no-stream", "--max-examples", "5", "--seed", "1", "--timeout", "5"]
        argv += ["--api-key", KEY, "-H", f"X-Team: {TEAM}", "--out", str(out)]
        argv += ["--record", str(record), "--cassette", str(tapes), "--record-mode", "all"]
        argv += ["--report", "html", str(out / "html"), "--report", "markdown", str(out / "r.md")]
        argv += ["--junit-xml", str(out / "junit.xml")]
        done = run_bounded(argv, limit_s=120, cwd=str(tmp_path))
    assert done.code == 1, done.output[-3000:]
    # The server did see them, and echoed them, in every error page.
    assert any(KEY in r.headers.get("authorization", "") for r in server.requests)
    bundles = list(out.glob("*/repro.json"))
    assert bundles, done.output[-3000:]
    assert "MASKED" in "".join(p.read_text() for p in bundles)
    written = [out, record, tapes]
    assert all(any(p.is_file() for p in folder.rglob("*")) for folder in written)
    leaks = [leak for folder in written for leak in _files_holding(folder, KEY, TEAM)]
    assert leaks == []
