"""An assistant turn without calls may say ``tool_calls: []`` or ``null`` (issue 41 item 24):
the planted ``null-calls-500`` profile (a template that loops over ``tool_calls`` unguarded)
answers a 500 to ``null``; a fuzz run finds it and shrinks it to that form alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread

ASKED = {"role": "user", "content": "hi"}


def _said(calls: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "hello", "tool_calls": calls}


@pytest.mark.parametrize("profile", ["null-calls-500", "fixed"])
def test_only_null_calls_crash_the_planted_template(profile: str) -> None:
    with serve_in_thread(profile) as url:
        for calls, crashes in (([], False), (None, profile == "null-calls-500")):
            body = {"model": "m", "messages": [ASKED, _said(calls), ASKED]}
            answer = httpx.post(url + "/chat/completions", json=body, timeout=10)
            assert answer.status_code == (500 if crashes else 200), (calls, answer.text)


@pytest.mark.slow
def test_a_fuzz_run_finds_null_calls_and_shrinks_to_that_form(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["fuzz", "--serve", "null-calls-500", "--api", "chat", "--no-stream", "--quiet"]
    # Seed 0: one whose 400 examples draw a ``calls_null`` form and shrink to it alone (6 of
    # seeds 0-7 do). Seeds move when the generators change (Hypothesis draws from the constants
    # of request/ and strategies/).
    argv += ["--max-examples", "400", "--seed", "0", "--out", str(out)]
    result = CliRunner().invoke(cli, argv)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 1, result.output
    (found,) = [json.loads(p.read_text()) for p in out.glob("*/repro.json")]
    assert found["oracle"] == "error"
    assert found["signature"].startswith("error:http_status:500:needs:message_forms:calls_null")
    assert found["case"]["options"]["forms"] == ["calls_null"]
    messages = found["request"]["messages"]
    # The assistant turn with nothing in it: no calls (null), and no text (null or empty, alike
    # plain; which one the shrinker ends on moves with the draws).
    assert len(messages) == 3 and messages[1]["tool_calls"] is None
    assert messages[1]["role"] == "assistant" and messages[1]["content"] in (None, "")
    assert found["reproduced"].split("/")[0] != "0"
