"""`agentfuzz reduce`: a captured 40-turn session cut to seed 000's minimum, deterministically and
against a stochastic server; every input format accepted; bad input one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz import oracles
from agentfuzz.cli import cli
from agentfuzz.judge.session import run_session
from agentfuzz.model.history import Case, Tool
from agentfuzz.model.plan import Plan, Step
from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.reduce import reduce_input, write_reduction
from agentfuzz.wire.dialects import assemble, build_request, parse_text
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.live import LiveTransport

MODEL = "kimi-k2-reference"
TOOLS = (
    Tool(
        name="get_weather",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    ),
    Tool(name="search"),
)


def _capture(url: str, turns: int = 40) -> list[dict[str, Any]]:
    """A real agent session: the server's own streamed call_<hex16> ids fed back each turn."""
    plan = Plan(
        tools=TOOLS,
        steps=tuple(Step(ask=k % 2) for k in range(turns)),
        api="responses",
        stream=True,
    )
    target = Target(url, MODEL, None, 30.0)
    try:
        session = run_session(plan, target.observe, oracles.check)
    finally:
        target.close()
    return [turn.observation.exchange.request for turn in session]


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with serve_in_thread("vllm-kimi-k2") as url:
        bodies = _capture(url)
    path = tmp_path_factory.mktemp("capture") / "session.jsonl"
    path.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    return path


def _reduce(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["reduce", *argv], terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _bundle(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    (repro,) = out.glob("*/repro.json")
    return json.loads(repro.read_text()), json.loads(repro.with_name("reduction.json").read_text())


def test_a_captured_40_turn_session_reduces_to_seed_000s_minimum(
    session_file: Path, tmp_path: Path
) -> None:
    assert len(session_file.read_text().splitlines()) == 40
    code, output = _reduce(
        str(session_file), "--serve", "vllm-kimi-k2", "--out", str(tmp_path / "a")
    )
    assert code == 1, output
    assert "confirmed: empty_turn on request 40 of 40" in output
    assert "target calls" in output
    repro, reduction = _bundle(tmp_path / "a")
    # Four items at most, and one more to answer the call: a valid conversation (``validity``).
    assert repro["oracle"] == "empty_turn" and repro["size"] <= 5, repro["case"]
    assert repro["needs"] == [], repro["needs"]
    assert repro["reproduced"] == "10/10"
    # No campaign found this capture; the reduce step that cut it is how to run it again.
    assert repro["found_by"]["command"] is None
    assert repro["found_by"]["reduce"]["command"].startswith("agentfuzz reduce ")
    assert reduction["size"]["before"] > 40 and reduction["size"]["after"] <= 5
    assert reduction["target_calls"] == max(s["target_calls"] for s in reduction["steps"]) + 10
    assert {"repro.sh", "cassette.yaml", "test_repro.py"} <= {
        p.name for p in (tmp_path / "a").glob("*/*")
    }
    # Deterministic: the same input reduces to the same request.
    code, _ = _reduce(str(session_file), "--serve", "vllm-kimi-k2", "--out", str(tmp_path / "b"))
    assert _bundle(tmp_path / "b")[0]["request"] == repro["request"]
    # And the repro fires when re-sent.
    with serve_in_thread("vllm-kimi-k2") as url:
        case = Case.model_validate(repro["case"])
        with LiveTransport(url) as live:
            obs = assemble(live.send("/responses", repro["request"], True))
        assert any(v.oracle == "empty_turn" for v in oracles.check(case, obs))


def test_against_a_stochastic_server_auto_trials_reach_the_minimum_with_an_honest_rate(
    session_file: Path,
) -> None:
    cases = parse_text(session_file.read_text())
    reached, rates_ok = 0, 0
    for seed in range(10):
        with serve_in_thread("vllm-kimi-k2", temperature=0.5, seed=seed) as url:
            target = Target(url, MODEL, None, 30.0)
            try:
                reduction = reduce_input(target, cases, None, "auto")
                reduced = reduction.reduced
                fresh = sum(
                    bool(oracles.check(reduced, target.observe(reduced), only=["empty_turn"]))
                    for _ in range(50)
                )
            finally:
                target.close()
        hits, total = reduction.rate
        assert total >= 10
        reached += reduced.history.size <= 5  # seed 000's minimum, its call answered
        rates_ok += abs(hits / total - fresh / 50) <= 0.2
    assert reached >= 9
    assert rates_ok == 10


def _seed_000_case() -> Case:
    cases = parse_text(
        json.dumps(
            {
                "model": MODEL,
                "stream": True,
                "input": [
                    {"type": "message", "role": "user", "content": "Use get_weather."},
                    {
                        "type": "function_call",
                        "call_id": "call_4144fac2c5e1f3e0",
                        "name": "get_weather",
                        "arguments": "{}",
                    },
                    {
                        "type": "function_call_output",
                        "call_id": "call_4144fac2c5e1f3e0",
                        "output": "sunny",
                    },
                    {"type": "message", "role": "user", "content": "Use get_weather again."},
                ],
                "tools": [
                    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
                ],
            }
        )
    )
    return cases[0]


def _formats(tmp_path: Path) -> dict[str, str]:
    case = _seed_000_case()
    _, responses_body = build_request(case, MODEL)
    chat_case = case.model_copy(update={"api": "chat"})
    _, chat_body = build_request(chat_case, MODEL)
    repro = {"url": "http://x/v1/responses", "request": responses_body, "oracle": "empty_turn"}
    return {
        "repro.json": json.dumps(repro),
        "responses.json": json.dumps(responses_body),
        "chat.json": json.dumps(chat_body),
        "messages.json": json.dumps(chat_body["messages"]),
        "input.json": json.dumps(responses_body["input"]),
        "session.jsonl": json.dumps(chat_body) + "\n" + json.dumps(responses_body) + "\n",
    }


def test_every_input_format_is_accepted(tmp_path: Path) -> None:
    with serve_in_thread("vllm-kimi-k2") as url:
        for name, text in _formats(tmp_path).items():
            path = tmp_path / name
            path.write_text(text)
            out = tmp_path / f"out-{name}"
            code, output = _reduce(str(path), "--base-url", url, "--out", str(out))
            # Bare arrays carry no stream flag: on chat, seed 000 shows as an empty turn too.
            assert code == 1, (name, output)
            repro, _ = _bundle(out)
            assert repro["oracle"] == "empty_turn", name
            assert repro["size"] <= 5, name


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"model": "m", "messages": [', "not JSON"),
        ('{"hello": "world"}', "not a request body"),
        ("42", "not a request body"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(text)
    code, output = _reduce(str(path), "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
    assert code == 2
    (line,) = output.strip().splitlines()
    assert line.startswith(f"agentfuzz: {path}: ") and says in line, line


def test_a_missing_file_and_a_passing_input(tmp_path: Path) -> None:
    code, output = _reduce(str(tmp_path / "absent.json"), "--model", "m")
    assert code == 2 and "cannot read" in output and len(output.strip().splitlines()) == 1
    case = _seed_000_case()
    _, body = build_request(case, MODEL)
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(body))
    with serve_in_thread("vllm-kimi-k2-fixed") as url:
        code, output = _reduce(str(path), "--base-url", url, "--out", str(tmp_path / "o"))
    assert code == 0
    assert "nothing to reduce" in output


class _Recording(Target):
    """A target that keeps every request body it sends."""

    def __init__(self, url: str) -> None:
        super().__init__(url, MODEL, None, 30.0)
        self.bodies: list[dict[str, Any]] = []

    def observe(self, case: Case) -> Any:
        obs = super().observe(case)
        self.bodies.append(obs.exchange.request)
        return obs


def test_a_server_that_honours_seeds_gets_seed_0_and_temperature_0_on_every_request() -> None:
    with serve_in_thread("vllm-kimi-k2") as url:
        target = _Recording(url)
        try:
            reduction = reduce_input(target, [_seed_000_case()], honour_seed=True)
        finally:
            target.close()
    assert len(target.bodies) > 10
    # Responses takes no seed; temperature 0 goes everywhere, seed where the api has one.
    assert all(body.get("temperature") == 0.0 for body in target.bodies)
    assert reduction.reduced.options.seed == 0 and reduction.reduced.options.temperature == 0.0
    chat = reduction.reduced.model_copy(update={"api": "chat"})
    assert build_request(chat, MODEL)[1]["seed"] == 0


class _StoppedAfter(Target):
    """A target that gets a Ctrl-C on its ``calls``-th request, wherever the reduction is."""

    def __init__(self, url: str, calls: int) -> None:
        super().__init__(url, MODEL, None, 30.0)
        self.stop_at = calls

    def observe(self, case: Case) -> Any:
        if self.calls + 1 >= self.stop_at:
            raise KeyboardInterrupt
        return super().observe(case)


@pytest.mark.parametrize("stop_at", [4, 12, 30])
def test_a_reduction_stopped_midway_keeps_the_smallest_failure_so_far(
    session_file: Path, tmp_path: Path, stop_at: int
) -> None:
    cases = parse_text(session_file.read_text())
    with serve_in_thread("vllm-kimi-k2") as url:
        target = _StoppedAfter(url, stop_at)
        try:
            reduction = reduce_input(target, cases)
        finally:
            target.close()
    assert reduction.interrupted
    assert target.calls < stop_at
    assert reduction.reduced.history.size <= reduction.original.history.size
    # What is kept did fail: its own observation shows the violation it is reported for.
    assert reduction.violation.oracle in {
        v.oracle for v in oracles.check(reduction.reduced, reduction.observation)
    }
    folder = write_reduction(tmp_path / "out", reduction, str(session_file))
    assert json.loads((folder / "repro.json").read_text())["reproduced"] == "interrupted"


def test_reduce_never_overwrites_another_runs_bundle(session_file: Path, tmp_path: Path) -> None:
    # Defect: bundle folders were named by oracle and signature only, so `reduce --out X`
    # silently replaced a bundle another run had written there for the same failure.
    out = tmp_path / "shared"
    first = _reduce(str(session_file), "--serve", "vllm-kimi-k2", "--out", str(out))
    second = _reduce(str(session_file), "--serve", "vllm-kimi-k2", "--out", str(out))
    assert first[0] == second[0] == 1, second[1]
    folders = sorted(p.parent.name for p in out.glob("*/repro.json"))
    assert len(folders) == 2 and folders[1] == folders[0] + "-2", folders
    runs = {json.loads((out / f / "repro.json").read_text())["found_by"]["run"] for f in folders}
    assert len(runs) == 2
