"""The GPU recipe where there is no GPU (CI): one line, exit 0, nothing built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RECIPE = Path(__file__).resolve().parents[2] / "live" / "vllm-gpu" / "run.py"


@pytest.mark.parametrize("smi", [None, "exit 9"], ids=["no-nvidia-smi", "nvidia-smi-fails"])
def test_without_a_gpu_the_recipe_skips_with_one_line(tmp_path: Path, smi: str | None) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if smi is not None:
        fake = bin_dir / "nvidia-smi"
        fake.write_text(f"#!/bin/sh\n{smi}\n")
        fake.chmod(0o755)
    env = dict(os.environ, PATH=str(bin_dir))
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, str(RECIPE), "--cache", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "live/vllm-gpu: skipped: no GPU here (nvidia-smi lists none)"
    ]
    assert done.stderr == "" and not cache.exists()
