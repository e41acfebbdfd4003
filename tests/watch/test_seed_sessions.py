"""``fuzz --seed-sessions``: captured real sessions seed synthetic mode. A fault that only a long
session fed the server's own ids reaches is found at once from a captured session, and not in
hundreds of examples without one; mutations shrink back toward what was captured."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, find, settings

from agentfuzz.cli import cli
from agentfuzz.model.history import Case
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.reduce import captured_folder
from agentfuzz.strategies import seeded

from .conftest import proxied

agent_clients = pytest.importorskip("agent_clients")


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seven-ask chat session of the plain openai SDK loop, recorded by the proxy in front
    of a healthy server (``fixed``): seven calls under the server's own ids."""
    rec = tmp_path_factory.mktemp("captured")
    asks = [f"Use {('get_weather', 'get_time')[i % 2]} for city {i}." for i in range(7)]
    with proxied("fixed", rec / "bundles", rec / "sessions") as (url, watch):
        did = agent_clients.sdk_loop(url, "chat", False, asks=asks)
    assert did.error is None and len(did.tools) == 7 and watch.caught == []
    return rec / "sessions"


def _fuzz(out: Path, *args: str) -> tuple[int, dict[str, object]]:
    base = ["fuzz", "--serve", "long-session-500", "--api", "chat", "--no-stream", "--quiet"]
    result = CliRunner().invoke(cli, [*base, "--seed", "3", "--out", str(out), *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads((out / "summary.json").read_text())


def test_a_captured_session_reaches_a_long_session_fault_random_generation_misses(
    tmp_path: Path, captured: Path
) -> None:
    code, done = _fuzz(
        tmp_path / "seeded",
        "--seed-sessions",
        str(captured),
        "--max-examples",
        "20",
        "--max-failures",
        "1",
    )
    assert code == 1
    examples = done["examples"]
    assert isinstance(examples, dict) and examples["chat/no-stream"] <= 5
    [bundle] = (tmp_path / "seeded").glob("error-*")
    request = json.loads((bundle / "repro.json").read_text())["request"]
    ids = [c["id"] for m in request["messages"] for c in m.get("tool_calls") or []]
    assert len(ids) >= 6 and all(re.fullmatch(r"functions\.get_\w+:\d", i) for i in ids)
    # The same budget fifteen times over, from scratch: never.
    code, done = _fuzz(tmp_path / "random", "--max-examples", "300")
    assert code == 0 and done["findings"] == []


def test_mutations_shrink_back_toward_the_captured_request(captured: Path) -> None:
    seeds = tuple(captured_folder(captured))
    assert len(seeds) == 14  # every request of the session
    strategy = seeded(seeds, load_profile("default"), "chat", False)
    quick = settings(database=None, max_examples=500, suppress_health_check=list(HealthCheck))
    longest = max(seeds, key=lambda s: s.history.size)
    simplest = find(strategy, lambda _: True, settings=quick)
    assert simplest.history == longest.history and simplest.options == longest.options

    def sanitized(case: Case) -> bool:
        return any("_get_" in c.id and ":" not in c.id for c in case.history.calls)

    one = find(strategy, sanitized, settings=quick)
    # Only the ids changed: the mutation shrank back to the captured request around it.
    assert len(one.history.calls) == len(longest.history.calls)
    assert [c.name for c in one.history.calls] == [c.name for c in longest.history.calls]
    assert one.options == longest.options


def test_unusable_seed_folders_are_one_line_and_exit_2(tmp_path: Path, captured: Path) -> None:
    runner = CliRunner()
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text('{"not": "a request"}')
    cases = [
        (["--seed-sessions", str(tmp_path / "missing")], "not a folder"),
        (["--seed-sessions", str(tmp_path / "empty")], "holds no captured request"),
        (["--seed-sessions", str(tmp_path / "bad")], "x.json: not a request body"),
        (["--seed-sessions", str(captured), "--mode", "session"], "seeds synthetic mode"),
    ]
    for args, message in cases:
        result = runner.invoke(cli, ["fuzz", "--serve", "fixed", "--max-examples", "1", *args])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
