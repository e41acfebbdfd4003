"""live/vllm/parser_replay.py: bad input is one line and exit 2 without vLLM; with build.py's cache,
two committed Hermes findings replay as the server answered them (FINDINGS.md vLLM 27)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "live" / "vllm" / "parser_replay.py"
CACHE = ROOT / ".cache" / "live-vllm"
VLLM_PYTHON = CACHE / "venv" / "bin" / "python"
FINDINGS = ROOT / "findings"


def _replay(bundle: str, tmp_path: Path) -> dict[str, Any]:
    if not VLLM_PYTHON.exists() or not (CACHE / "puppet-tiny").is_dir():
        pytest.skip(f"no vLLM venv or puppet-tiny under {CACHE} (run live/vllm/build.py)")
    out = tmp_path / "replay.json"
    argv = [str(VLLM_PYTHON), str(SCRIPT), str(FINDINGS / bundle), "--json", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def test_a_folder_without_repro_json_is_one_line_and_exit_2(tmp_path: Path) -> None:
    argv = [sys.executable, str(SCRIPT), str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "no repro.json" in done.stderr


@pytest.mark.slow
def test_hermes_streams_a_quoted_name_as_a_backslash(tmp_path: Path) -> None:
    result = _replay("vllm_puppet_stream_quoted_name_backslash", tmp_path)
    assert [call["name"] for call in result["nonstream"]["calls"]] == ['"get_weather"']
    assert [call["name"] for call in result["stream"]["calls"]] == ["\\"]
    assert result["agree"] is False


@pytest.mark.slow
def test_hermes_drops_an_empty_name_only_when_streamed(tmp_path: Path) -> None:
    result = _replay("vllm_puppet_stream_empty_name_dropped", tmp_path)
    assert [call["name"] for call in result["nonstream"]["calls"]] == [""]
    assert result["stream"]["calls"] == []
    assert not result["stream"]["content"]
