"""--workers N: shards run by pytest-xdist, merged into one summary without duplicate bundles."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import FuzzConfig, Status
from agentfuzz.cli import cli
from agentfuzz.model.summary import Summary
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.workers import merge, run_sharded, spec_of
from agentfuzz.tape.replay import replay_cassette

from .quality.planted_server import BUGS as SPECS
from .quality.planted_server import planted_server

BUGS = ["empty_on_foreign_id", "leak_without_tools"]


def _fuzz(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    argv = ["fuzz", "--base-url", url, "--model", "m", "--api", "chat", "--no-stream"]
    argv += ["--max-examples", "150", "--seed", "2", "--out", str(out), "--quiet", *extra]
    result = CliRunner().invoke(cli, argv)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads((out / "summary.json").read_text())


def _planted(summary: dict[str, Any]) -> dict[str, int]:
    """The smallest repro size of each planted bug's oracle (what a deterministic target owes)."""
    sizes: dict[str, int] = {}
    for f in summary["findings"]:
        if f["oracle"] in {SPECS[b].oracle for b in BUGS}:
            sizes[f["oracle"]] = min(sizes.get(f["oracle"], f["size"]), f["size"])
    return sizes


@pytest.fixture(scope="module")
def planted() -> Iterator[str]:
    with planted_server(BUGS) as url:
        yield url


@pytest.fixture(scope="module")
def one_worker(planted: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What one worker finds (the deterministic target owes the same to N workers)."""
    code, one = _fuzz(planted, tmp_path_factory.mktemp("one"))
    assert code == 1
    assert set(_planted(one)) == {SPECS[b].oracle for b in BUGS}
    return one


def test_two_workers_find_what_one_finds_in_one_summary(
    planted: str, one_worker: dict[str, Any], tmp_path: Path
) -> None:
    tapes = tmp_path / "tapes"
    code2, two = _fuzz(planted, tmp_path / "two", "--workers", "2", "--record", str(tapes))
    assert code2 == 1
    assert two["shards"] == 2
    # Both shards recorded into one folder, every cassette whole (replays to its verdicts).
    recorded = sorted(tapes.glob("*.yaml"))
    assert len(recorded) >= 150
    assert not [p for p in tapes.iterdir() if p.suffix != ".yaml"]
    for path in recorded[:: max(1, len(recorded) // 20)]:
        assert replay_cassette(path).same, path
    assert _planted(two) == _planted(one_worker)
    folders = sorted(p.name for p in (tmp_path / "two").iterdir() if p.is_dir())
    assert folders == sorted(Path(f["bundle"]).name for f in two["findings"])
    keys = [(f["oracle"], f["signature"]) for f in two["findings"]]
    assert len(set(keys)) == len(keys) == len(folders)
    # Two shards of 150 examples each: the merged count is theirs together.
    assert two["examples"]["chat/no-stream"] >= 2 * 150
    assert not (tmp_path / "two" / ".shards").exists()


def _shard(tmp_path: Path, name: str, size: int, text: str) -> dict[str, Any]:
    bundle = tmp_path / name / "empty_turn-abc"
    bundle.mkdir(parents=True)
    (bundle / "repro.json").write_text(json.dumps({"request": {"messages": [text]}}))
    finding = {
        "oracle": "empty_turn",
        "signature": "empty_turn",
        "message": "m",
        "size": size,
        "reproduced": "10/10",
        "flaky": False,
        "bundle": str(bundle),
    }
    return {
        "findings": [finding],
        "examples": {"chat/no-stream": 10},
        "requests": 12,
        "elapsed_s": 1.0,
        "session_turns": {"1": {"reached": 3, "failed": 1}},
        "stopped_answering": False,
        "interrupted": False,
        "not_served": None,
    }


def test_merge_keeps_the_smallest_bundle_of_each_failure_once(tmp_path: Path) -> None:
    shards = [_shard(tmp_path, "a", 6, "big"), _shard(tmp_path, "b", 4, "small")]
    # Latency ranks again over every shard's answers; slow answers add up.
    shards[0] |= {"samples": {"chat/no-stream": [1.0, 2.0]}}
    shards[0] |= {"latency": {"chat/no-stream": {"requests": 2, "timeouts": 1}}}
    shards[1] |= {"samples": {"chat/no-stream": [3.0]}}
    merged = merge([Summary.model_validate(s) for s in shards], tmp_path / "out").dump()
    assert merged["latency"] == {
        "chat/no-stream": {"requests": 3, "timeouts": 1, "p50_s": 2.0, "p95_s": 3.0}
    }
    assert "samples" not in merged
    (finding,) = merged["findings"]
    assert finding["size"] == 4
    copied = json.loads((tmp_path / "out" / "empty_turn-abc" / "repro.json").read_text())
    assert copied == {"request": {"messages": ["small"]}}
    assert merged["examples"] == {"chat/no-stream": 20}
    assert merged["requests"] == 24
    assert merged["session_turns"] == {"1": {"reached": 6, "failed": 2}}


def test_shards_sharing_one_process_as_threads_find_the_same(
    planted: str, one_worker: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One core: both shards run as threads of one pytest item.
    monkeypatch.setattr("agentfuzz.runs.workers.os.cpu_count", lambda: 1)
    seen: list[Status] = []
    config = FuzzConfig(
        base_url=planted,
        model="m",
        profile=load_profile("default"),
        out=tmp_path / "threads",
        modes=(("chat", False),),
        max_examples=150,
        seed=5,
        database=None,
    )
    merged = run_sharded(config, 2, seen.append).dump()
    assert merged["shards"] == 2
    assert _planted(merged) == _planted(one_worker)
    keys = {(f["oracle"], f["signature"]) for f in merged["findings"]}
    assert len(keys) == len(merged["findings"])
    # The shards' progress reached the caller, ending with what the merged summary says.
    assert seen and seen[-1].examples == merged["examples"]["chat/no-stream"] >= 2 * 150
    assert set(seen[-1].failures) == keys


def test_each_shard_starts_on_another_mode_and_kind(tmp_path: Path) -> None:
    from agentfuzz.model.modes import ALL_MODES
    from agentfuzz.runs import _shard

    config = FuzzConfig(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        profile=load_profile("default"),
        out=tmp_path,
        kinds=("synthetic", "session"),
        seed=3,
    )
    spec = spec_of(config, 4)
    firsts = [
        (_shard._config(spec, k).modes[0], _shard._config(spec, k).kinds[0]) for k in range(4)
    ]
    assert [m for m, _ in firsts] == list(ALL_MODES)
    assert [k for _, k in firsts] == ["synthetic", "session", "synthetic", "session"]
    for k in range(4):
        shard = _shard._config(spec, k)
        assert sorted(shard.modes) == sorted(ALL_MODES) and shard.seed == 3 + k * 1000


def _shard_processes(spec: Path) -> list[int]:
    """The pytest-xdist worker processes running shards of the campaign whose spec is ``spec``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"AGENTFUZZ_SHARD_SPEC={spec}".encode() in environ and b"pytest" not in argv:
            found.append(int(proc.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_a_shard_killed_mid_run_still_has_its_bundles_merged(planted: str, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    config = FuzzConfig(
        base_url=planted,
        model="m",
        profile=load_profile("default"),
        out=out,
        modes=(("chat", False), ("chat", True)),
        max_examples=150,
        seed=5,
        database=None,
    )
    killed: list[int] = []

    def kill_once_a_shard_found_something(status: Status) -> None:
        shards = [out / ".shards" / str(k) for k in range(4)]
        if killed or not all(list(s.glob("*/repro.json")) for s in shards):
            return
        victims = _shard_processes(out / ".shards" / "spec.json")
        if victims:
            os.kill(victims[0], signal.SIGKILL)
            killed.append(victims[0])

    merged = run_sharded(config, 4, kill_once_a_shard_found_something).dump()
    assert killed
    failed = merged["failed_shards"]
    assert failed and all("ended without its summary" in f["why"] for f in failed)
    # Every bundle a killed shard wrote before it died is merged into --out.
    names = {Path(f["bundle"]).name for f in merged["findings"]}
    left = [b for f in failed for b in (out / ".shards" / str(f["shard"])).glob("*/repro.json")]
    assert left
    for bundle in left:
        assert bundle.parent.name in names
        assert (out / bundle.parent.name / "repro.json").is_file()


def test_after_a_crash_every_shards_suspect_is_kept(tmp_path: Path) -> None:
    # Two shards in flight when the server died: either request may have killed it.
    shards = []
    for k, (size, text) in enumerate([(1, "small"), (3, "the one that killed it")]):
        bundle = tmp_path / ".shards" / str(k) / "error-abc"
        bundle.mkdir(parents=True)
        (bundle / "repro.json").write_text(json.dumps({"request": {"messages": [text]}}))
        shard = _shard(tmp_path / str(k), "x", size, text)
        shard["findings"][0] |= {"oracle": "error", "signature": "error:server_died"}
        shard["findings"][0]["bundle"] = str(bundle)
        shards.append(shard | {"stopped_answering": True})
    merged = merge([Summary.model_validate(s) for s in shards], tmp_path / "out").dump()
    kept = {Path(f["bundle"]).name: f["size"] for f in merged["findings"]}
    assert kept == {"error-abc": 1, "error-abc-shard1": 3}
    copied = json.loads((tmp_path / "out" / "error-abc-shard1" / "repro.json").read_text())
    assert copied == {"request": {"messages": ["the one that killed it"]}}
    # Without a crash the same rows merge to one bundle, the smallest.
    for shard in shards:
        shard["stopped_answering"] = False
    merged = merge([Summary.model_validate(s) for s in shards], tmp_path / "again").dump()
    assert [Path(f["bundle"]).name for f in merged["findings"]] == ["error-abc"]
