"""Nothing found is ever lost, and what ``--out`` holds is what ``summary.json`` says (issue 41,
items 6, 17 and 19): a Ctrl-C mid-shrink keeps every bundle already written, a full disk ends
the run with one line and keeps what was written, and a second run into the same ``--out``
sets the first one's bundles aside.
"""

from __future__ import annotations

import errno
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from agentfuzz.cli import main
from agentfuzz.model import files

FUZZ = ["fuzz", "--serve", "vllm-kimi-k2", "--api", "chat", "--no-stream", "--seed", "3"]


def _fuzz(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> tuple[int, str]:
    code = main([*FUZZ, "--max-examples", "10", "--out", str(out), *extra])
    said = capsys.readouterr()
    both = said.out + said.err
    assert "Traceback" not in both
    return code, both


def _summary(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "summary.json").read_text()))


def _bundles(out: Path) -> set[str]:
    return {p.parent.name for p in out.glob("*/repro.json")}


def test_a_second_run_into_the_same_out_sets_the_first_ones_bundles_aside(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # What an earlier run left: a bundle, its summary and its error.log.
    old = out / "tool_choice-0123abcd"
    old.mkdir(parents=True)
    for name in ("repro.json", "cassette.yaml", "test_repro.py"):
        (old / name).write_text("{}")
    (out / "summary.json").write_text('{"findings": [{"bundle": "tool_choice-0123abcd"}]}')
    (out / "error.log").write_text("Traceback of the earlier run")
    # This run finds nothing (a server with every fix on): its summary says 0.
    code, said = _fuzz(capsys, out, "--serve", "fixed", "--max-examples", "3")
    assert code == 0, said
    summary = _summary(out)
    assert summary["findings"] == []
    assert _bundles(out) == set()  # what summary.json lists, and nothing else
    assert not (out / "error.log").exists()
    moved = Path(summary["set_aside"])
    assert moved.parent == out / ".previous"
    assert sorted(p.name for p in moved.iterdir()) == ["error.log", "summary.json", old.name]
    assert (moved / old.name / "test_repro.py").is_file()
    lines = [line for line in said.splitlines() if "moved to" in line]
    assert lines == [f"the earlier run's bundles in this --out were moved to {moved}"]


def test_a_full_disk_ends_the_run_with_one_line_and_keeps_what_was_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    fill = files._fill

    def full_after_the_first_bundle(sink: IO[str], text: str) -> None:
        if any(out.glob("*/test_repro.py")):
            raise OSError(errno.ENOSPC, "No space left on device")
        fill(sink, text)

    monkeypatch.setattr(files, "_fill", full_after_the_first_bundle)
    code, said = _fuzz(capsys, out)
    assert code == 1, said
    full = [line for line in said.splitlines() if "disk full" in line]
    assert len(full) == 1 and full[0].startswith("disk full writing "), said
    assert "internal error" not in said
    (bundle,) = out.glob("*/test_repro.py")
    assert json.loads((bundle.parent / "repro.json").read_text())["oracle"]
    assert list(out.rglob("*.part")) == []


@pytest.mark.slow
def test_ctrl_c_mid_shrink_keeps_every_bundle_already_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "agentfuzz", *FUZZ, "--max-examples", "30", "--out", str(out)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    written: set[str] | None = None
    for line in child.stderr:
        stage = line.split(" · ")[0].split("] ", 1)[-1] if line.startswith("[agentfuzz ") else ""
        if written is None and "shrink" in stage:
            written = _bundles(out)
            child.send_signal(signal.SIGINT)
    stdout, _ = child.communicate(timeout=120)
    assert written, "the run never showed its shrink stage"
    # Interrupted once the campaign ran: its findings are written, the code says found.
    assert child.returncode == 1, stdout[-2000:]
    summary = _summary(out)
    assert summary["interrupted"] is True
    kept = _bundles(out) | {p.parent.name for p in out.glob("*/symptoms/*/repro.json")}
    assert written <= kept
    for finding in summary["findings"]:
        for symptom in finding["symptoms"][1:]:  # the first is the finding itself
            assert symptom["repro"], symptom
            assert (Path(finding["bundle"]) / symptom["repro"] / "repro.json").is_file()
