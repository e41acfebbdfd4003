"""A campaign recorded with no findings replays offline, whatever the folder held before."""

from __future__ import annotations

from pathlib import Path

from agentfuzz.cli import main

_CHAT = ["--api", "chat", "--no-stream", "--max-examples", "3", "--seed", "6", "--quiet"]


def _fuzz(cassettes: Path, mode: str, out: Path, *target: str) -> int:
    argv = ["fuzz", *target, *_CHAT, "--cassette", str(cassettes), "--record-mode", mode]
    return main([*argv, "--out", str(out)])


def test_a_green_recording_over_a_red_one_replays_offline(tmp_path: Path) -> None:
    tapes = tmp_path / "tapes"
    # Seed 6 meets the seed bug: this campaign shrinks, on its shrink.yaml.
    assert _fuzz(tapes, "all", tmp_path / "red", "--serve", "vllm-kimi-k2") == 1
    assert (tapes / "shrink.yaml").is_file()
    # Recorded anew against a server without the bug: nothing to shrink, so no shrink.yaml.
    assert _fuzz(tapes, "all", tmp_path / "green", "--serve", "fixed") == 0
    assert sorted(p.name for p in tapes.glob("*.yaml")) == ["synthetic-chat-no-stream.yaml"]
    # Offline, the green campaign replays as recorded.
    assert _fuzz(tapes, "none", tmp_path / "replay") == 0
    assert not [p for p in (tmp_path / "replay").iterdir() if p.is_dir()]
