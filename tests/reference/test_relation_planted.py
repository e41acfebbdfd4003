"""The ``relation`` oracle against the reference server's planted misreadings: each caught and
shrunk to its known minimum, as a pair whose bundle sends both requests; ``fixed`` silent with
every relation on, in every mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.request.relations import RELATIONS


def _profile(tmp_path: Path, *relations: str) -> Path:
    path = tmp_path / "pairs.toml"
    path.write_text(f"name = 'pairs'\nrelations = {json.dumps(list(relations))}\n")
    return path


def _fuzz(out: Path, serve: str, profile: Path, *args: str, seed: int = 3) -> list[dict[str, Any]]:
    command = ["fuzz", "--serve", serve, "--profile", str(profile), "--seed", str(seed)]
    command += ["--out", str(out), "--quiet", "--oracles", "relation", *args]
    result = CliRunner().invoke(cli, command, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == (0 if serve in ("fixed", "stored") else 1), result.output
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


def _items(request: dict[str, Any]) -> int:
    items = request.get("messages", request.get("input"))
    return 1 if isinstance(items, str) else len(items)


# (profile, relation, api, items, tools, seed): the known minimum of each planted fault, and a
# seed that reaches it in 100 examples (required-one-call needs a user message naming two tools).
PLANTED = [
    ("tools-unrendered", "tools", "chat", 1, 1, 3),
    ("system-dropped", "system", "responses", 1, 0, 3),
    ("results-cut", "tool_result", "chat", 3, 1, 2),
    ("parts-as-json", "text_part", "chat", 1, 0, 3),
    ("special-tokens-read", "special_token", "responses", 1, 0, 3),
    ("omitted-choice-none", "choice_auto", "chat", 1, 1, 3),
    ("required-one-call", "required_calls", "chat", 1, 2, 4),
]


@pytest.mark.parametrize(("serve", "relation", "api", "items", "tools", "seed"), PLANTED)
def test_a_planted_misreading_is_found_and_shrunk_as_a_pair(
    tmp_path: Path, serve: str, relation: str, api: str, items: int, tools: int, seed: int
) -> None:
    profile = _profile(tmp_path, relation)
    args = ("--api", api, "--no-stream", "--max-examples", "100")
    found = _fuzz(tmp_path / "out", serve, profile, *args, seed=seed)
    (hit,) = found
    assert hit["signature"] == f"relation:{relation}" and hit["reproduced"] == "10/10"
    request = hit["request"]
    assert (_items(request), len(request.get("tools") or [])) == (items, tools), request
    # The bundle holds the pair: the partner the relation derives, sent right after.
    (related,) = hit["related"]
    assert related["relation"] == relation and related["request"] != request
    assert hit["case"]["relation"] == relation


def test_a_pair_bundle_replays_both_offline_and_its_script_sends_both(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (hit,) = _fuzz(
        out, "system-dropped", _profile(tmp_path, "system"), "--api", "chat", "--no-stream",
        "--max-examples", "60",
    )  # fmt: skip
    (bundle,) = (p.parent for p in out.glob("*/repro.json"))
    script = (bundle / "repro.sh").read_text()
    assert script.count("curl -sS") == 2 and "related to it (system)" in script
    report = (bundle / "REPORT.md").read_text()
    assert "the related request (relation `system`)" in report
    offline = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_repro.py"],
        cwd=bundle,
        env={**os.environ, "AGENTFUZZ_BASE_URL": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert offline.returncode == 0, offline.stdout
    assert hit["related"][0]["request"]["messages"][0]["role"] == "system"


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_fixed_profile_keeps_every_relation(tmp_path: Path, api: str, stream: bool) -> None:
    profile = _profile(tmp_path, *RELATIONS)
    mode = ["--api", api, "--stream" if stream else "--no-stream", "--max-examples", "150"]
    assert _fuzz(tmp_path / "out", "fixed", profile, *mode) == []


def test_a_session_pairs_its_turns_and_finds_a_planted_misreading(tmp_path: Path) -> None:
    found = _fuzz(
        tmp_path / "out", "system-dropped", _profile(tmp_path, "system"), "--mode", "session",
        "--api", "chat", "--no-stream", "--max-examples", "40",
    )  # fmt: skip
    assert {f["signature"] for f in found} == {"relation:system"}
    assert all(f["related"] for f in found)


def test_pairs_run_with_several_workers(tmp_path: Path) -> None:
    found = _fuzz(
        tmp_path / "out", "parts-as-json", _profile(tmp_path, "text_part"), "--workers", "2",
        "--api", "chat", "--no-stream", "--max-examples", "60",
    )  # fmt: skip
    assert [f["signature"] for f in found] == ["relation:text_part"]
    assert _items(found[0]["request"]) == 1


def test_reduce_takes_a_pair_from_its_bundle_and_keeps_it_a_pair(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _fuzz(
        out, "system-dropped", _profile(tmp_path, "system"), "--api", "chat", "--no-stream",
        "--max-examples", "60",
    )  # fmt: skip
    (given,) = out.glob("*/repro.json")
    again = tmp_path / "again"
    result = CliRunner().invoke(
        cli,
        ["reduce", str(given), "--serve", "system-dropped", "--out", str(again)],
        terminal_width=200,
    )
    assert result.exit_code == 1, result.output
    (reduced,) = (json.loads(p.read_text()) for p in again.glob("*/repro.json"))
    assert reduced["signature"] == "relation:system"
    assert [r["relation"] for r in reduced["related"]] == ["system"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_store_that_forgets_its_answers_is_found_by_the_chain_relation(
    tmp_path: Path, stream: bool
) -> None:
    """``stored-forgets`` keeps a stored answer's input, not its output: a turn chained onto it
    costs fewer prompt tokens than the same conversation sent whole."""
    found = _fuzz(
        tmp_path / "out", "stored-forgets", _profile(tmp_path, "chain"), "--mode", "session",
        "--api", "responses", "--stream" if stream else "--no-stream", "--max-examples", "60",
    )  # fmt: skip
    (hit,) = found
    assert hit["signature"] == "relation:chain" and hit["reproduced"] == "10/10"
    request = hit["request"]
    (related,) = hit["related"]
    # The pair: the chained turn, then its conversation whole, with no previous_response_id.
    assert request["previous_response_id"].startswith("resp_")
    assert "previous_response_id" not in related["request"]
    assert len(related["request"]["input"]) > len(request["input"])
    assert related["request"]["input"][-len(request["input"]) :] == request["input"]
    (folder,) = (p.parent for p in (tmp_path / "out").glob("relation-*/repro.json"))
    # The session that made the stored answer comes with it.
    assert (folder / "session.json").is_file()


@pytest.mark.parametrize("stream", [False, True])
def test_a_faithful_store_keeps_the_chain_relation_silent(tmp_path: Path, stream: bool) -> None:
    # Every client policy of the default profile, so answers the client changed come back
    # chained too: those are not paired.
    out = tmp_path / "out"
    found = _fuzz(
        out, "stored", _profile(tmp_path, "chain"), "--mode", "session", "--api", "responses",
        "--stream" if stream else "--no-stream", "--max-examples", "150",
    )  # fmt: skip
    assert found == []
    coverage = json.loads((out / "summary.json").read_text())["coverage"]
    assert coverage["relation:chain"]["ok"] >= 20, coverage["relation:chain"]
