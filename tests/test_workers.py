"""--workers N: shards run by pytest-xdist, merged into one summary without duplicate bundles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.workers import merge

from .quality.planted_server import BUGS as SPECS
from .quality.planted_server import planted_server

BUGS = ["empty_on_foreign_id", "leak_without_tools"]


def _fuzz(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    argv = ["fuzz", "--base-url", url, "--model", "m", "--api", "chat", "--no-stream"]
    argv += ["--max-examples", "150", "--seed", "5", "--out", str(out), "--quiet", *extra]
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


def test_two_workers_find_what_one_finds_in_one_summary(tmp_path: Path) -> None:
    with planted_server(BUGS) as url:
        code1, one = _fuzz(url, tmp_path / "one")
        code2, two = _fuzz(url, tmp_path / "two", "--workers", "2")
    assert code1 == code2 == 1
    assert two["shards"] == 2
    assert _planted(two) == _planted(one)
    assert set(_planted(one)) == {SPECS[b].oracle for b in BUGS}
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
    merged = merge(shards, tmp_path / "out")
    (finding,) = merged["findings"]
    assert finding["size"] == 4
    copied = json.loads((tmp_path / "out" / "empty_turn-abc" / "repro.json").read_text())
    assert copied == {"request": {"messages": ["small"]}}
    assert merged["examples"] == {"chat/no-stream": 20}
    assert merged["requests"] == 24
    assert merged["session_turns"] == {"1": {"reached": 6, "failed": 2}}
