"""The stop matrix, through the command line: ``agentfuzz fuzz`` stopped by its deadline, by
SIGINT and by SIGTERM, with 1 and 4 workers, synthetic and session, ends cleanly every time.

Each run fuzzes the seed-000 reference server (a little latency per request, so that every stage
lasts long enough to be stopped in). The stage a run is in is read from the heartbeat lines it
writes to a stderr that is not a terminal; the signal goes to the ``agentfuzz`` process alone,
as a CI timeout sends it (the shards hear of it from there). Every run must exit with the code
its findings call for, print no traceback and nothing of Hypothesis's own, write
``summary.json`` saying why it ended, and have every bundle it lists (and every distinct failure
any shard found) in ``--out``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.reference import serve_in_thread

pytestmark = pytest.mark.slow

# Seconds a run may take before the test gives up on it (it should end within a few).
LIMIT = 240


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_in_thread("vllm-kimi-k2", latency_ms=10) as base:
        yield base


def _start(url: str, out: Path, kind: str, workers: int, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--base-url", url, "--model", "m"]
    argv += ["--api", "chat", "--no-stream", "--mode", kind, "--max-examples", "15"]
    argv += ["--seed", "3", "--out", str(out), "--workers", str(workers), *extra]
    env = dict(os.environ, AGENTFUZZ_XDIST_ARGS="")
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=out.parent
    )


def _stage_of(line: str) -> str:
    """The stage words of a heartbeat line: ``[agentfuzz 00:00:03] chat/no-stream shrink · …``."""
    head = line.split(" · ")[0]
    return head.split("] ", 1)[-1] if line.startswith("[agentfuzz ") else ""


def _run_until(
    child: subprocess.Popen[str], stage: str | None, signum: int | None
) -> tuple[str, str]:
    """Wait for ``child``; once a heartbeat shows ``stage``, send it ``signum``. Its output."""
    assert child.stderr is not None and child.stdout is not None
    stdout: list[str] = []
    pipe = child.stdout
    reader = threading.Thread(target=lambda: stdout.append(pipe.read()), daemon=True)
    reader.start()
    lines: list[str] = []
    sent = False
    for line in child.stderr:
        lines.append(line)
        shown = _stage_of(line)
        if not sent and stage is not None and signum is not None and shown and stage in shown:
            child.send_signal(signum)
            sent = True
    child.wait(timeout=LIMIT)
    reader.join(timeout=LIMIT)
    child.stdout.close()
    child.stderr.close()
    if stage is not None:
        assert sent, f"the run never showed {stage}: {''.join(lines)[-2000:]}"
    return "".join(stdout), "".join(lines)


def _check_ending(out: Path, code: int, stdout: str, stderr: str, why: str) -> dict[str, Any]:
    both = stdout + stderr
    assert "Traceback" not in both, both[-3000:]
    assert "Hypothesis" not in both and "@seed" not in both, both[-3000:]
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    # A bug of ours ends the run with its traceback in error.log: show it, not just the summary.
    log = out / "error.log"
    assert not summary.get("error"), log.read_text()[-3000:] if log.is_file() else summary
    assert summary[why] is True, summary
    assert not summary.get("failed_shards"), summary["failed_shards"]
    assert code == (1 if summary["findings"] else 0), (code, both[-2000:])
    listed = {Path(f["bundle"]).name for f in summary["findings"]}
    assert all((out / name / "repro.json").is_file() for name in listed)
    assert {p.parent.name for p in out.glob("*/repro.json")} == listed
    # What any shard found (its own bundles stay only when a shard failed) is in --out.
    for shard_bundle in out.glob(".shards/*/*/repro.json"):
        assert shard_bundle.parent.name in listed
    return summary


STAGES = ["generate", "shrink", "target", "reduce", "confirm"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_one_worker_stopped_by_a_signal_in_any_stage(
    url: str, tmp_path: Path, kind: str, stage: str, signum: int
) -> None:
    out = tmp_path / "out"
    # --max-examples is a mode's over all its passes: a later pass needs some left over.
    more = ("--max-examples", "150") if stage == "target" else ()
    child = _start(url, out, kind, 1, *more)
    stdout, stderr = _run_until(child, stage, signum)
    summary = _check_ending(out, child.returncode, stdout, stderr, "interrupted")
    if stage != "generate":
        assert summary["findings"]


# Shards move between stages each on its own and their heartbeat comes at most every 2 s:
# "" stops at the first heartbeat (the earliest a person watching could), "shrink" later.
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("stage", ["", "shrink"], ids=["first-heartbeat", "shrink"])
@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_four_workers_stopped_by_a_signal_merge_what_they_found(
    url: str, tmp_path: Path, kind: str, stage: str, signum: int
) -> None:
    out = tmp_path / "out"
    child = _start(url, out, kind, 4)
    stdout, stderr = _run_until(child, stage, signum)
    summary = _check_ending(out, child.returncode, stdout, stderr, "interrupted")
    assert summary["shards"] == 4


@pytest.mark.parametrize("workers", [1, 4])
@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_a_deadline_mid_run_ends_it_with_everything_merged(
    url: str, tmp_path: Path, kind: str, workers: int
) -> None:
    out = tmp_path / "out"
    # Examples without end (the last --max-examples wins): only the deadline stops this run.
    child = _start(url, out, kind, workers, "--max-time", "4", "--max-examples", "100000")
    stdout, stderr = _run_until(child, None, None)
    summary = _check_ending(out, child.returncode, stdout, stderr, "out_of_time")
    assert summary["findings"]
    assert "stopped at --max-time" in stdout


def test_a_second_signal_stops_the_shards_at_once_and_merges_what_they_wrote(
    url: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    child = _start(url, out, "synthetic", 4)
    assert child.stderr is not None and child.stdout is not None
    for line in child.stderr:
        if "shrink" in _stage_of(line):
            child.send_signal(signal.SIGINT)
            child.send_signal(signal.SIGTERM)
            break
    stdout, stderr = child.communicate(timeout=LIMIT)
    assert "Traceback" not in stdout + stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert child.returncode == (1 if summary["findings"] else 0)
    listed = {Path(f["bundle"]).name for f in summary["findings"]}
    assert all((out / name / "repro.json").is_file() for name in listed)
    # A shard cut off before its summary is named, and what it wrote is merged all the same.
    for shard_bundle in out.glob(".shards/*/*/repro.json"):
        assert shard_bundle.parent.name in listed
