"""The report writers on a hand-made run: what each shows, and that nothing a server said can
break out of its place (HTML, Markdown and XML are all written from untrusted bodies)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from agentfuzz.model.summary import Coverage, FindingRow, Summary, TurnRow
from agentfuzz.output.reports import unwritable, write_reports
from agentfuzz.output.reports._junit import junit_xml
from agentfuzz.output.reports._markdown import markdown
from agentfuzz.output.reports._model import gather

from ._check import assert_valid_junit, rendered_dom, screenshot, visible

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)> | *bold* `tick`"
MINTED = "call_e4704cecd57289a8"  # vLLM's streaming Responses shape: call_ + 16 hex


def _bundle(folder: Path, doc: dict[str, Any], session: bool = False) -> str:
    folder.mkdir(parents=True)
    (folder / "repro.json").write_text(json.dumps(doc))
    (folder / "repro.sh").write_text("#!/bin/sh\n")
    (folder / "test_repro.py").write_text("")
    if session:
        turns = [
            {"turn": 1, "response": {"status": 200}, "violations": []},
            {"turn": 2, "response": {"status": 200}, "violations": [{"oracle": "empty_turn"}]},
        ]
        (folder / "session.json").write_text(json.dumps({"turns": turns}))
    return str(folder)


def _case(items: list[dict[str, Any]], api: str, stream: bool) -> dict[str, Any]:
    return {
        "history": {"tools": [{"name": "get_weather"}], "items": items},
        "options": {"tool_choice": "required", "fields": {"store": False}},
        "api": api,
        "stream": stream,
        "session": {"turn": 2} if stream else None,
    }


def _run(tmp_path: Path) -> Summary:
    """Two findings: seed 000's (a session on responses/stream, the server's own id fed back)
    with two symptoms, and a synthetic chat one whose answer is hostile markup."""
    out = tmp_path / "out"
    first = {
        "url": "http://gpu:8000/v1/responses",
        "request": {"model": "kimi", "input": [{"role": "user", "content": "hi"}]},
        "oracle": "empty_turn",
        "message": "2xx turn with no visible text and no tool call",
        "evidence": "text='' finish='completed'",
        "observed": {"status": 200, "text": "", "tool_calls": [], "events": ["data: {}"]},
        "reproduced": "10/10",
        "api": "responses",
        "stream": True,
        "case": _case(
            [
                {"kind": "user", "text": "Use get_weather."},
                {
                    "kind": "assistant",
                    "reasoning": "thinking",
                    "tool_calls": [{"id": MINTED, "name": "get_weather", "arguments": "{}"}],
                },
                {"kind": "tool_result", "call_id": MINTED, "output": '{"status": "ok"}'},
                {"kind": "user", "text": "again"},
            ],
            "responses",
            True,
        ),
        "symptoms": [
            {
                "oracle": "empty_turn",
                "signature": "empty_turn",
                "message": "empty",
                "seen_on": ["session responses/stream", "session chat/stream"],
            },
            {
                "oracle": "index_gap",
                "signature": "index_gap:gap",
                "message": "indexes 0, 2",
                "seen_on": ["session responses/stream"],
            },
        ],
        "found_by": {"command": "agentfuzz fuzz --seed 1", "seed": 1, "profile": "default"},
        "target": {"base_url": "http://gpu:8000/v1", "model": "kimi"},
    }
    second = {
        "url": "http://gpu:8000/v1/chat/completions",
        "request": {"model": "kimi", "messages": [{"role": "user", "content": HOSTILE}]},
        "oracle": "leaked_markup",
        "message": f"markup in text: {HOSTILE}",
        "evidence": "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>",
        "observed": {"status": 200, "text": HOSTILE + " functions.get_weather:0\x01"},
        "reproduced": "3/10",
        "api": "chat",
        "stream": False,
        "case": _case([{"kind": "user", "text": HOSTILE}], "chat", False),
    }
    rows = [
        FindingRow(oracle="empty_turn", signature="empty_turn", message=first["message"],
                   size=5, reproduced="10/10", bundle=_bundle(out / "a", first, session=True)),
        FindingRow(oracle="leaked_markup", signature="leaked_markup:text",
                   message=second["message"], size=1, reproduced="3/10", flaky=True,
                   bundle=_bundle(out / "b", second)),
        # A bundle that is gone: its row still shows.
        FindingRow(oracle="error", signature="error:5xx", message="HTTP 500", size=2,
                   reproduced="1/10", bundle=str(out / "gone")),
    ]  # fmt: skip
    return Summary(
        findings=rows,
        examples={"chat/no-stream": 30, "session responses/stream": 12, "responses/stream": 30},
        requests=400,
        elapsed_s=12.5,
        session_turns={
            "1": TurnRow(reached=10, failed=0),
            "2": TurnRow(reached=8, failed=4),
            "3": TurnRow(reached=4, failed=3),
        },
        coverage={
            "plain": Coverage(requests=300, ok=299, refused=1),
            "custom_tools": Coverage(requests=7, refused=7, pinned=7),
        },
    )


def _html(tmp_path: Path) -> str:
    (page,) = write_reports(_run(tmp_path), (("html", tmp_path / "html"),))
    assert page == tmp_path / "html" / "index.html"
    return page.read_text()


def test_html_escapes_everything_a_server_said(tmp_path: Path) -> None:
    page = _html(tmp_path)
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page


def test_html_is_self_contained(tmp_path: Path) -> None:
    page = _html(tmp_path)
    assert "<style>" in page
    # No stylesheet, script, image or font fetched from anywhere; links stay in the page or
    # point at the bundles beside it.
    assert not re.search(r"<(link|script|img|iframe)\b|@import|url\(", page)
    hrefs = re.findall(r'href="([^"]*)"', page) + re.findall(r"href='([^']*)'", page)
    assert hrefs and all(h.startswith(("#", "../")) for h in hrefs), hrefs


def test_html_matrix_marks_each_symptom_on_the_modes_it_was_seen_on(tmp_path: Path) -> None:
    page = _html(tmp_path)
    matrix = page[page.index('id="matrix"') : page.index('id="findings"')]
    rows = re.findall(r"<tr><th><a href=\"#finding-(\d)\">.*?</tr>", matrix)
    assert rows == ["1", "1", "2", "3"]  # two symptoms of #1, then one row each
    cells = [
        re.findall(r"<td class=\"(\w+)\"", r) for r in re.findall(r"<tr><th><a.*?</tr>", matrix)
    ]
    # Columns: chat/no-stream, chat/stream, responses/no-stream, responses/stream; a mode
    # ran when the summary counted examples there or a finding was seen there.
    assert cells[0] == ["ok", "hit", "off", "hit"]  # empty_turn: two session modes
    assert cells[1] == ["ok", "ok", "off", "hit"]  # index_gap
    assert cells[2] == ["hit", "ok", "off", "ok"]  # leaked_markup: its request's own mode
    assert cells[3] == ["unk", "unk", "off", "unk"]  # no bundle, no mode known


def test_html_transcript_marks_the_failing_turn_and_classifies_ids(tmp_path: Path) -> None:
    page = _html(tmp_path)
    first = page[page.index('id="finding-1"') : page.index('id="finding-2"')]
    kinds = re.findall(r'<div class="bubble (\w+)', first)
    assert kinds == ["user", "assistant", "tool", "user", "answer"]
    assert first.count("failing turn") == 1
    assert f'title="vllm_responses_stream"><code>{MINTED}</code>' in first
    second = page[page.index('id="finding-2"') : page.index('id="finding-3"')]
    # An id in the answer's text is classified too: Kimi's native shape.
    assert 'class="id g-kimi" title="kimi_native"><code>functions.get_weather:0</code>' in second
    assert "3/10 (flaky)" in second


def test_html_plots_the_failure_rate_per_turn(tmp_path: Path) -> None:
    page = _html(tmp_path)
    bars = re.findall(r'<rect [^>]*height="([\d.]+)" class="bar"><title>([^<]*)</title>', page)
    assert [t for _, t in bars] == [
        "turn 1: 0/10 failed",
        "turn 2: 4/8 failed",
        "turn 3: 3/4 failed",
    ]
    heights = [float(h) for h, _ in bars]
    assert heights[0] == 0 and heights[2] == pytest.approx(heights[1] * 1.5, rel=0.01)


def test_html_coverage_table(tmp_path: Path) -> None:
    page = _html(tmp_path)
    table = page[page.index('id="coverage"') :]
    assert table.index("plain") < table.index("custom_tools")
    assert "<th>custom_tools</th><td>7</td><td>0</td><td>7</td>" in table
    assert table.count("always refused</td>") == 1


def test_html_of_a_clean_run(tmp_path: Path) -> None:
    (page,) = write_reports(Summary(examples={"chat/stream": 5}), (("html", tmp_path / "r"),))
    text = page.read_text()
    assert "Nothing failed." in text and "✓ clean" in text
    assert 'id="turns"' not in text and 'id="coverage"' not in text


def test_html_in_chromium_shows_the_text_not_the_markup(tmp_path: Path) -> None:
    (page,) = write_reports(_run(tmp_path), (("html", tmp_path / "html"),))
    dom = rendered_dom(page, tmp_path)
    text, tags = visible(dom)
    assert "<title>agentfuzz report</title>" in dom  # no script ran
    assert "script" not in tags and "img" not in tags
    assert HOSTILE.split(" |")[0] in text
    assert "✗ failing turn" in text and f"{MINTED} vllm_responses_stream" in text
    screenshot(page, tmp_path / "writers.png", tmp_path)


def test_markdown(tmp_path: Path) -> None:
    text = markdown(gather(_run(tmp_path)))
    # Each symptom of finding #1 numbered apart.
    assert "| #1.1 empty\\_turn: empty | ✓ | ✗ seen (session) | – | ✗ seen (session) |" in text
    assert "| #1.2 index\\_gap: indexes 0, 2 |" in text
    # Hostile text cannot open a tag or end a table cell; in a code fence it is inert, and
    # the fence is longer than any backtick run inside it.
    fences = re.findall(r"^(`{3,})json\n.*?^\1$", text, flags=re.S | re.M)
    assert len(fences) == 2
    outside = re.sub(r"^(`{3,})json\n.*?^\1$", "", text, flags=re.S | re.M)
    assert "<script" not in outside and "<img" not in outside
    cell = next(line for line in text.splitlines() if line.startswith("| #2"))
    assert cell.count(" | ") == 4 and "\\|" in cell
    bundle = tmp_path / "out" / "a"
    assert f"- re-send: ` sh {bundle}/repro.sh `" in text
    assert f"- regression test: ` pytest {bundle}/test_repro.py `" in text
    assert f"**tool** result for ` {MINTED} ` (vllm\\_responses\\_stream)" in text
    assert "| 2 | 8 | 4 | 50% |" in text
    assert "| custom\\_tools | 7 | 0 | 7 | 0 | 0 | 0 | always refused |" in text
    assert "| command | agentfuzz fuzz --seed 1 |" in text


def test_junit_validates_and_counts(tmp_path: Path) -> None:
    (path,) = write_reports(_run(tmp_path), junit=tmp_path / "j" / "run.xml")
    assert_valid_junit(path)
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    failed = {key for key, c in cases.items() if c.find("failure") is not None}
    passed = {key for key, c in cases.items() if len(c.findall("failure")) == 0}
    assert set(cases) == {
        ("agentfuzz.mode", "chat/no-stream"),
        ("agentfuzz.mode", "session responses/stream"),
        ("agentfuzz.mode", "responses/stream"),
        ("agentfuzz.finding.empty_turn", "empty_turn"),
        ("agentfuzz.finding.leaked_markup", "leaked_markup:text"),
        ("agentfuzz.finding.error", "error:5xx"),
    }
    # One failure per finding, however many modes saw it; every mode that ran passes.
    assert failed == {key for key in cases if key[0].startswith("agentfuzz.finding.")}
    assert passed == {key for key in cases if key[0] == "agentfuzz.mode"}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("6", "3", "0")
    assert suite.get("skipped") == "0" and suite.get("time") == "12.500"
    failure = cases[("agentfuzz.finding.leaked_markup", "leaked_markup:text")].find("failure")
    assert failure is not None and failure.get("type") == "leaked_markup"
    assert (failure.get("message") or "").startswith("leaked_markup: markup in text: <script>")
    assert f"bundle: {tmp_path / 'out' / 'b'}" in (failure.text or "")


def test_junit_keeps_characters_xml_cannot_carry_out(tmp_path: Path) -> None:
    run = gather(Summary(findings=[FindingRow(
        oracle="error", signature="error", message="bad \x00\x1b byte", size=1,
        reproduced="1/1", bundle=str(tmp_path / "none"))]))  # fmt: skip
    text = junit_xml(run, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert "\x00" not in text and "bad \ufffd\ufffd byte" in text
    (tmp_path / "j.xml").write_text(text)
    assert_valid_junit(tmp_path / "j.xml")


def test_junit_errors_when_the_run_broke_or_tested_nothing(tmp_path: Path) -> None:
    for summary, why in (
        (Summary(examples={"chat/stream": 3}, error="boom"), "internal error: boom"),
        (Summary(examples={"chat/stream": 3}, not_served="401"), "answered 401"),
        (Summary(), "no mode ran"),
    ):
        root = ET.fromstring(junit_xml(gather(summary)))
        (error,) = root.iter("error")
        assert why in (error.get("message") or "")
        assert root.get("errors") == "1"


def test_report_paths_checked_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert unwritable((("html", tmp_path / "new"),), tmp_path / "j.xml") is None
    assert "is not a folder" in str(unwritable((("html", tmp_path / "file"),), None))
    assert "is a folder" in str(unwritable((("markdown", tmp_path),), None))
    assert "is a folder" in str(unwritable((), tmp_path))
    assert "file is not a folder" in str(unwritable((), tmp_path / "file" / "j.xml"))
    with pytest.raises(ValueError, match="unknown report format"):
        write_reports(Summary(), (("pdf", tmp_path / "x"),))
