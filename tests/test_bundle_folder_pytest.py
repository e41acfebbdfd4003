"""``pytest OUT``: a fuzz run's output folder, several bundles each with its ``test_repro.py``,
collects and passes however pytest is run (with the plugin, without it, the files named)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run's output with two bundles (vllm-gpt-oss mints two kinds of bad ids)."""
    work = tmp_path_factory.mktemp("bundles")
    fuzz = [sys.executable, "-m", "agentfuzz", "fuzz", "--serve", "vllm-gpt-oss", "--seed", "1"]
    fuzz += ["--api", "responses", "--max-examples", "10", "--quiet", "--out", "X"]
    done = subprocess.run(fuzz, cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert len(_bundles(work / "X")) >= 2, "the run should have written several bundles"
    return work / "X"


def _bundles(folder: Path) -> list[Path]:
    return sorted(p.parent for p in folder.glob("*/test_repro.py"))


def _pytest(out: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(
        command,
        cwd=out.parent,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | env,
    )


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({}, id="plugin"),
        pytest.param({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, id="no-plugin-autoload"),
    ],
)
def test_pytest_out_runs_every_bundle(out: Path, how: dict[str, str]) -> None:
    done = _pytest(out, str(out), **how)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(_bundles(out))} passed" in done.stdout, done.stdout


def test_the_test_files_named_together_run_side_by_side(out: Path) -> None:
    files = [str(b / "test_repro.py") for b in _bundles(out)]
    done = _pytest(out, *files)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(files)} passed" in done.stdout, done.stdout
