"""``agentfuzz fuzz --puppet FORMAT``: a format of the catalog, for generated requests and
sessions, against a server that writes what a script says; anything else is one line and exit
2, before a request is judged (a server without the processor answers with its model's words,
and holding those to a script would blame the server for the model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import BinaryIO

from click.testing import CliRunner

from agentfuzz.cli import cli
from tests.hostile.servers import Request, models_list, raw_server, respond


def _fuzz(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["fuzz", *args, "--quiet"])
    return result.exit_code, result.output


def test_an_unknown_format_is_one_line_with_the_one_meant(tmp_path: Path) -> None:
    code, output = _fuzz("--puppet", "hermez", "--out", str(tmp_path))
    assert code == 2
    assert output.strip().splitlines() == [
        "agentfuzz: Invalid value for '--puppet': unknown tool-call format 'hermez'; "
        "did you mean hermes?"
    ]


def test_captured_sessions_are_not_scripted(tmp_path: Path) -> None:
    seeds = tmp_path / "captured"
    seeds.mkdir()
    code, output = _fuzz("--puppet", "hermes", "--seed-sessions", str(seeds),
                         "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 2
    assert output.strip().splitlines() == [
        "agentfuzz: --puppet scripts generated requests and sessions: not --seed-sessions"
    ]


def _model_says_hello(request: Request, out: BinaryIO) -> None:
    if request.path.endswith("/models"):
        models_list(out, "m")
        return
    message = {"role": "assistant", "content": "Hello! How can I help?"}
    answer = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
    answer["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    respond(out, 200, json.dumps(answer))


def test_a_server_that_ignores_the_script_is_not_fuzzed(tmp_path: Path) -> None:
    with raw_server(_model_says_hello) as server:
        code, output = _fuzz("--base-url", server.base_url, "--puppet", "hermes",
                             "--out", str(tmp_path / "out"))  # fmt: skip
        sent = [r for r in server.requests if r.method == "POST"]
    assert code == 2, output
    assert "does not write what a script says" in output
    assert "agentfuzz puppet vllm-args" in output
    # One request, the canary, with its script; nothing fuzzed, nothing written.
    assert len(sent) == 1
    body = sent[0].json()
    assert isinstance(body, dict) and "agentfuzz_puppet" in body["vllm_xargs"]
    assert not (tmp_path / "out" / "summary.json").exists()
