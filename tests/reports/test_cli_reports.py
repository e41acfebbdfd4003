"""``agentfuzz fuzz --report html DIR --report markdown FILE --junit-xml FILE`` on real runs:
seed 000's bug (the embedded vLLM + Kimi-K2 server, Responses streaming, sessions feeding it
its own ids) and a clean run; the HTML opened in headless Chromium as a person would see it.

The seed run is cut to one mode (``--api responses --stream``) and 10 examples so it takes
seconds; the shape of its report is what is checked, not how many findings it has.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from click.testing import CliRunner

from agentfuzz.cli import cli

from ._check import assert_valid_junit, rendered_dom, screenshot, visible

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _fuzz(work: Path, serve: str, *args: str) -> tuple[int, str]:
    with contextlib.chdir(work):
        argv = ["fuzz", "--quiet", "--serve", serve, "--seed", "1", "--out", "out", *args]
        argv += ["--report", "html", "html", "--junit-xml", "junit.xml"]
        argv += ["--report", "markdown", "summary.md"]
        result = CliRunner().invoke(cli, argv, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def test_seed_000_run_reports(tmp_path: Path) -> None:
    """One run, its three reports (one test: the run is the slow part, run it once)."""
    code, output = _fuzz(
        tmp_path, "vllm-kimi-k2", "--max-examples", "10", "--mode", "both", "--api", "responses",
        "--stream",
    )  # fmt: skip
    assert code == 1, output
    _says_where_its_reports_are(tmp_path, output)
    _junit_and_markdown(tmp_path)
    _html_in_chromium(tmp_path)


def _says_where_its_reports_are(work: Path, output: str) -> None:
    for name in ("html/index.html", "summary.md", "junit.xml"):
        assert f"report: {name}" in output
        assert (work / name).is_file()


def _html_in_chromium(work: Path) -> None:
    summary = json.loads((work / "out" / "summary.json").read_text())
    page = work / "html" / "index.html"
    text, tags = visible(rendered_dom(page, work))
    # The cell names the kinds that saw it: the session pass among them.
    assert "Findings by mode" in text and re.search(r"✗ seen (generated \+ )?session", text)
    for row in summary["findings"]:
        assert f"{row['oracle']}: " in text
    assert text.count("✗ failing turn") == len(summary["findings"])
    # The server minted the ids the session fed back: vLLM streaming Responses' call_<16 hex>.
    assert "vllm_responses_stream" in text
    assert "Failure rate per session turn" in text and "svg" in tags
    assert "Request surface coverage" in text and "always refused" in text
    assert "--serve vllm-kimi-k2 --seed 1" in text  # the command that ran
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(page, ARTIFACTS / "report-seed-000.png", work, height=2400)


def _junit_and_markdown(work: Path) -> None:
    summary = json.loads((work / "out" / "summary.json").read_text())
    assert_valid_junit(work / "junit.xml")
    suite = ET.parse(work / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    names = [c.get("name") for c in suite.iter("testcase")]
    modes = list(summary["examples"])
    assert names == modes + [f["signature"] for f in summary["findings"]]
    assert suite.get("failures") != "0" and suite.get("errors") == "0"
    text = (work / "summary.md").read_text()
    assert "## Findings by mode" in text and "## Session turns" in text
    for row in summary["findings"]:
        assert f"re-send: ` sh {row['bundle']}/repro.sh `" in text


def test_clean_run_reports(tmp_path: Path) -> None:
    work = tmp_path
    code, output = _fuzz(work, "fixed", "--max-examples", "5", "--api", "chat")
    assert code == 0, output
    assert_valid_junit(work / "junit.xml")
    suite = ET.parse(work / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")] == ["chat/no-stream", "chat/stream"]
    text, _ = visible(rendered_dom(work / "html" / "index.html", work))
    assert "Nothing failed." in text and "✓ clean" in text
    assert "Nothing failed." in (work / "summary.md").read_text()
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(work / "html" / "index.html", ARTIFACTS / "report-clean.png", work, height=1200)


def test_report_paths_are_checked_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    result = CliRunner().invoke(
        cli, ["fuzz", "--report", "html", str(tmp_path / "taken"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "--report html" in result.output and "is not a folder" in result.output
    assert not (tmp_path / "o" / "summary.json").exists()
    result = CliRunner().invoke(cli, ["fuzz", "--report", "pdf", "x"])
    assert result.exit_code == 2 and "'pdf' is not one of 'html', 'markdown'" in result.output
