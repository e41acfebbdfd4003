"""The fuzz command's promises: no key on disk, runnable repro.sh, a dying server is a finding."""

from __future__ import annotations

import json
import shlex
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.config import version

from .quality.planted_server import planted_server

CANARY = "sk-agentfuzz-canary-7f3a9c"


def _fuzz(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["fuzz", "--quiet", "--seed", "7", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_api_key_never_reaches_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with planted_server(["ignore_choice_none"]) as url:
        code, _ = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--stream",
            "--max-examples", "200", "--out", str(out), "--api-key", CANARY,
        )  # fmt: skip
    assert code == 1
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written, "a finding should have been written"
    for path in [*written, *Path(".agentfuzz").rglob("*")]:
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_found_by_is_a_command_that_finds_the_same_failures_again(tmp_path: Path) -> None:
    with planted_server(["ignore_choice_none"]) as url:
        args = ["--base-url", url, "--model", "m", "--api", "chat", "--stream"]
        args += ["--max-examples", "200", "--out", str(tmp_path / "a")]
        code, _ = _fuzz(*args, "--api-key", CANARY)
        assert code == 1
        docs = [json.loads(p.read_text()) for p in (tmp_path / "a").glob("*/repro.json")]
        (found_by,) = {json.dumps(d["found_by"], sort_keys=True) for d in docs}
        recorded = json.loads(found_by)
        assert recorded["seed"] == 7 and recorded["profile"] == "default"
        assert recorded["agentfuzz"] == version()
        words = shlex.split(recorded["command"])
        assert words == ["agentfuzz", "fuzz", "--quiet", "--seed", "7", *args]
        # Run again as recorded, into another folder: the same failures.
        words[words.index("--out") + 1] = str(tmp_path / "b")
        rerun = CliRunner().invoke(cli, words[1:])
    assert rerun.exit_code == 1
    names = {p.parent.name for p in (tmp_path / "a").glob("*/repro.json")}
    assert names
    assert {p.parent.name for p in (tmp_path / "b").glob("*/repro.json")} == names


def test_repro_sh_reproduces_with_curl(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with planted_server(["ignore_choice_none"]) as url:
        code, _ = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--stream",
            "--max-examples", "200", "--out", str(out),
        )  # fmt: skip
        assert code == 1
        (bundle,) = [p.parent for p in out.glob("tool_choice-*/repro.sh")]
        doc = json.loads((bundle / "repro.json").read_text())
        assert doc["request"]["tool_choice"] == "none"
        sent = subprocess.run(
            ["sh", str(bundle / "repro.sh")], capture_output=True, text=True, timeout=30
        )
    assert sent.returncode == 0, sent.stderr
    # The planted bug answers tool_choice "none" with a call anyway: the stream shows it.
    assert '"tool_calls"' in sent.stdout
    assert "[DONE]" in sent.stdout


_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "fine."},
        }
    ],
}


def _close(server: socketserver.BaseServer) -> None:
    server.shutdown()
    server.server_close()


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port, its base URL; a handler stops listening
    with ``_close(self.server)``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        _close(server)


@contextmanager
def _server_that_dies_after(answers: int) -> Iterator[str]:
    """A correct chat server that stops listening after ``answers`` answers."""
    count = 0

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            nonlocal count
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps(_ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            count += 1
            if count == answers:
                threading.Thread(target=_close, args=(self.server,), daemon=True).start()

        def log_message(self, *args: object) -> None:
            pass

    with _serving(Handler) as url:
        yield url


@contextmanager
def _server_that_dies_on(field: str) -> Iterator[str]:
    """A correct chat server that dies on the first request carrying ``field``: it starts an
    answer, stops listening, and drops the connection half way."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                sent = json.loads(raw or 0)
            except (ValueError, RecursionError):  # a broken or deeply nested body: no field
                sent = None
            body = json.dumps(_ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not (isinstance(sent, dict) and field in sent):
                self.wfile.write(body)
                return
            self.wfile.write(body[:20])
            self.wfile.flush()
            stopping = threading.Thread(target=_close, args=(self.server,))
            stopping.start()
            stopping.join()  # no longer listening when the connection drops
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    with _serving(Handler) as url:
        yield url


def test_a_server_that_dies_mid_answer_is_signed_server_died_on_that_request(
    tmp_path: Path,
) -> None:
    # The connection drops on a request with a stop list, and no new one is taken: that request
    # killed the server (not the next one sent, and not a mere dropped connection).
    out = tmp_path / "out"
    with _server_that_dies_on("stop") as url:
        code, output = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream",
            "--max-examples", "200", "--out", str(out), "--timeout", "3",
        )  # fmt: skip
    assert code == 1, output
    assert "stopped answering" in output
    docs = [json.loads(p.read_text()) for p in out.glob("*/repro.json")]
    (crash,) = [d for d in docs if d["oracle"] == "error"]
    assert crash["signature"] == "error:server_died"
    assert "stop" in crash["request"] and "no new one is accepted" in crash["evidence"]


def test_a_server_that_stops_answering_is_a_finding(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with _server_that_dies_after(5) as url:
        code, output = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream",
            "--max-examples", "50", "--out", str(out), "--timeout", "3",
        )  # fmt: skip
    assert code == 1
    assert "stopped answering" in output
    docs = [json.loads(p.read_text()) for p in out.glob("*/repro.json")]
    crash = [d for d in docs if d["signature"] == "error:server_died"]
    assert len(crash) == 1
    assert crash[0]["oracle"] == "error"
    # The last answered request is the repro: a body (or, when the fuzzer broke that one on
    # purpose, the raw text it sent).
    request = crash[0]["request"]
    assert request if isinstance(request, str) else request["messages"]


def _wire_items(request: dict[str, object]) -> int:
    items = request.get("messages", request.get("input"))
    assert isinstance(items, list)
    return len(items)


def test_every_distinct_failure_is_reported_and_shrunk_on_its_own(tmp_path: Path) -> None:
    from .quality.planted_server import BUGS

    bugs = ["empty_on_foreign_id", "leak_without_tools", "echo_bad_args"]
    out = tmp_path / "out"
    with planted_server(bugs) as url:
        code, _ = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream",
            "--max-examples", "300", "--out", str(out),
        )  # fmt: skip
    assert code == 1
    docs = [json.loads(p.read_text()) for p in out.glob("*/repro.json")]
    # summary.json says the same as the bundles, for machines.
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(f["bundle"] for f in summary["findings"]) == sorted(
        str(p.parent) for p in out.glob("*/repro.json")
    )
    assert summary["requests"] > 0 and summary["examples"]["chat/no-stream"] > 0
    assert {f["oracle"] for f in summary["findings"]} == {d["oracle"] for d in docs}
    for bug in bugs:
        spec = BUGS[bug]
        sizes = [_wire_items(d["request"]) for d in docs if d["oracle"] == spec.oracle]
        assert sizes, f"{bug}: no {spec.oracle} finding"
        assert min(sizes) == spec.min_items, bug


def test_skipped_oracles_do_not_judge(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with planted_server(["ignore_choice_none"]) as url:
        code, _ = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--stream",
            "--max-examples", "100", "--out", str(out), "--skip-oracles", "tool_choice",
        )  # fmt: skip
    assert code == 0
    assert list(out.glob("*/repro.json")) == []


def test_max_time_stops_the_run_and_keeps_what_it_found(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # 50 ms an answer: 2000 examples would take minutes, the budget is a second and a half.
    with serve_in_thread("vllm-kimi-k2", latency_ms=50) as url:
        code, output = _fuzz(
            "--base-url", url, "--model", "m", "--api", "chat", "--no-stream",
            "--max-examples", "2000", "--max-time", "1.5", "--out", str(out),
        )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["out_of_time"] is True
    assert 0 < sum(summary["examples"].values()) < 2000
    assert "stopped at --max-time" in output
    assert code in (0, 1)  # findings or none: either way a normal end, not an error
    for finding in summary["findings"]:
        assert (Path(finding["bundle"]) / "repro.json").is_file()


def test_a_slow_answer_is_counted_never_a_finding(tmp_path: Path) -> None:
    # A buggy server, but too slow for the timeout: nothing it did is judged, nothing is written.
    # No surface fields and no odd tools: the server refuses some at once, and a refusal is not
    # slow.
    out, plain = tmp_path / "out", tmp_path / "plain.toml"
    plain.write_text(
        "surface = []\nadversarial_names = false\ncolliding_names = false\n"
        "adversarial_schemas = false\n"
    )
    with serve_in_thread("vllm-kimi-k2", latency_ms=500) as url:
        code, output = _fuzz(
            "--base-url", url, "--model", "m", "--max-examples", "3", "--timeout", "0.1",
            "--out", str(out), "--profile", str(plain),
        )  # fmt: skip
    assert code == 2 and "every request ran out of time: nothing was tested" in output
    assert "slow answers, counted, not findings" in " ".join(output.split())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"] == [] and not [p for p in out.iterdir() if p.is_dir()]
    rows = summary["latency"]
    assert set(rows) == {"chat/no-stream", "chat/stream", "responses/no-stream", "responses/stream"}
    assert all(row["timeouts"] == row["requests"] > 0 for row in rows.values())
    assert all(0.1 <= row["p50_s"] <= row["p95_s"] for row in rows.values())
