"""A seeded campaign recorded once against the reference server replays offline: the same
findings, the same minimal repros, the same summary; a changed campaign names its divergence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import FuzzConfig, Report, run
from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.wire.transport.cassette import NotInCassette

MODES = (("responses", True), ("chat", False))
CLOSED = "http://127.0.0.1:9/v1"  # nothing listens there: any request to it would fail


def _config(tmp_path: Path, url: str, out: str, **kw: Any) -> FuzzConfig:
    base: dict[str, Any] = {
        "base_url": url,
        "model": "kimi-k2-reference",
        "profile": load_profile("default"),
        "out": tmp_path / out,
        "modes": MODES,
        "kinds": ("synthetic", "session"),
        "max_examples": 8,
        "seed": 2,
        "cassette": tmp_path / "campaign",
    }
    return FuzzConfig(**(base | kw))


def _requests(out: Path) -> dict[str, Any]:
    return {p.parent.name: json.loads(p.read_text())["request"] for p in out.glob("*/repro.json")}


def _summary(report: Report) -> list[Any]:
    return [
        [(f.violation.key, f.case, f.reproduced) for f in report.findings],
        report.examples,
        report.turns,
        report.calls,
    ]


def test_a_recorded_campaign_replays_offline_with_the_same_findings(tmp_path: Path) -> None:
    with serve_in_thread("vllm-kimi-k2") as url:
        live = run(_config(tmp_path, url, "live", record_mode="once"))
    assert live.findings, "the seed profile should give findings"
    parts = sorted(p.name for p in (tmp_path / "campaign").glob("*.yaml"))
    assert parts == [
        "session-chat-no-stream.yaml",
        "session-responses-stream.yaml",
        "shrink.yaml",
        "synthetic-chat-no-stream.yaml",
        "synthetic-responses-stream.yaml",
    ]
    replayed = run(_config(tmp_path, CLOSED, "replay", record_mode="none"))
    assert _summary(replayed) == _summary(live)
    assert _requests(tmp_path / "replay") == _requests(tmp_path / "live")
    # "once" with the cassettes present replays too, without a server.
    again = run(_config(tmp_path, CLOSED, "again", record_mode="once"))
    assert _summary(again) == _summary(live)


def test_a_changed_campaign_fails_naming_the_first_divergent_request(tmp_path: Path) -> None:
    with serve_in_thread("vllm-kimi-k2") as url:
        run(_config(tmp_path, url, "live", modes=(("chat", False),), kinds=("synthetic",)))
    for change in ({"seed": 5}, {"profile": load_profile("kimi-k2")}):
        config = _config(
            tmp_path, CLOSED, "x", modes=(("chat", False),), kinds=("synthetic",), **change
        )
        with pytest.raises(NotInCassette) as caught:
            run(config)
        message = str(caught.value)
        assert message.startswith("request not in cassette synthetic-chat-no-stream.yaml: request ")
        assert "POST /v1/chat/completions: body." in message
        assert "\n" not in message


def _cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(argv), terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def test_the_cli_replays_without_a_server_and_says_when_it_cannot(tmp_path: Path) -> None:
    camp, args = str(tmp_path / "camp"), ["--api", "chat", "--no-stream", "--max-examples", "8"]
    # Seed 6 finds seed 000's bug within 8 examples.
    code, _ = _cli("fuzz", *args, "--seed", "6", "--cassette", camp, "--out", str(tmp_path / "a"))
    assert code == 1
    code, _ = _cli(
        "fuzz", *args, "--seed", "6", "--cassette", camp, "--record-mode", "none",
        "--out", str(tmp_path / "b"),
    )  # fmt: skip
    assert code == 1
    assert _requests(tmp_path / "a") == _requests(tmp_path / "b")
    code, diverged = _cli("fuzz", *args, "--seed", "9", "--cassette", camp, "--record-mode", "none")
    assert code == 2
    (line,) = [x for x in diverged.splitlines() if x.startswith("agentfuzz: ")]
    assert "request not in cassette" in line
    code, out = _cli("fuzz", "--record-mode", "none")
    assert code == 2 and "--record-mode needs --cassette" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = _cli("fuzz", "--cassette", str(empty), "--record-mode", "none")
    assert code == 2 and "no cassette to replay" in out


def test_a_campaign_that_found_nothing_replays_offline(tmp_path: Path) -> None:
    # With no finding there is nothing to shrink: no shrink tape is recorded, none is asked for.
    camp = str(tmp_path / "camp")
    args = ["--serve", "fixed", "--api", "chat", "--no-stream", "--max-examples", "5"]
    args += ["--seed", "1"]
    code, _ = _cli("fuzz", *args, "--cassette", camp, "--out", str(tmp_path / "a"), "--quiet")
    assert code == 0
    assert not (tmp_path / "camp" / "shrink.yaml").exists()
    replay = [*args, "--cassette", camp, "--record-mode", "none", "--out", str(tmp_path / "b")]
    code, output = _cli("fuzz", *replay, "--quiet")
    assert code == 0, output
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["examples"] == {
        "chat/no-stream": 5
    }
