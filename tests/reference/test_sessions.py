"""Session mode against the reference server: the seed bugs arise from the server's own output.

No id here is written by the fuzzer: every call id a session sends back first appeared in one
of the server's answers earlier in the same session (the transcript in ``session.json`` shows
it), so these tests reproduce seeds 000 and 001 the way their reporters met them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import FuzzConfig, oracles, run
from agentfuzz.cli import cli
from agentfuzz.model.history import Case
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.wire.dialects import assemble
from agentfuzz.wire.transport.live import LiveTransport

SEED = "7"
_CALL_HEX16 = re.compile(r"call_[0-9a-f]{16}")


def _profile(tmp_path: Path, *policies: str) -> Path:
    path = tmp_path / "session.toml"
    listed = ", ".join(f'"{p}"' for p in policies)
    path.write_text(f"session_policies = [{listed}]\nswitch_modes = false\n")
    return path


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    with serve_in_thread(request.param) as url:
        yield url


def _fuzz(url: str, out: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    argv = ["fuzz", "--base-url", url, "--quiet", "--seed", SEED, "--out", str(out), *args]
    result = CliRunner().invoke(cli, argv)
    assert "Traceback" not in result.output, result.output
    docs = []
    for path in sorted(out.glob("*/repro.json")):
        doc = json.loads(path.read_text())
        session = path.with_name("session.json")
        doc["turns"] = json.loads(session.read_text())["turns"] if session.exists() else None
        docs.append(doc)
    return result.exit_code, docs


def _call_ids(request: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for item in request.get("input", []):
        if item.get("type") in ("function_call", "function_call_output"):
            ids.append(item["call_id"])
    for msg in request.get("messages", []):
        ids.extend(call["id"] for call in msg.get("tool_calls") or [])
        if msg.get("role") == "tool":
            ids.append(msg["tool_call_id"])
    return ids


def _answer_text(turn: dict[str, Any]) -> str:
    answer = turn["response"]
    return answer.get("body") or "\n".join(e["data"] for e in answer.get("events") or [])


def _assert_no_injected_ids(turns: list[dict[str, Any]]) -> None:
    """Every id a request carries appeared, verbatim or rewritten by the policy, in an answer
    of an earlier turn; under passthrough, verbatim."""
    for k, turn in enumerate(turns):
        earlier = "".join(_answer_text(t) for t in turns[:k])
        for call_id in _call_ids(turn["request"]):
            assert json.dumps(call_id)[1:-1] in earlier, (turn["turn"], call_id)


def _refires(doc: dict[str, Any]) -> bool:
    case = Case.model_validate(doc["case"])
    base, path = doc["url"].rsplit("/v1", 1)
    with LiveTransport(base + "/v1") as transport:
        obs = assemble(transport.send(path, doc["request"], case.stream))
    return any(v.oracle == doc["oracle"] for v in oracles.check(case, obs))


@pytest.mark.parametrize("served", ["vllm-kimi-k2"], indirect=True)
def test_seed_000_the_servers_own_call_hex_poisons_a_later_turn(
    served: str, tmp_path: Path
) -> None:
    profile = str(_profile(tmp_path, "passthrough"))
    mode = ["--api", "responses", "--stream", "--max-examples", "60"]
    code, docs = _fuzz(served, tmp_path / "s", "--mode", "session", "--profile", profile, *mode)
    assert code == 1
    found = [d for d in docs if d["oracle"] == "empty_turn"]
    assert found, [d["oracle"] for d in docs]
    turns = found[0]["turns"]
    assert turns and all(t["untouched"] for t in turns)
    _assert_no_injected_ids(turns)
    # The id that poisons the last turn was minted by the server in an earlier one.
    minted = set(_CALL_HEX16.findall("".join(_answer_text(t) for t in turns[:-1])))
    assert minted & set(_call_ids(turns[-1]["request"]))
    last = [v["oracle"] for v in turns[-1]["violations"]]
    # Where the turn also forced a call (a tool_choice form), its empty answer breaks that too.
    assert "empty_turn" in last and set(last) <= {"empty_turn", "tool_choice"}
    assert all(not t["violations"] for t in turns[:-1])
    assert _refires(found[0])

    # Against the synthetic minimum for the same bug, the session's repro is no larger, but for
    # one turn: both are valid conversations (every call answered), and where the synthetic one
    # may force the call with tool_choice, a session's turn asks for it in a user message.
    code, synthetic = _fuzz(served, tmp_path / "y", "--max-examples", "200", *mode)
    smallest = min(d["size"] for d in synthetic if d["oracle"] == "empty_turn")
    assert found[0]["needs"] == [] and found[0]["size"] <= smallest + 1


@pytest.mark.parametrize("served", ["exo-kimi-k2"], indirect=True)
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_seed_001_sanitized_native_ids_make_the_parser_raise(
    served: str, tmp_path: Path, stream: str
) -> None:
    profile = str(_profile(tmp_path, "sanitize"))
    mode = ["--api", "chat", stream, "--max-examples", "60"]
    code, docs = _fuzz(served, tmp_path / "s", "--mode", "session", "--profile", profile, *mode)
    assert code == 1
    found = [d for d in docs if d["oracle"] == "error"]
    assert found, [d["oracle"] for d in docs]
    turns = found[0]["turns"]
    assert turns[0]["violations"] == []  # the first call of a session succeeds
    # The server answered native ids; the client sent them back sanitized.
    answers = "".join(_answer_text(t) for t in turns[:-1])
    assert re.search(r"functions\.[\w.-]+:\d+", answers)
    sent = _call_ids(turns[-1]["request"])
    assert sent and all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in sent)
    assert {v["oracle"] for v in turns[-1]["violations"]} >= {"error"}
    assert all(_refires(d) for d in found)

    code, synthetic = _fuzz(served, tmp_path / "y", "--max-examples", "200", *mode)
    smallest = min(d["size"] for d in synthetic if d["oracle"] == "error")
    assert min(d["size"] for d in found) <= smallest


@pytest.mark.parametrize("profile", ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed"])
def test_fixed_profiles_stay_clean_over_400_sessions(tmp_path: Path, profile: str) -> None:
    with serve_in_thread(profile) as url:
        config = FuzzConfig(
            base_url=url,
            model="kimi-k2-reference",
            profile=load_profile("default"),
            out=tmp_path / "out",
            kinds=("session",),
            max_examples=100,
            seed=5,
        )
        report = run(config)
    assert [f.violation.message for f in report.findings] == []
    assert report.turns[1][0] >= 400
    # Every session reached turn 1 once, a refused turn sent again without its fields included.
    assert report.turns[1][0] == sum(report.examples.values())
    assert max(report.turns) == 8


def _rates(report_turns: dict[int, tuple[int, int]], numbers: range) -> float:
    reached = sum(report_turns.get(n, (0, 0))[0] for n in numbers)
    failed = sum(report_turns.get(n, (0, 0))[1] for n in numbers)
    return failed / reached


def test_failure_rate_climbs_with_turn_number_at_temperature(tmp_path: Path) -> None:
    table: dict[int, tuple[int, int]] = {}
    for seed in (0, 1):
        with serve_in_thread("vllm-kimi-k2", temperature=0.7, seed=seed) as url:
            config = FuzzConfig(
                base_url=url,
                model="kimi-k2-reference",
                profile=load_profile(str(_profile(tmp_path, "passthrough"))),
                out=tmp_path / f"out{seed}",
                modes=(("responses", True),),
                kinds=("session",),
                max_examples=150,
                seed=seed,
                database=None,
            )
            report = run(config)
        for n, (reached, failed) in report.turns.items():
            before = table.get(n, (0, 0))
            table[n] = (before[0] + reached, before[1] + failed)
    # Turn 1 carries no id of the server's yet; later turns carry more and more of them.
    assert table[1][1] == 0
    early, late = _rates(table, range(1, 5)), _rates(table, range(5, 9))
    assert late > 2 * early, (early, late, table)


def test_mode_both_runs_histories_and_sessions_and_prints_the_turn_table(tmp_path: Path) -> None:
    argv = ["fuzz", "--mode", "both", "--api", "responses", "--stream", "--max-examples", "20"]
    argv += ["--seed", SEED, "--out", str(tmp_path / "out"), "--quiet"]
    result = CliRunner().invoke(cli, argv, terminal_width=200)
    assert result.exit_code == 1, result.output
    assert "examples: responses/stream " in result.output
    assert "session responses/stream " in result.output
    assert "session turns" in result.output and "failed there" in result.output
    # Both kinds of example met the seed bug; one bundle holds both views of it.
    bundles = list((tmp_path / "out").glob("empty_turn-*"))
    assert len(bundles) == 1
    assert (bundles[0] / "session.json").exists()
