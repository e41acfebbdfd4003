"""Does agentfuzz find each planted bug, and shrink it to the bug's known minimal request?

Each test starts a planted server (``planted_server.py``) with one bug on and runs the CLI
against it, the way a maintainer would; the repro it writes must hold the smallest request
that fires the bug, and re-sending that request must fire it again.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from .planted_server import BUGS, planted_server, shows_effect

SEED = 1


def fuzz(url: str, out: Path, api: str, stream: bool, max_examples: int) -> Result:
    """Run ``agentfuzz fuzz`` in-process, as the CLI contract in DESIGN.md spells it."""
    from agentfuzz.cli import cli  # here, so a missing CLI fails these tests, not collection

    args = ["fuzz", "--base-url", url, "--model", "planted", "--api", api]
    args += ["--stream" if stream else "--no-stream", "--max-examples", str(max_examples)]
    args += ["--seed", str(SEED), "--out", str(out), "--profile", "default"]
    return CliRunner().invoke(cli, args)


def findings(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


def wire_items(request: dict[str, Any]) -> int:
    """The request's size in wire items: ``len(messages)`` (chat) or ``len(input)`` (Responses)."""
    items = request["messages"] if "messages" in request else request["input"]
    return 1 if isinstance(items, str) else len(items)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_finds_and_shrinks_each_planted_bug(bug: str, tmp_path: Path) -> None:
    spec = BUGS[bug]
    with planted_server([bug]) as url:
        result = fuzz(url, tmp_path, spec.api, spec.stream, max_examples=300)
        assert result.exit_code == 1, result.output
        found = findings(tmp_path)
        hits = [f for f in found if f["oracle"] == spec.oracle]
        assert hits, f"no {spec.oracle} finding among {[f['oracle'] for f in found]}"
        for f in hits:
            assert {"url", "request", "oracle", "message", "observed", "reproduced"} <= set(f)
        smallest = min(hits, key=lambda f: wire_items(f["request"]))
        shown = json.dumps(smallest["request"]) + "\n" + result.output
        assert wire_items(smallest["request"]) == spec.min_items, shown
        answer = httpx.post(smallest["url"], json=smallest["request"], timeout=10)
        ctype = answer.headers.get("content-type", "")
        assert shows_effect(bug, smallest["request"], answer.status_code, ctype, answer.text)


# Measured: ~40 s per chat mode, 45-70 s per Responses mode (500 examples).
MODES = [
    ("chat", False),
    ("chat", True),
    pytest.param("responses", False, marks=pytest.mark.slow),
    pytest.param("responses", True, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_a_correct_server_yields_no_findings(
    clean_url: str, tmp_path: Path, api: str, stream: bool
) -> None:
    result = fuzz(clean_url, tmp_path, api, stream, max_examples=500)
    assert result.exit_code == 0, result.output
    assert findings(tmp_path) == []


@pytest.mark.parametrize(
    ("bug", "api", "stream"),
    [
        ("list_body", "responses", False),
        ("truncated_stream", "responses", True),
        ("reset", "chat", True),
    ],
)
def test_broken_transports_are_findings_not_crashes(
    tmp_path: Path, bug: str, api: str, stream: bool
) -> None:
    with planted_server([bug]) as url:
        result = fuzz(url, tmp_path, api, stream, max_examples=20)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert {f["oracle"] for f in findings(tmp_path)} & {"error", "wire_schema"}


def test_a_server_that_answers_every_request_with_a_web_page_tested_nothing(
    tmp_path: Path,
) -> None:
    # Every POST answered with nginx's welcome page: no answer was an API's, so nothing was
    # judged; one line says so, exit 2, and no bundle blames the server (issue 41, item 3).
    with planted_server(["html_body"]) as url:
        result = fuzz(url, tmp_path, "chat", False, max_examples=20)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "not an OpenAI-compatible API" in result.output
    assert findings(tmp_path) == []


def test_a_refused_port_exits_3_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = fuzz(f"http://127.0.0.1:{port}/v1", tmp_path, "chat", False, max_examples=5)
    assert result.exit_code == 3, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
