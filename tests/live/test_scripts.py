"""The live vLLM and llama.cpp scripts fail in one line, and skip when the index is out of reach.

These run without either server: the index is a closed port on 127.0.0.1 (the `offline` fixture),
the cache an empty folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live"
TARGETS = ["vllm", "llamacpp"]


def _run(target: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / target / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("target", TARGETS)
def test_build_says_it_cannot_reach_the_index(target: str, tmp_path: Path) -> None:
    done = _run(target, "build.py", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach the package index" in line
    assert not (tmp_path / "cache" / "venv.done").exists()


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("target", TARGETS)
def test_a_campaign_offline_skips_when_asked_and_fails_otherwise(
    target: str, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    skipped = _run(target, "campaign.py", "--cache", cache, "--skip-offline")
    assert skipped.returncode == 0
    assert "skipped: cannot reach the package index" in skipped.stdout
    assert "Traceback" not in skipped.stderr
    assert _run(target, "campaign.py", "--cache", cache).returncode == 3


@pytest.mark.parametrize("target", TARGETS)
def test_serving_an_unbuilt_cache_is_one_line(target: str, tmp_path: Path) -> None:
    done = _run(target, "serve.py", "--cache", str(tmp_path))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "is not built" in line and f"live/{target}/build.py" in line


def test_a_campaign_counts_exit_1_as_findings_only_with_this_runs_summary(tmp_path: Path) -> None:
    # A traceback exits 1 as findings do: --findings-ok must not turn a crash into a pass.
    import importlib.util
    import json
    import time

    spec = importlib.util.spec_from_file_location("live_kit", LIVE / "_kit.py")
    assert spec is not None and spec.loader is not None
    kit = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = kit  # for its dataclasses (Mode)
    try:
        spec.loader.exec_module(kit)
    finally:
        sys.modules.pop(spec.name, None)
    started = time.monotonic()
    assert not kit._found(tmp_path, started)  # no summary at all
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"findings": [{"oracle": "error"}]}))
    assert kit._found(tmp_path, started)
    old = time.time() - 3600  # a summary an earlier run left there
    os.utime(summary, (old, old))
    assert not kit._found(tmp_path, started)
    summary.write_text(json.dumps({"findings": []}))
    assert not kit._found(tmp_path, started)


def test_every_campaign_reads_exit_1_without_a_summary_as_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The proxy campaigns (LiteLLM, Portkey, Llama Stack) add up `fuzz()` codes themselves: the
    # crash check lives there, so a traceback is never read as findings under --findings-ok.
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("live_kit_fuzz", LIVE / "_kit.py")
    assert spec is not None and spec.loader is not None
    kit = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = kit
    try:
        spec.loader.exec_module(kit)
    finally:
        sys.modules.pop(spec.name, None)
    summary = tmp_path / "summary.json"

    def crashed(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1)

    def found(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        summary.write_text(json.dumps({"findings": [{"oracle": "error"}]}))
        return subprocess.CompletedProcess(argv, 1)

    monkeypatch.setattr(kit.subprocess, "run", crashed)
    assert kit.fuzz("t", "http://127.0.0.1:9/v1", "m", tmp_path) == kit.EXIT_BROKE
    monkeypatch.setattr(kit.subprocess, "run", found)
    assert kit.fuzz("t", "http://127.0.0.1:9/v1", "m", tmp_path) == 1
