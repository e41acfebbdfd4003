"""Issue 41: ``agentfuzz fuzz``'s output as a CI log shows it.

Off a terminal nothing is cut at 80 columns; the coverage is one line unless ``--coverage`` asks
for its table (whose every column has a header); the last lines are the verdict: the findings,
their bundles, how to re-send them. The seed a run drew is printed and recorded, so the run can
be repeated. Whatever the server said is printed escaped, never obeyed by the terminal nor read
as markup.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from agentfuzz.cli import main
from agentfuzz.cli._render import summary
from agentfuzz.model.summary import Coverage, FindingRow, Summary


def _fuzz(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["fuzz", "--quiet", "--api", "chat", "--no-stream", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_run_ends_with_its_verdict_uncut_and_its_coverage_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Every answer of model-renamed names another model: a finding on the first example.
    argv = ["--serve", "model-renamed", "--max-examples", "1", "--out", "o"]
    code, out, _ = _fuzz(capsys, *argv)
    assert code == 1, out
    lines = out.splitlines()
    bundle = Path(json.loads(Path("o/summary.json").read_text())["findings"][0]["bundle"])
    assert lines[-3:] == [
        f"report: {bundle / 'REPORT.md'}",
        f"re-send: sh {bundle / 'repro.sh'}",
        f"regression test: pytest {bundle}",
    ]
    assert any(line.startswith("│ consistency ") for line in lines[-8:])
    # Off a terminal: no line cut short to fit 80 columns, and no table of every dimension.
    assert "…" not in out and max(map(len, lines)) > 80
    (coverage,) = [line for line in lines if "coverage" in line]
    assert coverage.startswith("request surface coverage: ") and "dimensions sent" in coverage
    assert "--coverage" in coverage and "summary.json" in coverage
    assert "dimension" not in out.split(coverage)[0]
    # In full, in summary.json.
    assert json.loads(Path("o/summary.json").read_text())["coverage"]


def test_coverage_prints_the_table_with_a_header_on_every_column(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _fuzz(capsys, "--serve", "fixed", "--max-examples", "3", "--coverage")
    assert code == 0, out
    (header,) = [line for line in out.splitlines() if "dimension" in line and "requests" in line]
    cells = [cell.strip() for cell in header.strip("┃ ").split("┃")]
    assert cells == ["dimension", "requests", "2xx", "4xx", "5xx", "failed", "slow", "note"]
    assert out.splitlines()[-1].startswith("0 finding(s) · examples: chat/no-stream 3")


def test_the_seed_drawn_is_printed_and_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _fuzz(capsys, "--serve", "fixed", "--max-examples", "2", "--out", "o")
    assert code == 0, out
    seed = json.loads(Path("o/summary.json").read_text())["run"]["seed"]
    assert isinstance(seed, int)
    assert f"seed {seed} (--seed {seed} repeats it)" in out.splitlines()[0]
    assert "seed random" not in out


class _Hostile(http.server.BaseHTTPRequestHandler):
    """A server whose model list is an error page carrying terminal escapes and rich markup."""

    def do_GET(self) -> None:
        body = b"\x1b[2J\x1b]0;owned\x07 [bold]x[/nope] \x00gone"
        self.send_response(404)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _serving() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_what_the_server_said_is_printed_escaped_in_an_error_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _serving() as url:
        code, out, err = _fuzz(capsys, "--base-url", url)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "\x1b" not in err and "\x00" not in err
    assert "answered 404: \\x1b[2J\\x1b]0;owned\\x07 [bold]x[/nope] \\x00gone" in err


def test_a_finding_and_a_model_name_are_printed_escaped_and_never_read_as_markup() -> None:
    message = "HTTP 500: \x1b[31mred\x1b[0m [bold]loud[/bold] [/] \x00\u202eevil"
    row = FindingRow(
        oracle="error", signature="s", message=message, size=1, reproduced="1/1", bundle="b"
    )
    row.flaky = True
    run = {"target": {"base_url": "http://h/v1", "model": "m\x1b]0;owned\x07"}, "seed": 1}
    console = Console(record=True, width=300, force_terminal=False)
    summary(console, Summary(run=run, findings=[row], coverage={"n": Coverage(requests=1)}))
    text = console.export_text()
    assert "\x1b" not in text and "\x00" not in text and "\u202e" not in text
    assert "\\x1b[31mred\\x1b[0m [bold]loud[/bold] [/] \\x00\\u202eevil" in text
    assert "model m\\x1b]0;owned\\x07 ·" in text
    assert text.splitlines()[-1] == "regression test: pytest b"
