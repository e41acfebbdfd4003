"""`fuzz --record` writes every example and session as a cassette; replay gives the same verdicts;
a bundle's test_repro.py, and a folder of bundles collected by the plugin, pass offline, fail live
against the bug and pass once it is fixed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread


def _run(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(argv), terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def test_record_then_replay_with_the_server_gone(tmp_path: Path) -> None:
    record, out = tmp_path / "rec", tmp_path / "out"
    args = ["--api", "responses", "--stream", "--max-examples", "15", "--seed", "3"]
    code, _ = _run("fuzz", "--mode", "both", *args, "--record", str(record), "--out", str(out))
    assert code == 1
    files = sorted(record.glob("*.yaml"))
    kinds = {p.name.split("-", 1)[0] for p in files}
    assert kinds == {"synthetic", "session"}
    # The embedded server stopped with the run: replay needs none.
    code, output = _run("replay", str(record))
    assert code == 1
    assert f"{len(files)} cassette(s): " in output
    assert "empty_turn" in output
    assert "[recorded:" not in output  # every replayed verdict is the recorded one
    code, whole = _run("replay", "--whole", str(record))
    assert code == 1 and "[recorded:" not in whole


def _pytest(test_file: Path, env: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file), *more],
        cwd=test_file.parent,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_bundles_test_file_documents_the_bug_and_becomes_its_regression_test(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    mode = ["--api", "responses", "--stream", "--max-examples", "30", "--seed", "1"]
    with serve_in_thread("vllm-kimi-k2") as buggy, serve_in_thread("vllm-kimi-k2-fixed") as fixed:
        code, _ = _run("fuzz", "--base-url", buggy, *mode, "--out", str(out), "--quiet")
        assert code == 1
        (bundle,) = out.glob("empty_turn-*")
        test_file = bundle / "test_repro.py"
        assert {"repro.json", "repro.sh", "cassette.yaml", "test_repro.py"} <= {
            p.name for p in bundle.iterdir()
        }
        assert "offline" in test_file.read_text() and "live" in test_file.read_text()
        clean = {k: "" for k in ("AGENTFUZZ_BASE_URL",)}
        offline = _pytest(test_file, clean)
        assert offline.returncode == 0, offline.stdout
        against_bug = _pytest(test_file, {"AGENTFUZZ_BASE_URL": buggy})
        assert against_bug.returncode == 1
        assert "empty_turn still fires" in against_bug.stdout
        against_fix = _pytest(test_file, {"AGENTFUZZ_BASE_URL": fixed})
        assert against_fix.returncode == 0, against_fix.stdout
        # The whole output folder: each bundle one item (its repro.json), no test_repro.py twice;
        # a symptom's own bundle inside a finding's (``symptoms/``) is one item too.
        found = [*out.glob("*/repro.json"), *out.glob("*/symptoms/*/repro.json")]
        bundles = sorted(p.parent.name for p in found)
        folder = _pytest(out, clean, "-vv")
        assert folder.returncode == 0, folder.stdout
        assert f"{len(bundles)} passed" in folder.stdout and "test_repro.py" not in folder.stdout
        assert all(f"repro.json::bundle {name} PASSED" in folder.stdout for name in bundles)
        live = _pytest(out, {"AGENTFUZZ_BASE_URL": buggy}, "-k", bundle.name)
        assert live.returncode == 1 and "empty_turn still fires" in live.stdout
        fixed_now = _pytest(out, {"AGENTFUZZ_BASE_URL": fixed}, "-k", bundle.name)
        assert fixed_now.returncode == 0, fixed_now.stdout
