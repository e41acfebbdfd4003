"""live/matrix.py: one campaign per mode a target ships, and a table of what each found.

These run without any target: the summaries are written here, the index is a closed port.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live"


def _matrix() -> ModuleType:
    spec = importlib.util.spec_from_file_location("live_matrix", LIVE / "matrix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # for its dataclasses
    spec.loader.exec_module(module)
    return module


def _summary(path: Path, **fields: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields))


def test_each_target_names_the_modes_its_serve_script_ships() -> None:
    targets = _matrix().TARGETS
    assert targets["litellm"].modes() == ("bridge", "passthrough")
    assert targets["llamacpp"].modes() == ("chatml-function-calling", "functionary")
    parsers = targets["vllm"].modes()
    assert parsers[0] == "hermes" and len(parsers) >= 7
    assert "kimi_k2" in parsers


def test_a_mode_adds_up_the_summaries_of_its_campaigns(tmp_path: Path) -> None:
    # LiteLLM's campaign writes one summary per backend; a --workers run's shards are not
    # counted twice.
    finding = {"signature": "error:http_status:500", "oracle": "error"}
    _summary(
        tmp_path / "fixed" / "summary.json",
        requests=100,
        examples={"chat/no-stream": 30},
        coverage={"stop": {"requests": 5, "refused": 0}, "mcp": {"requests": 3, "refused": 3}},
        findings=[finding],
    )
    _summary(
        tmp_path / "call-unnamed" / "summary.json",
        requests=50,
        examples={"chat/no-stream": 10, "responses/stream": 5},
        coverage={"mcp": {"requests": 2, "refused": 1}, "n": {"requests": 0, "refused": 0}},
        findings=[finding, {"signature": "wire_schema:Response:output.*.name"}],
    )
    _summary(tmp_path / "fixed" / ".shards" / "0" / "summary.json", requests=999)
    row = _matrix().read("bridge", 0, tmp_path)
    assert (row.requests, row.examples, row.dimensions, row.refused) == (150, 45, 2, 0)
    assert row.findings == {"error:http_status:500": 2, "wire_schema:Response:output.*.name": 1}
    cells = row.cells()
    assert cells[:4] == ["bridge", "150", "45", "2 dimensions, 0 always refused"]
    assert "error:http_status:500 ×2" in cells[4]


def test_a_broken_mode_is_a_row_saying_so_and_an_empty_one_says_none(tmp_path: Path) -> None:
    matrix = _matrix()
    text = matrix.table(
        "vllm", [matrix.read("olmo3", 4, tmp_path / "a"), matrix.read("hermes", 0, tmp_path)]
    )
    lines = text.splitlines()
    assert lines[0] == "## vllm"
    assert lines[4] == "| olmo3 | - | - | - | broken: campaign exited 4 |"
    assert lines[5] == "| hermes | 0 | 0 | 0 dimensions, 0 always refused | none |"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / "matrix.py"), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=120)


def test_an_unknown_mode_is_one_line_and_exit_2() -> None:
    done = _run("llamacpp", "--modes", "chatml-function-calling,functionary-v2")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "matrix.py: error: llamacpp has no mode 'functionary-v2' "
        "(known: chatml-function-calling, functionary)"
    )


@pytest.mark.usefixtures("offline")
def test_an_unreachable_index_skips_with_one_line(tmp_path: Path) -> None:
    done = _run("litellm", "--cache", str(tmp_path / "cache"), "--skip-offline")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "matrix: litellm: skipped: cannot reach the package index to build it"
    )
    assert not (tmp_path / "cache" / "venv.done").exists()
