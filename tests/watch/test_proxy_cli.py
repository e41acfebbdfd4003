"""``agentfuzz proxy`` as a user runs it: a line saying where it listens, one line per caught
fault, everything kept on Ctrl-C, documented exit codes; and ``agentfuzz reduce`` cutting what
it caught down to the repro the synthetic fuzzer finds."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread

agent_clients = pytest.importorskip("agent_clients")


def _proxy(upstream: str, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agentfuzz", "proxy", "--upstream", upstream, "--port", "0"]
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [*command, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )


def _line_with(process: subprocess.Popen[str], text: str) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if text in line:
            return line
    raise AssertionError(f"the proxy ended without saying {text!r}")


def test_a_codex_like_session_is_caught_kept_on_ctrl_c_and_reduced(tmp_path: Path) -> None:
    with serve_in_thread("vllm-kimi-k2") as upstream:
        process = _proxy(
            upstream, "--out", str(tmp_path / "out"), "--record", str(tmp_path / "rec")
        )
        try:
            url = _line_with(process, "listening on ").split()[2]
            did = agent_clients.sdk_loop(url, "responses", True, api_key="sk-NEVER-WRITTEN")
            caught = _line_with(process, "empty_turn")
        finally:
            process.send_signal(signal.SIGINT)
            rest, _ = process.communicate(timeout=30)
    assert did.requests == 3 and did.final == ""  # the client met the empty turn itself
    assert "session 1 turn 3: empty_turn" in caught
    assert process.returncode == 1, rest
    assert "3 turns judged in 1 sessions, 1 findings" in rest
    [bundle] = (tmp_path / "out").glob("empty_turn-*")
    session = json.loads((bundle / "session.json").read_text())
    assert [t["turn"] for t in session["turns"]] == [1, 2, 3]
    assert (tmp_path / "rec" / "session-0001" / "session.yaml").is_file()
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or "sk-NEVER-WRITTEN" not in path.read_text(errors="replace")
    found_by = json.loads((bundle / "repro.json").read_text())["found_by"]
    assert found_by["command"].startswith("agentfuzz proxy --upstream ")

    # Cut down, from the session and from its cassette: the repro the fuzzer itself finds.
    runner = CliRunner()
    reduced = []
    for given in ("session.json", "session.yaml"):
        out = tmp_path / f"reduced-{given}"
        args = ["reduce", str(bundle / given), "--serve", "vllm-kimi-k2", "--out", str(out)]
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert "confirmed: empty_turn on request 3 of 3" in result.output
        [folder] = out.glob("empty_turn-*")
        reduced.append(json.loads((folder / "repro.json").read_text()))
    fuzzed = tmp_path / "fuzzed"
    args = ["fuzz", "--serve", "vllm-kimi-k2", "--api", "responses", "--stream"]
    result = runner.invoke(
        cli, [*args, "--max-examples", "100", "--seed", "1", "--out", str(fuzzed)]
    )
    assert result.exit_code == 1, result.output
    [synthetic] = fuzzed.glob("empty_turn-*")
    by_fuzzer = json.loads((synthetic / "repro.json").read_text())
    for doc in reduced:
        assert doc["signature"] == by_fuzzer["signature"]
        # One call under a client-shaped id and its result: what the fuzzer's repro holds.
        kinds = [i.get("type", "message") for i in doc["request"]["input"]]
        assert kinds.count("function_call") == 1 and kinds.count("function_call_output") == 1
        assert len(kinds) <= len(by_fuzzer["request"]["input"]) + 1


def test_bad_upstreams_and_addresses_are_one_line_and_a_documented_exit(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["proxy", "--upstream", "not a url"])
    assert result.exit_code == 2 and "--upstream" in result.output
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    result = runner.invoke(cli, ["proxy", "--upstream", f"http://127.0.0.1:{closed}/v1"])
    assert result.exit_code == 3 and "cannot connect to" in result.output
    with serve_in_thread("fixed") as upstream, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        args = ["proxy", "--upstream", upstream, "--port", port, "--out", str(tmp_path)]
        result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1:" in result.output
    assert "Traceback" not in result.output


CODEX = Path(__file__).parent / "codex_seed000"


@pytest.mark.parametrize(
    ("profile", "fires"), [("vllm-kimi-k2", True), ("vllm-kimi-k2-fixed", False)]
)
def test_the_session_codex_cli_met_reduces_to_seed_000(profile: str, fires: bool) -> None:
    """What `live/codex/session.py --serve vllm-kimi-k2` caught: Codex CLI's own session, cut
    down by `agentfuzz reduce`. Re-sent, it fires on the bug and not on its fix."""
    from agentfuzz import resend_bundle

    doc = json.loads((CODEX / "repro.json").read_text())
    assert doc["found_by"]["command"].startswith("python live/codex/session.py")
    assert doc["found_by"]["reduce"]["command"].startswith("agentfuzz reduce ")
    assert [t["name"] for t in doc["request"]["tools"]] == ["exec_command"]  # Codex's own tool
    with serve_in_thread(profile) as url:
        said = resend_bundle(CODEX, url, None)
    assert any(v.signature == doc["signature"] for v in said) is fires


def test_sigterm_stops_the_proxy_as_ctrl_c_does(tmp_path: Path) -> None:
    with serve_in_thread("fixed") as upstream:
        process = _proxy(upstream, "--out", str(tmp_path))
        try:
            _line_with(process, "listening on ")
        finally:
            process.send_signal(signal.SIGTERM)
            rest, _ = process.communicate(timeout=30)
    assert process.returncode == 0, rest
    assert "0 turns judged in 0 sessions, 0 findings" in rest


def test_a_fault_in_the_answer_itself_is_cut_from_the_recording_offline(tmp_path: Path) -> None:
    from .conftest import proxied

    with proxied("vllm-responses-regen", tmp_path / "out") as (url, watch):
        agent_clients.sdk_loop(url, "responses", True)
    first = watch.caught[0]
    assert first.violation.oracle == "identity"
    session = first.folder / "session.yaml"
    runner = CliRunner()
    out = tmp_path / "offline"
    result = runner.invoke(cli, ["reduce", str(session), "--offline", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert f"recorded: identity on request {first.turn} (judged offline)" in result.output
    [folder] = out.glob("identity-*")
    doc = json.loads((folder / "repro.json").read_text())
    assert doc["reproduced"].startswith("recorded")
    assert doc["found_by"]["reduce"]["command"].startswith("agentfuzz reduce ")
    assert json.loads((folder / "reduction.json").read_text())["offline"] is True
    # Its cassette replays the recorded answer: the bundle's own test passes offline.
    assert (folder / "cassette.yaml").is_file()
    for args, message in (
        (["--serve", "fixed"], "takes neither --base-url nor --serve"),
        ([], "expected a cassette"),
    ):
        given = session if args else first.folder / "session.json"
        result = runner.invoke(cli, ["reduce", str(given), "--offline", *args])
        assert result.exit_code == 2 and message in result.output, result.output
