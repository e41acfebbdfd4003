"""Cassettes as pytest items: offline replay against the recorded verdicts, live re-sending."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

# The failure text a test reads back: pytester's reports keep the item's repr_failure.


def _failures(reprec: pytest.HookRecorder) -> dict[str, str]:
    return {r.nodeid.rsplit("::", 1)[-1]: str(r.longrepr) for r in reprec.getfailures()}


def _edit(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _meta(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))["metadata"]
    return found["agentfuzz"]


def test_offline_items_pass_with_their_recorded_bugs(
    pytester: pytest.Pytester, project: Path
) -> None:
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "config.yaml").write_text("not: a cassette\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["cassettes/bug.yaml::bug.yaml PASSED*", "cassettes/clean.yaml::clean.yaml PASSED*"]
    )
    assert "config.yaml" not in result.stdout.str()


def test_the_cassette_folder_is_an_option(pytester: pytest.Pytester, project: Path) -> None:
    project.rename(pytester.path / "recorded")
    assert pytester.runpytest().ret == pytest.ExitCode.NO_TESTS_COLLECTED
    pytester.runpytest("--agentfuzz-cassettes", "recorded").assert_outcomes(passed=2)
    pytester.makeini("[pytest]\nagentfuzz_cassettes = recorded\n")
    pytester.runpytest().assert_outcomes(passed=2)


def test_changed_verdicts_fail_with_a_readable_message(
    pytester: pytest.Pytester, project: Path
) -> None:
    def forget_the_bug(data: dict[str, Any]) -> None:
        data["metadata"]["agentfuzz"]["turns"][1]["verdicts"] = []

    _edit(project / "bug.yaml", forget_the_bug)
    reprec = pytester.inline_run()
    reprec.assertoutcome(passed=1, failed=1)
    message = _failures(reprec)["bug.yaml"]
    lines = message.splitlines()
    assert lines[0].startswith("bug.yaml: 1 of 2 turn(s) no longer give the verdicts")
    assert lines[1] == "  turn 2 POST /v1/responses"
    assert lines[2] == "    recorded: ok"
    assert lines[3].startswith("    now:      empty_turn: ")
    assert "Traceback" not in message and "runtest" not in message


def test_an_unreadable_cassette_fails_with_one_line(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "broken.yml").write_text("interactions: [\n  - {request: \n")
    reprec = pytester.inline_run()
    reprec.assertoutcome(passed=2, failed=1)
    message = _failures(reprec)["broken.yml"].strip()
    assert "\n" not in message
    assert message.endswith("broken.yml: not valid YAML: " + message.split("YAML: ", 1)[1])


def test_live_fixed_server_passes(pytester: pytest.Pytester, project: Path, fixed_url: str) -> None:
    before = (project / "bug.yaml").read_bytes()
    pytester.runpytest("--agentfuzz-base-url", fixed_url).assert_outcomes(passed=2)
    # Record mode none (the default) never writes.
    assert (project / "bug.yaml").read_bytes() == before


def test_live_buggy_server_fails_the_cassette_that_recorded_its_bug(
    pytester: pytest.Pytester, project: Path, kimi_url: str
) -> None:
    reprec = pytester.inline_run("--agentfuzz-base-url", kimi_url, "--agentfuzz-record-mode=once")
    reprec.assertoutcome(passed=1, failed=1)
    lines = _failures(reprec)["bug.yaml"].splitlines()
    assert lines[0].startswith("bug.yaml: ") and lines[0].endswith(f"fire against {kimi_url}")
    assert any(line.startswith("  turn 2 POST /responses: empty_turn: ") for line in lines)
    assert not any("turn 1" in line for line in lines)


def test_record_mode_all_rewrites_the_cassette_with_the_live_exchanges(
    pytester: pytest.Pytester, project: Path, fixed_url: str
) -> None:
    bug = project / "bug.yaml"
    assert _meta(bug)["turns"][1]["verdicts"]
    result = pytester.runpytest(
        f"--agentfuzz-base-url={fixed_url}",
        "--agentfuzz-model=renamed-model",
        "--agentfuzz-record-mode=all",
    )
    result.assert_outcomes(passed=2)
    about = _meta(bug)
    assert about["target"] == fixed_url and about["model"] == "renamed-model"
    assert [turn["verdicts"] for turn in about["turns"]] == [[], []]
    bodies = [i["request"]["body"] for i in yaml.safe_load(bug.read_text())["interactions"]]
    assert all('"model": "renamed-model"' in body for body in bodies)
    assert sorted(p.name for p in project.iterdir()) == ["bug.yaml", "clean.yaml"]
    # Offline, the rewritten cassette now documents a server without the bug.
    pytester.runpytest().assert_outcomes(passed=2)


def test_record_modes_that_write_need_a_live_server(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest("--agentfuzz-record-mode=new_episodes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--agentfuzz-record-mode new_episodes needs --agentfuzz-base-url*"]
    )


def test_items_run_under_xdist(pytester: pytest.Pytester, project: Path) -> None:
    def claim_an_error(data: dict[str, Any]) -> None:
        verdict = {"oracle": "error", "signature": "error:x", "message": "was broken"}
        data["metadata"]["agentfuzz"]["turns"][0]["verdicts"] = [verdict]

    _edit(project / "clean.yaml", claim_an_error)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*recorded: error: was broken*", "*now:      ok*"])
