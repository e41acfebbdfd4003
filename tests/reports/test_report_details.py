"""Issue 41's report details: JUnit counts a bug once and times what the run measured; the
HTML report judges a chat id by the chat families, numbers each symptom, links bundles from
its own folder and shows each mode's counts and latency."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from agentfuzz.model.summary import FindingRow, Latency, Summary, Symptom
from agentfuzz.output.reports import write_reports

from ._check import assert_valid_junit


def _bundle(folder: Path, api: str, stream: bool, elapsed: float | None) -> str:
    """A bundle whose history holds ``call_0``, the plain id the reducer writes."""
    folder.mkdir(parents=True)
    call = {"id": "call_0", "name": "get_weather", "arguments": "{}"}
    items = [
        {"kind": "user", "text": "weather?"},
        {"kind": "assistant", "tool_calls": [call]},
        {"kind": "tool_result", "call_id": "call_0", "output": "sunny"},
    ]
    observed: dict[str, Any] = {"status": 500, "text": "", "body": "boom"}
    if elapsed is not None:
        observed["elapsed_s"] = elapsed
    doc = {
        "url": f"http://h/v1/{'chat/completions' if api == 'chat' else 'responses'}",
        "request": {"model": "m"},
        "oracle": "error",
        "message": "HTTP 500",
        "observed": observed,
        "api": api,
        "stream": stream,
        "case": {"history": {"items": items}, "api": api, "stream": stream},
    }
    (folder / "repro.json").write_text(json.dumps(doc))
    (folder / "repro.sh").write_text("#!/bin/sh\n")
    return str(folder)


def _summary(tmp_path: Path) -> Summary:
    out = tmp_path / "run" / "out"
    symptoms = [
        Symptom(oracle="error", signature="error:5xx", message="HTTP 500",
                seen_on=["chat/no-stream", "chat/stream"]),
        Symptom(oracle="empty_turn", signature="empty_turn", message="empty",
                seen_on=["chat/no-stream"]),
    ]  # fmt: skip
    rows = [
        FindingRow(oracle="error", signature="error:5xx", message="HTTP 500", size=3,
                   reproduced="3/3", bundle=_bundle(out / "chat", "chat", False, 0.25),
                   symptoms=symptoms),
        FindingRow(oracle="error", signature="error:other", message="HTTP 500", size=3,
                   reproduced="1/3", flaky=True,
                   bundle=_bundle(out / "resp", "responses", True, None)),
    ]  # fmt: skip
    return Summary(
        findings=rows,
        examples={"chat/no-stream": 20, "chat/stream": 0, "session responses/stream": 4},
        requests=40,
        elapsed_s=9.0,
        latency={
            "chat/no-stream": Latency(requests=30, timeouts=2, p50_s=0.12, p95_s=0.75),
            "chat/stream": Latency(requests=3, p50_s=0.4, p95_s=0.5),
        },
        samples={"chat/no-stream": [0.5] * 30, "chat/stream": [0.4, 0.4, 0.5]},
    )


def test_junit_counts_each_bug_once_and_times_what_the_run_measured(tmp_path: Path) -> None:
    (path,) = write_reports(_summary(tmp_path), junit=tmp_path / "run.xml")
    assert_valid_junit(path)
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == [
        "chat/no-stream", "chat/stream", "session responses/stream", "error:5xx", "error:other",
    ]  # fmt: skip
    # Two findings are two failures, though the first showed on two modes with two symptoms.
    assert [n for n, c in cases.items() if c.find("failure") is not None] == [
        "error:5xx",
        "error:other",
    ]
    # chat/stream generated nothing: skipped, not passed; the others passed.
    assert [n for n, c in cases.items() if c.find("skipped") is not None] == ["chat/stream"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "2", "1")
    # A finding's time: its failing answer's seconds, from its bundle; unknown is left out.
    assert cases["error:5xx"].get("time") == "0.250"
    assert cases["error:other"].get("time") is None
    failure = cases["error:5xx"].find("failure")
    assert failure is not None and "the seconds the failing answer took" in (failure.text or "")
    # A mode's time: its answers' seconds summed; its counts and latency in its output.
    assert cases["chat/no-stream"].get("time") == "15.000"
    out = cases["chat/no-stream"].findtext("system-out") or ""
    assert "20 examples generated" in out and "30, 2 slow, p50 0.120s, p95 0.750s" in out
    assert "findings seen on it: #1 error" in out


def _page(tmp_path: Path) -> str:
    (page,) = write_reports(_summary(tmp_path), (("html", tmp_path / "run" / "html"),))
    return page.read_text()


def test_html_judges_a_chat_id_by_the_chat_families(tmp_path: Path) -> None:
    page = _page(tmp_path)
    chat = page[page.index('id="finding-1"') : page.index('id="finding-2"')]
    responses = page[page.index('id="finding-2"') :]
    assert 'title="openai_responses"' not in chat
    assert 'title="unknown shape"><code>call_0</code>' in chat
    # On /v1/responses the same id is a Responses call_id.
    assert 'title="openai_responses"><code>call_0</code>' in responses


def test_html_numbers_each_symptom(tmp_path: Path) -> None:
    page = _page(tmp_path)
    matrix = page[page.index('id="matrix"') : page.index('id="findings"')]
    numbers = re.findall(r'<a href="#finding-\d">([^<]*)</a>', matrix)
    assert numbers == ["#1.1", "#1.2", "#2"]
    finding = page[page.index('id="finding-1"') : page.index('id="finding-2"')]
    assert "<li>#1.1 <b>error</b>" in finding and "<li>#1.2 <b>empty_turn</b>" in finding


def test_html_paths_are_relative_to_the_report(tmp_path: Path) -> None:
    page = _page(tmp_path)
    assert str(tmp_path) not in page
    assert "bundle <a href='../out/chat'>../out/chat</a>" in page
    assert "sh ../out/chat/repro.sh" in page


def test_html_shows_each_modes_counts_and_latency(tmp_path: Path) -> None:
    page = _page(tmp_path)
    table = page[page.index('id="modes"') : page.index('id="findings"')]
    cells = re.findall(r"<tr><th>([^<]+)</th>((?:<td>[^<]*</td>)+)</tr>", table)
    rows = {mode: re.findall(r"<td>([^<]*)</td>", tds) for mode, tds in cells}
    # examples, in sessions, findings, answers, slow, p50, p95
    assert rows["chat/no-stream"] == ["20", "–", "1", "30", "2", "0.12s", "0.75s"]
    assert rows["chat/stream"] == ["0", "–", "1", "3", "0", "0.40s", "0.50s"]
    # Finding #2's bundle names no mode: it was seen where its request went out.
    assert rows["responses/stream"] == ["–", "4", "1", "–", "–", "–", "–"]
