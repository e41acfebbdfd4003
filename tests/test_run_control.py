"""Run control of ``agentfuzz fuzz`` (issue 17): what --max-examples counts and bounds,
--max-failures, --max-time over every mode, heartbeats in a log, and Ctrl-C/SIGTERM at the
edges of a run (before the campaign, while the shards start) with nothing of Hypothesis shown."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import FuzzConfig, Status, run
from agentfuzz.cli import cli
from agentfuzz.cli import progress as _progress
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.passes import SHRINK_PER_EXAMPLE

pytestmark = pytest.mark.slow

LIMIT = 240
CHAT = (("chat", False), ("chat", True))


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    """The seed-000 server with a latency: runs are bound by time, not by the examples."""
    with serve_in_thread("vllm-kimi-k2", latency_ms=40) as base:
        yield base


def _summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return data


def test_max_examples_counts_generated_examples_and_bounds_shrinking(tmp_path: Path) -> None:
    n = 30
    seen: list[Status] = []
    with serve_in_thread("vllm-kimi-k2") as url:
        config = FuzzConfig(
            base_url=url, model="m", profile=load_profile("default"), out=tmp_path / "out",
            modes=CHAT, max_examples=n, seed=1, database=None,
        )  # fmt: skip
        report = run(config, seen.append)
    assert report.findings  # the planted fault fires, so Hypothesis shrinks
    assert set(report.examples) == {"chat/no-stream", "chat/stream"}
    assert all(count <= n for count in report.examples.values()), report.examples
    assert sum(report.shrink_steps.values()) > 0
    assert all(count <= SHRINK_PER_EXAMPLE * n for count in report.shrink_steps.values())
    # The progress bar's count is examples alone: never past what the modes plan.
    assert max(s.examples for s in seen) <= n * len(CHAT)
    first = [s.examples for s in seen if s.phase == "chat/no-stream"]
    assert max(first) <= n
    summary = report.summary().model_dump()
    assert summary["shrink_steps"] == report.shrink_steps
    assert summary["reduce_steps"] == report.reduce_steps > 0


def test_the_summary_line_reports_examples_and_shrink_steps_apart(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["fuzz", "--api", "chat", "--no-stream", "--max-examples", "30", "--seed", "1"]
    result = CliRunner().invoke(cli, [*argv, "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    summary = _summary(out)
    assert summary["examples"]["chat/no-stream"] <= 30
    assert 0 < summary["shrink_steps"]["chat/no-stream"] <= SHRINK_PER_EXAMPLE * 30
    line = next(ln for ln in result.output.splitlines() if "finding(s) · examples:" in ln)
    examples = summary["examples"]["chat/no-stream"]
    assert f"examples: chat/no-stream {examples} · shrink steps" in line


def test_max_failures_stops_fuzzing_then_shrinks_and_writes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["fuzz", "--max-failures", "1", "--max-examples", "100000", "--seed", "1"]
    result = CliRunner().invoke(cli, [*argv, "--max-time", "200", "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    summary = _summary(out)
    assert summary["max_failures_reached"] is True and summary["out_of_time"] is False
    assert "stopped at --max-failures" in result.output
    # Stopped in its first mode, which found the failure: no other mode was fuzzed.
    assert list(summary["examples"]) == ["chat/no-stream"]
    assert summary["reduce_steps"] > 0
    for finding in summary["findings"]:
        assert finding["reproduced"] != "pending"
        assert (Path(finding["bundle"]) / "repro.json").is_file()


def test_max_time_reaches_every_mode(slow_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["fuzz", "--base-url", slow_url, "--model", "m", "--max-time", "12"]
    argv += ["--max-examples", "100000", "--seed", "1", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 1, result.output
    summary = _summary(out)
    assert summary["out_of_time"] is True
    modes = {"chat/no-stream", "chat/stream", "responses/no-stream", "responses/stream"}
    assert set(summary["examples"]) == modes, summary["examples"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_log_gets_heartbeats_before_the_first_example_and_in_long_stages(
    slow_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(_progress, "HEARTBEAT_EVERY", 0.3)
    monkeypatch.setenv("AGENTFUZZ_XDIST_ARGS", "")
    out = tmp_path / "out"
    argv = ["fuzz", "--base-url", slow_url, "--model", "m", "--api", "chat", "--no-stream"]
    argv += ["--max-examples", "30", "--seed", "1", "--workers", str(workers), "--out", str(out)]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 1, result.output
    beats = [ln for ln in result.output.splitlines() if ln.startswith("[agentfuzz ")]
    # --workers: the shards take seconds to start; one worker: its first request takes 40 ms,
    # so a beat before it may not come, but the long reduce and confirm stages get theirs.
    if workers > 1:
        assert any(" starting · 0 examples" in ln for ln in beats), beats
    assert sum(1 for ln in beats if "confirm" in ln or "reduce" in ln) >= 2, beats


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--out", str(tmp_path / "out"), *args]
    env = dict(os.environ, AGENTFUZZ_XDIST_ARGS="")
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_before_the_campaign_ends_it_as_ctrl_c_does(tmp_path: Path, workers: int) -> None:
    # Waiting for a server still loading its model: the campaign has not begun.
    url = f"http://127.0.0.1:{_free_port()}/v1"
    child = _start(tmp_path, "--base-url", url, "--model", "m", "--workers", str(workers),
                   "--wait-for-server", "120")  # fmt: skip
    assert child.stderr is not None
    for line in child.stderr:
        if "waiting up to" in line:
            child.send_signal(signal.SIGTERM)
            break
    stdout, stderr = child.communicate(timeout=LIMIT)
    # As a Ctrl-C there: click's abort, one line, 130 (nothing was sent, nothing to sum up).
    assert child.returncode == 130, (child.returncode, stdout, stderr)
    assert stderr.strip().splitlines()[-1] == "agentfuzz: aborted"
    assert "Traceback" not in stdout + stderr


def test_sigterm_while_the_shards_start_is_an_interrupted_run_not_a_failed_one(
    tmp_path: Path,
) -> None:
    child = _start(tmp_path, "--workers", "2", "--api", "chat", "--seed", "1")
    spec = tmp_path / "out" / ".shards" / "spec.json"
    while child.poll() is None and not spec.exists():
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(0.02)  # polling for the file the shards are started from
    child.send_signal(signal.SIGTERM)
    stdout, stderr = child.communicate(timeout=LIMIT)
    summary = _summary(tmp_path / "out")
    assert summary["interrupted"] is True
    assert summary["failed_shards"] == [], summary["failed_shards"]
    assert child.returncode == (1 if summary["findings"] else 0), (stdout, stderr)


def test_ctrl_c_mid_run_shows_nothing_of_hypothesis(tmp_path: Path) -> None:
    # No --seed: Hypothesis generates one, and would say how to reproduce with it.
    child = _start(tmp_path, "--serve", "vllm-kimi-k2", "--api", "chat")
    assert child.stderr is not None
    lines = []
    for line in child.stderr:
        lines.append(line)
        if line.startswith("[agentfuzz ") and " shrink" in line:
            child.send_signal(signal.SIGINT)
            break
    stdout, stderr = child.communicate(timeout=LIMIT)
    both = stdout + "".join(lines) + stderr
    for leak in ("@seed(", "Falsifying", "You can reproduce", "Hypothesis", "Traceback"):
        assert leak not in both, both[-3000:]
    summary = _summary(tmp_path / "out")
    assert summary["interrupted"] is True and summary["findings"]
    assert child.returncode == 1
