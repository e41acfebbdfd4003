"""``--workers 64`` against the reference server: what one worker finds, 64 find, shrink and write
as the very same bundle; a Ctrl-C mid-run keeps every bundle any shard wrote; a campaign recorded
on tapes by several workers plays back with as many."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.reference import serve_in_thread

pytestmark = pytest.mark.slow

# Seconds a run may take before the test gives up on it.
LIMIT = 300


def _argv(url: str | None, out: Path, workers: int, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--model", "m", "--out", str(out)]
    argv += ["--workers", str(workers), "--seed", "0", "--quiet", *extra]
    return argv + (["--base-url", url] if url else [])


def _env() -> dict[str, str]:
    return dict(os.environ, AGENTFUZZ_XDIST_ARGS="")


def _fuzz(url: str | None, out: Path, workers: int, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        _argv(url, out, workers, *extra),
        capture_output=True,
        text=True,
        env=_env(),
        cwd=out.parent,
        timeout=LIMIT,
    )
    both = done.stdout + done.stderr
    assert "Traceback" not in both, both[-3000:]
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    assert done.returncode == (1 if summary["findings"] else 0), both[-3000:]
    assert not summary.get("failed_shards") and not summary.get("error"), summary
    return summary


# The answers' clock and how long the answer took (the bundle's ``observed.elapsed_s``, its
# JUnit time; a cassette replays at once): what two runs against the same server differ in.
_CLOCK = re.compile(r'(\\?"created(?:_at)?\\?": ?)\d+')


def _bundles(out: Path) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """Each bundle in ``out`` by folder name: its files, and its repro.json less who found it
    (the command, the run) and the clocks."""
    found = {}
    for path in out.glob("*/repro.json"):
        doc = json.loads(_CLOCK.sub(r"\g<1>0", path.read_text()))
        for said_by_the_run in ("found_by", "seen_on", "target"):
            doc.pop(said_by_the_run, None)
        took = doc["observed"].pop("elapsed_s")
        assert isinstance(took, (int, float)) and took >= 0, took
        files = sorted(p.name for p in path.parent.iterdir())
        found[path.parent.name] = (files, doc)
    return found


@pytest.fixture(scope="module")
def no_done() -> Iterator[str]:
    # A deterministic planted fault: every chat stream ends without data: [DONE].
    with serve_in_thread("chat-no-done") as base:
        yield base


@pytest.mark.parametrize("kind", ["synthetic", "session"])
def test_64_workers_write_the_bundle_one_worker_writes(
    no_done: str, tmp_path: Path, kind: str
) -> None:
    mode = ("--api", "chat", "--stream", "--oracles", "framing", "--mode", kind)
    one = _fuzz(no_done, tmp_path / "one", 1, *mode, "--max-examples", "10")
    tapes = tmp_path / "tapes"
    many = _fuzz(
        no_done, tmp_path / "many", 64, *mode, "--max-examples", "2", "--record", str(tapes)
    )
    assert many["shards"] == 64
    # --record: every shard's examples, each as a cassette, into the one folder.
    assert len(list(tapes.glob("*.yaml"))) >= 64
    # Every shard found it; the merge kept one bundle, as small as one worker's, shrunk alike.
    assert [f["signature"] for f in one["findings"]] == ["framing:no_done"]
    assert [f["signature"] for f in many["findings"]] == ["framing:no_done"]
    assert many["findings"][0]["size"] == one["findings"][0]["size"]
    assert _bundles(tmp_path / "many") == _bundles(tmp_path / "one")
    assert sum(many["examples"].values()) >= 64 * sum(one["examples"].values()) // 10


def test_ctrl_c_mid_run_at_64_workers_keeps_every_bundle(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve_in_thread("vllm-kimi-k2", latency_ms=50) as url:
        argv = _argv(url, out, 64, "--mode", "both", "--max-examples", "100000")
        child = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            cwd=tmp_path,
        )
        # Stopped once some shard has written a bundle, while the others still fuzz.
        while child.poll() is None and not any(out.glob(".shards/*/*/repro.json")):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(0.1)  # polling for the first bundle on disk
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=LIMIT)
    assert "Traceback" not in stdout + stderr, (stdout + stderr)[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["shards"] == 64
    assert summary["findings"] and child.returncode == 1
    listed = {Path(f["bundle"]).name for f in summary["findings"]}
    assert {p.parent.name for p in out.glob("*/repro.json")} == listed
    # Whatever any shard wrote (its own bundles stay only when a shard failed) is in --out.
    for shard_bundle in out.glob(".shards/*/*/repro.json"):
        assert shard_bundle.parent.name in listed
    # The summary adds up: what the shards counted, summed. An example is counted before its
    # request goes out, so a shard stopped between the two has one example more than requests.
    examples = sum(summary["examples"].values())
    assert summary["requests"] + summary["shards"] >= examples > 0


def test_a_campaign_recorded_by_three_workers_plays_back_with_three(
    no_done: str, tmp_path: Path
) -> None:
    tapes = tmp_path / "tapes"
    mode = ("--api", "chat", "--stream", "--max-examples", "5", "--cassette", str(tapes))
    recorded = _fuzz(no_done, tmp_path / "recorded", 3, *mode)
    assert sorted(p.name for p in tapes.iterdir()) == ["shard-0", "shard-1", "shard-2"]
    # No server, no network: each shard plays its own tapes.
    played = _fuzz(None, tmp_path / "played", 3, *mode, "--record-mode", "none")
    assert played["requests"] == recorded["requests"]
    assert _bundles(tmp_path / "played") == _bundles(tmp_path / "recorded")
    # Played with another number of workers, the tapes would not answer what is asked.
    wrong = subprocess.run(
        _argv(None, tmp_path / "wrong", 2, *mode, "--record-mode", "none"),
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=LIMIT,
    )
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        f"agentfuzz: --cassette {tapes}: recorded with --workers 3, so play it with "
        "--workers 3 (or --record-mode all)"
    ]


def test_workers_auto_runs_at_the_knee_of_a_server_full_at_six(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Six worked on at once, 300 ms each: throughput stops growing at six in flight.
    with serve_in_thread("fixed", latency_ms=300, capacity=6) as url:
        argv = _argv(url, out, 1, "--api", "chat", "--no-stream", "--max-examples", "2")
        argv[argv.index("--workers") + 1] = "auto"
        done = subprocess.run(
            argv, capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=LIMIT
        )
    assert done.returncode == 0, done.stderr[-3000:]
    knee = re.search(r"^  knee: (\d+) in flight", done.stderr, re.M)
    assert knee, done.stderr
    assert 6 / 1.5 <= int(knee[1]) <= 6 * 1.5, done.stderr
    assert "     1 in flight:" in done.stderr  # the curve it measured, printed
    assert json.loads((out / "summary.json").read_text())["shards"] == int(knee[1])
