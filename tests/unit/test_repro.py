import json
import subprocess
from pathlib import Path

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation, Violation
from agentfuzz.output.findings.bundle import (
    Repro,
    _test_file,
    bundle_dir,
    observed_summary,
    write_bundle,
)

URL = "http://127.0.0.1:9/v1/chat/completions"


def _repro(signature: str = "empty", text: str = "") -> Repro:
    case = Case(history=History(items=(UserMessage(text='it\'s a "quoted" $HOME `x`'),)))
    body = {"model": "m", "messages": [{"role": "user", "content": case.history.items[0].text}]}
    obs = Observation(exchange=Exchange(url=URL, request=body, stream=False, status=200), text=text)
    violation = Violation("empty_turn", "no text and no tool call", "", signature)
    return Repro(URL, body, case, violation, observed_summary(obs), "3/3")


def test_bundle_holds_the_contract_keys(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, _repro())
    doc = json.loads((folder / "repro.json").read_text())
    assert {"url", "request", "oracle", "message", "observed", "reproduced"} <= doc.keys()
    assert doc["reproduced"] == "3/3"
    assert folder.name.startswith("empty_turn-")
    assert doc["request"] == _repro().request


def test_same_failure_same_folder_other_failure_other_folder(tmp_path: Path) -> None:
    assert bundle_dir(tmp_path, _repro().violation) == bundle_dir(tmp_path, _repro().violation)
    assert bundle_dir(tmp_path, _repro("a").violation) != bundle_dir(
        tmp_path, _repro("b").violation
    )


def test_repro_sh_sends_the_exact_body(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, _repro())
    script = (folder / "repro.sh").read_text()
    # Replace curl by a stub that prints what it would send, then compare with the request.
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "curl").write_text('#!/bin/sh\nfor a in "$@"; do echo "ARG $a"; done\ncat\n')
    (stub / "curl").chmod(0o755)
    out = subprocess.run(
        ["sh", str(folder / "repro.sh")],
        env={"PATH": f"{stub}:/usr/bin:/bin", "OPENAI_API_KEY": "sk-canary"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    body_line = next(line for line in out.splitlines() if not line.startswith("ARG "))
    assert json.loads(body_line) == _repro().request
    assert "ARG Authorization: Bearer sk-canary" in out
    assert "sk-canary" not in script


def test_a_bundles_test_file_keeps_to_the_line_limit() -> None:
    v = Violation(
        oracle="stream_divergence",
        message="streamed and non-streamed answers differ " * 10,
        signature="stream_divergence:shape",
    )
    text = _test_file(v)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert 'SIGNATURE = "stream_divergence:shape"' in text
    compile(text, "test_repro.py", "exec")


def _of_run(run: str) -> Repro:
    repro = _repro()
    return Repro(**{**repro.__dict__, "found_by": {"command": "agentfuzz fuzz", "run": run}})


def test_a_bundle_of_another_run_is_never_overwritten(tmp_path: Path) -> None:
    first = write_bundle(tmp_path, _of_run("run-a"))
    again = write_bundle(tmp_path, _of_run("run-a"))
    other = write_bundle(tmp_path, _of_run("run-b"))
    assert first == again, "a run rewrites its own bundle as shrinking improves it"
    assert other == first.with_name(first.name + "-2")
    assert json.loads((first / "repro.json").read_text())["found_by"]["run"] == "run-a"
    assert write_bundle(tmp_path, _of_run("run-b")) == other


def test_repro_sh_takes_base_url_and_model_from_the_environment(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, _repro())
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "curl").write_text('#!/bin/sh\nfor a in "$@"; do echo "ARG $a"; done\ncat\n')
    (stub / "curl").chmod(0o755)
    env = {"PATH": f"{stub}:/usr/bin:/bin", "BASE_URL": "http://h:1/v1", "MODEL": 'q"x'}
    done = subprocess.run(
        ["sh", str(folder / "repro.sh")], env=env, capture_output=True, text=True, check=True
    )
    assert "ARG http://h:1/v1/chat/completions" in done.stdout
    body = next(line for line in done.stdout.splitlines() if not line.startswith("ARG "))
    assert json.loads(body) == _repro().request | {"model": 'q"x'}
    assert "look for: an answer with no text and no tool call" in done.stderr


def test_report_md_explains_the_finding(tmp_path: Path) -> None:
    repro = _repro()
    target = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "version": "0.32.0"}
    full = Repro(**{**repro.__dict__, "target": target, "needs": ("call_without_result",)})
    report = (write_bundle(tmp_path, full) / "REPORT.md").read_text()
    assert report.startswith("# m: no text and no tool call")
    assert "`0.32.0`" in report and "Expected: A 2xx answer carries visible text" in report
    assert "it needs a call with no result" in report
    assert "sh empty_turn-" in report and "--agentfuzz-base-url" in report


def test_repro_sh_takes_a_base_url_with_a_trailing_slash(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, _repro())
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "curl").write_text('#!/bin/sh\nfor a in "$@"; do echo "ARG $a"; done\ncat\n')
    (stub / "curl").chmod(0o755)
    for given in ("http://h:1/v1/", "http://h:1/v1//"):
        env = {"PATH": f"{stub}:/usr/bin:/bin", "BASE_URL": given}
        done = subprocess.run(
            ["sh", str(folder / "repro.sh")], env=env, capture_output=True, text=True, check=True
        )
        assert "ARG http://h:1/v1/chat/completions" in done.stdout, done.stdout


def test_a_bundle_records_how_long_its_answer_took(tmp_path: Path) -> None:
    case = _repro().case
    exchange = Exchange(url=URL, request={}, stream=False, status=200, elapsed=1.23456)
    observed = observed_summary(Observation(exchange=exchange))
    assert observed["elapsed_s"] == 1.235
    repro = Repro(URL, {}, case, _repro().violation, observed, "1/1")
    doc = json.loads((write_bundle(tmp_path, repro) / "repro.json").read_text())
    assert doc["observed"]["elapsed_s"] == 1.235
