"""One campaign, three faces: ``agentfuzz fuzz``, ``agentfuzz.run()`` and the pytest plugin's
``agentfuzz_campaign`` run the same seeded campaign and leave the same folded findings on disk.

Against ``vllm-kimi-k2``, seed 6 meets the seed bug as an empty turn that also misses the named
tool call: two symptoms of one cause, which each face must fold into one bundle.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentfuzz import FuzzConfig, load_profile, run
from agentfuzz.cli import main
from agentfuzz.reference import serve_in_thread
from agentfuzz.wire.target import first_model

SEED, EXAMPLES = 6, 5

# The campaign test, told where to say which folder its bundles went to.
CAMPAIGN = """
from pathlib import Path

def test_campaign(agentfuzz_campaign):
    report = agentfuzz_campaign(seed={seed}, max_examples={examples})
    assert report.findings
    Path({said!r}).write_text(str(report.findings[0].bundle.parent))
"""


def _on_disk(out: Path) -> dict[str, Any]:
    """What a campaign left in ``out``: its bundle folders, and each finding with its symptoms
    as ``summary.json`` lists them."""
    summary = json.loads((out / "summary.json").read_text())
    folders = sorted(p.parent.name for p in out.glob("*/repro.json"))
    findings = {
        Path(f["bundle"]).name: [(s["oracle"], s["signature"]) for s in f["symptoms"]]
        for f in summary["findings"]
    }
    return {"folders": folders, "findings": findings}


def _by_the_command_line(url: str, work: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    out = work / "out"
    monkeypatch.chdir(work)  # its own example database, as each face below has
    argv = ["fuzz", "--base-url", url, "--api", "chat", "--no-stream", "--quiet"]
    argv += ["--max-examples", str(EXAMPLES), "--seed", str(SEED), "--out", str(out)]
    assert main(argv) == 1
    return out


def _by_the_library(url: str, work: Path) -> Path:
    out = work / "out"
    config = FuzzConfig(
        base_url=url,
        model=first_model(url, None, 10.0),
        profile=load_profile("default"),
        out=out,
        modes=(("chat", False),),
        max_examples=EXAMPLES,
        seed=SEED,
        database=work / ".agentfuzz" / "examples",
    )
    report = run(config)
    # The report is the folded one: its findings are the bundles left, its summary the file's.
    assert sorted(f.bundle.name for f in report.findings) == _on_disk(out)["folders"]
    written = json.loads((out / "summary.json").read_text())["findings"]
    assert report.summary().model_dump(mode="json")["findings"] == written
    return out


def _by_the_plugin(url: str, project: Path) -> Path:
    said = project / "out.txt"
    (project / "pytest.ini").write_text("[pytest]\n")
    source = CAMPAIGN.format(seed=SEED, examples=EXAMPLES, said=str(said))
    (project / "test_campaign.py").write_text(source)
    # A pytest of its own, as a project runs it (pytester would unload, after this test, the
    # HTTP stack first imported in it, and later tests would miss httpx's mapping of its errors).
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["--agentfuzz-base-url", url]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(said.read_text())


def test_the_three_faces_leave_the_same_folded_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for face in ("cli", "run", "plugin"):
        (tmp_path / face).mkdir()
    with serve_in_thread("vllm-kimi-k2") as url:
        plugin = _by_the_plugin(url, tmp_path / "plugin")
        library = _by_the_library(url, tmp_path / "run")
        command_line = _by_the_command_line(url, tmp_path / "cli", monkeypatch)
    seen = _on_disk(command_line)
    assert _on_disk(library) == seen
    assert _on_disk(plugin) == seen
    # Folding mattered: one cause with several symptoms, one bundle for them all.
    assert any(len(symptoms) > 1 for symptoms in seen["findings"].values()), seen
    assert seen["folders"] == sorted(seen["findings"])
