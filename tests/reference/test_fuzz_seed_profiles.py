"""`agentfuzz fuzz --serve PROFILE`: each seed bug is found and shrunk; each fix stays silent.

These run the real CLI against the embedded reference server, the way the README's first
command does, so they also prove `--serve` starts and stops the server by itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import Target
from agentfuzz.cli import cli
from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Item,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.oracles import check
from agentfuzz.reference import serve_in_thread

SEED = "3"


def _fuzz(tmp_path: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    out = tmp_path / "out"
    argv = ["fuzz", "--quiet", "--seed", SEED, "--out", str(out), *args]
    result = CliRunner().invoke(cli, argv)
    assert "Traceback" not in result.output, result.output
    # A symptom of one cause that another request shows keeps its bundle inside the finding's.
    bundles = [*out.glob("*/repro.json"), *out.glob("*/symptoms/*/repro.json")]
    docs = [json.loads(p.read_text()) for p in sorted(bundles)]
    return result.exit_code, docs


def _wire_items(request: dict[str, Any]) -> int:
    items = request.get("messages", request.get("input"))
    assert isinstance(items, list)
    return len(items)


# (profile, api, stream, oracle, largest acceptable shrunk request in wire items)
SEEDS = [
    ("vllm-kimi-k2", "responses", True, "empty_turn", 4),
    ("vllm-kimi-k2", "chat", True, "index_gap", None),
    ("vllm-kimi-k2-loose-fix", "chat", False, "empty_turn", 4),
    ("exo-kimi-k2", "chat", True, "error", 4),
    ("exo-kimi-k2", "chat", False, "error", 4),
    ("vllm-responses-regen", "responses", True, "identity", None),
    ("vllm-gpt-oss", "responses", True, "identity", None),
    ("no-tools-leak", "chat", False, "leaked_markup", 4),
]


@pytest.mark.parametrize(("profile", "api", "stream", "oracle", "most"), SEEDS)
def test_each_seed_bug_is_found_and_shrunk(
    tmp_path: Path, profile: str, api: str, stream: bool, oracle: str, most: int | None
) -> None:
    mode = ["--api", api, "--stream" if stream else "--no-stream"]
    code, docs = _fuzz(tmp_path, "--serve", profile, *mode, "--max-examples", "400")
    assert code == 1
    hits = [d for d in docs if d["oracle"] == oracle]
    assert hits, f"no {oracle} finding: {[d['oracle'] for d in docs]}"
    smallest = min(_wire_items(d["request"]) for d in hits)
    if most is not None:
        assert smallest <= most
    assert all(d["reproduced"].split("/")[0] != "0" for d in hits)


def test_seed_000_loose_fix_needs_a_near_native_id(tmp_path: Path) -> None:
    code, docs = _fuzz(
        tmp_path, "--serve", "vllm-kimi-k2-loose-fix", "--api", "chat", "--no-stream",
        "--max-examples", "400", "--oracles", "empty_turn",
    )  # fmt: skip
    assert code == 1
    (doc,) = docs
    ids = [c["id"] for m in doc["request"]["messages"] for c in m.get("tool_calls", [])]
    # Real native ids are renumbered by the (loose) fix; what survives looks native but is not.
    assert any(":" in i and not i.startswith("functions.") for i in ids), ids


FIXED = ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed", "vllm-gpt-oss-fixed"]
MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]


@pytest.mark.parametrize(("api", "stream"), MODES)
@pytest.mark.parametrize("profile", FIXED)
def test_fixed_profiles_stay_silent(tmp_path: Path, profile: str, api: str, stream: bool) -> None:
    mode = ["--api", api, "--stream" if stream else "--no-stream"]
    code, docs = _fuzz(tmp_path, "--serve", profile, *mode, "--max-examples", "1000")
    assert [d["oracle"] + ": " + d["message"] for d in docs] == []
    assert code == 0


def test_serve_prints_its_address(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "agentfuzz.cli", "serve", "fixed", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert line.startswith("listening on http://127.0.0.1:")
    assert int(line.rsplit(":", 1)[1]) > 0


def test_serve_unknown_profile_is_exit_2() -> None:
    result = CliRunner().invoke(cli, ["serve", "no-such-profile"])
    assert result.exit_code == 2
    assert "no-such-profile" in result.output


def _foreign_history(turns: int) -> History:
    items: list[Item] = []
    for n in range(turns):
        call_id = f"call_{n:016x}"
        items += [
            UserMessage(text="Use get_weather."),
            AssistantMessage(tool_calls=(ToolCall(id=call_id, name="get_weather"),)),
            ToolResult(call_id=call_id, output="17C"),
        ]
    items.append(UserMessage(text="Use get_weather again."))
    return History(tools=(Tool(name="get_weather"),), items=tuple(items))


def test_at_temperature_the_measured_empty_turn_rate_rises_with_turns() -> None:
    """The agentfuzz pipeline (dialect, assembly, oracles) sees seed 000's climb with turns."""
    for seed in (0, 1):
        rates = []
        with serve_in_thread("vllm-kimi-k2", temperature=0.7, seed=seed) as url:
            target = Target(url, "m", None, 10.0)
            for turns in (1, 3, 8):
                case = Case(history=_foreign_history(turns), api="responses", stream=True)
                hits = sum(
                    any(v.oracle == "empty_turn" for v in check(case, target.observe(case)))
                    for _ in range(30)
                )
                rates.append(hits / 30)
            target.close()
        assert 0 < rates[0] < rates[1] < rates[2], (seed, rates)
