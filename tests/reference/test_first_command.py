"""The README's first command, as a maintainer receives its output: one finding for seed 000's
one cause, a valid Responses conversation carrying the ``call_<hex>`` id the server minted, a
bundle that names its target, and a report a stranger to agentfuzz can act on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reduce.validity import flaws
from agentfuzz.reference import serve_in_thread
from agentfuzz.wire.dialects import parse_text

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    out = tmp_path_factory.mktemp("first") / "agentfuzz-out"
    # `agentfuzz fuzz` with nothing else but where to write (and no bar in a test's output).
    result = CliRunner().invoke(cli, ["fuzz", "--quiet", "--out", str(out)], terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output, out


def _only_bundle(out: Path) -> tuple[Path, dict[str, Any]]:
    """The one finding of seed 000's poisoned ids, and nothing beside it."""
    bundles = [p.parent for p in out.glob("*/repro.json")]
    assert [b.name[: len("empty_turn-")] for b in bundles] == ["empty_turn-"], bundles
    return bundles[0], json.loads((bundles[0] / "repro.json").read_text())


def test_it_prints_what_it_fuzzed_the_seed_and_the_next_steps(
    first_run: tuple[int, str, Path],
) -> None:
    code, output, out = first_run
    assert code == 1, output
    assert re.search(
        r"fuzzed http://127\.0\.0\.1:\d+/v1 \(reference profile vllm-kimi-k2\)", output
    )
    summary = json.loads((out / "summary.json").read_text())
    seed = summary["run"]["seed"]
    assert isinstance(seed, int) and f"seed {seed} (--seed {seed} repeats it)" in output
    bundle, _ = _only_bundle(out)
    # The output ends with the verdict: the finding, where it is, how to re-send it.
    assert output.splitlines()[-3:] == [
        f"report: {bundle / 'REPORT.md'}",
        f"re-send: sh {bundle / 'repro.sh'}",
        f"regression test: pytest {bundle}",
    ]
    assert "request surface coverage: " in output and "┃ dimension" not in output
    assert summary["run"]["target"]["reference_profile"] == "vllm-kimi-k2"
    assert summary["run"]["command"] == f"agentfuzz fuzz --quiet --out {out}"


def test_one_finding_lists_the_symptoms_of_its_one_cause(first_run: tuple[int, str, Path]) -> None:
    _, _, out = first_run
    _, doc = _only_bundle(out)
    assert doc["oracle"] == "empty_turn"
    signatures = [s["signature"] for s in doc["symptoms"]]
    assert signatures[0] == "empty_turn" and "tool_choice:required" in signatures
    assert all(s["seen_on"] for s in doc["symptoms"])
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["findings"]) == 1


def test_the_cause_is_named_the_ids_shape(first_run: tuple[int, str, Path]) -> None:
    """Written in the server's own shape (Kimi's functions.NAME:IDX, as it mints them on chat
    completions), the same ids stop the failure: the bundle says the trigger is their shape,
    and a symptom another request shows (a stream's index gap) keeps its repro inside it."""
    _, _, out = first_run
    bundle, doc = _only_bundle(out)
    cleared = doc["cleared_by"]
    assert cleared["shape"] == "kimi_native" and cleared["minted_on"].startswith("chat/")
    # Kimi numbers each call of the repro's own tool: ``functions.<its name>:<n>``.
    (name,) = {i["name"] for i in doc["request"]["input"] if i.get("type") == "function_call"}
    assert all(re.fullmatch(rf"functions\.{re.escape(name)}:\d+", i) for i in cleared["ids"])
    assert (
        "The trigger is the shape of the history's call ids" in (bundle / "REPORT.md").read_text()
    )
    for symptom in doc["symptoms"]:
        if symptom["repro"] is not None:
            inside = bundle / symptom["repro"]
            assert (
                json.loads((inside / "repro.json").read_text())["signature"] == symptom["signature"]
            )


def test_the_repro_is_a_valid_responses_conversation_with_the_minted_id(
    first_run: tuple[int, str, Path],
) -> None:
    _, _, out = first_run
    _, doc = _only_bundle(out)
    request = doc["request"]
    assert doc["api"] == "responses" and "input" in request
    (case,) = parse_text(json.dumps(request))
    assert flaws(case) == () and doc["needs"] == []
    ids = {c.id for c in case.history.calls}
    assert ids and all(re.fullmatch(r"call_[0-9a-f]{16}", i) for i in ids), ids
    assert doc["mechanism"]["minted_on"] == "responses/stream"
    assert set(doc["mechanism"]["ids"]) == ids
    assert doc["target"]["model"] == "kimi-k2-reference"
    assert doc["target"]["models"] == ["kimi-k2-reference"]


def test_report_md_reads_as_an_issue(first_run: tuple[int, str, Path]) -> None:
    _, _, out = first_run
    bundle, doc = _only_bundle(out)
    report = (bundle / "REPORT.md").read_text()
    assert report.startswith("# kimi-k2-reference: 2xx turn with no visible text")
    for heading in ("## Environment", "## Expected and observed", "## Minimal request"):
        assert heading in report
    assert "## Re-send it" in report and "## Regression test" in report
    assert "profile `vllm-kimi-k2`" in report
    assert "ids this server minted itself, in a responses/stream answer" in report
    assert "valid conversation by the API's rules" in report
    assert doc["mechanism"]["ids"][0] in report


@pytest.mark.parametrize(
    ("profile", "fires"), [("vllm-kimi-k2", True), ("vllm-kimi-k2-fixed", False)]
)
def test_repro_sh_says_whether_it_fired_on_the_server_it_is_given(
    first_run: tuple[int, str, Path], profile: str, fires: bool
) -> None:
    _, _, out = first_run
    bundle, _ = _only_bundle(out)
    with serve_in_thread(profile) as url:
        done = subprocess.run(
            ["sh", str(bundle / "repro.sh")],
            env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "BASE_URL": url},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert "look for: an answer with no text and no tool call" in done.stderr
    assert "response.completed" in done.stdout
    verdict = "FIRED: empty_turn" if fires else "not fired: empty_turn"
    assert verdict in done.stdout, done.stdout
