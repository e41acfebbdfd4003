"""Middleman mode through a faithful proxy: silent everywhere, recorded and replayed with the
backend's requests; and the flag combinations middleman mode refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.tape.replay import replay_bundle, replay_cassette

from .conftest import fuzz_through


def test_faithful_proxy_is_silent_and_recorded(tmp_path: Path) -> None:
    record = tmp_path / "tapes"
    run = fuzz_through(
        "faithful", tmp_path / "out", "--mode", "both", "--max-examples", "12",
        "--record", str(record),
    )  # fmt: skip
    assert run.code == 0, run.output
    assert run.signatures == set()
    tapes = sorted(record.glob("*.yaml"))
    # Both apis, streaming and not, synthetic and session: eight kinds of cassette.
    kinds = {p.name.rsplit("-", 1)[0] for p in tapes}
    assert len(kinds) == 8, kinds
    for path in tapes[:: max(1, len(tapes) // 12)]:
        turns = yaml.safe_load(path.read_text())["metadata"]["agentfuzz"]["turns"]
        # Every client request reached the backend once, and replays as clean as it ran.
        assert all(len(turn["backend"]) == 1 for turn in turns), path
        replay = replay_cassette(path)
        assert replay.same and not replay.failed
        assert all(t.observation.backend for t in replay.turns)


def test_a_finding_replays_offline_from_its_bundle(tmp_path: Path) -> None:
    run = fuzz_through(
        "drop_result", tmp_path / "out", "--api", "chat", "--no-stream",
        "--max-examples", "20", "--oracles", "proxy_fidelity",
    )  # fmt: skip
    assert run.code == 1
    (bundle,) = [p.parent for p in run.out.glob("*/repro.json")]
    found = replay_bundle(bundle)
    assert [v.signature for v in found] == ["proxy_fidelity:result_lost"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "fixed"], "--backend needs --base-url"),
        (["--backend", "fixed", "--serve", "fixed"], "not with --serve"),
        (["--backend-port", "8001"], "--backend-port needs --backend"),
        (
            ["--backend", "fixed", "--base-url", "http://127.0.0.1:9/v1", "--workers", "2"],
            "runs with --workers 1",
        ),
        (
            ["--backend", "fixed", "--base-url", "http://127.0.0.1:9/v1", "--cassette", "c"],
            "cannot run through --cassette",
        ),
        (["--backend", "nope", "--base-url", "http://127.0.0.1:9/v1"], "--backend nope"),
    ],
)
def test_proxy_mode_usage_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["fuzz", "--quiet", "--model", "m", *args])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output


def test_the_backend_says_where_it_listens() -> None:
    result = CliRunner().invoke(
        cli, ["fuzz", "--backend", "fixed", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    )
    # Printed before the run, so a proxy can be pointed at it; the proxy here is not there.
    assert result.output.startswith("backend listening on http://127.0.0.1:")
    assert result.exit_code == 3
