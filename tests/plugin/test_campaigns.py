"""``agentfuzz_campaign``: a seeded campaign per test item, recorded live once, replayed offline.

A project with a two-shard campaign test is recorded once per module (live, against the
reference server, ``--agentfuzz-record-mode once``), in a pytest subprocess; the server is
stopped before any test replays it, so a replay that reached for it would fail. Each test
copies the recorded project into its own ``pytester`` folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentfuzz.reference import serve_in_thread

# At the rootdir, so its cassettes land under the plugin's default cassette folder: they must
# not become cassette items of their own.
SHARDS = """
import json

import pytest

# Seeds whose first three examples already meet the seed bug: a short campaign that shrinks.
SEEDS = (6, 3)


@pytest.mark.parametrize("shard", [0, 1])
def test_shard(agentfuzz_campaign, shard):
    report = agentfuzz_campaign(seed=SEEDS[shard], max_examples=3)
    assert report.findings, "the reference server's seed bug should show"
    for finding in report.findings:
        found_by = json.loads((finding.bundle / "repro.json").read_text())["found_by"]
        assert found_by["command"] == f"pytest 'test_shards.py::test_shard[{shard}]'"
        assert found_by["seed"] == SEEDS[shard]
"""
FOLDERS = Path("cassettes") / "test_shards"


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A project whose two shards were recorded live; and that run's output."""
    project = tmp_path_factory.mktemp("campaign-project")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_shards.py").write_text(SHARDS)
    with serve_in_thread("vllm-kimi-k2") as url:
        done = _pytest(project, "--agentfuzz-base-url", url, "--agentfuzz-record-mode", "once")
    return project, done.stdout + done.stderr


@pytest.fixture
def project(pytester: pytest.Pytester, recorded: tuple[Path, str]) -> Path:
    shutil.copytree(recorded[0], pytester.path, dirs_exist_ok=True)
    return pytester.path


def _seeds(folder: Path) -> set[Any]:
    """The seeds the campaign cassettes in ``folder`` say they were recorded with."""
    return {yaml.safe_load(p.read_text())["metadata"]["agentfuzz"]["seed"] for p in _parts(folder)}


def _parts(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml"))


def _failures(reprec: pytest.HookRecorder) -> dict[str, str]:
    return {r.nodeid.rsplit("::", 1)[-1]: str(r.longrepr) for r in reprec.getfailures()}


def test_a_live_run_records_one_folder_per_shard(recorded: tuple[Path, str]) -> None:
    project, output = recorded
    assert "2 passed" in output, output
    folders = sorted(p.name for p in (project / FOLDERS).iterdir())
    assert folders == ["test_shard-0", "test_shard-1"]
    for shard in (0, 1):
        parts = [p.name for p in _parts(project / FOLDERS / f"test_shard-{shard}")]
        assert parts == ["shrink.yaml", "synthetic-chat-no-stream.yaml"], parts
    # No --agentfuzz-model: the model is the first one /models lists.
    about = yaml.safe_load((project / FOLDERS / "test_shard-0" / "shrink.yaml").read_text())
    assert about["metadata"]["agentfuzz"]["model"] == "kimi-k2-reference"


def test_offline_the_shards_replay_without_the_server(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest("-v")
    # Exactly the two shards: the campaign cassettes are not cassette items.
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_shard?0? PASSED*", "*test_shard?1? PASSED*"])


def test_offline_under_xdist_each_shard_replays_its_own_folder(
    pytester: pytest.Pytester, project: Path
) -> None:
    before = {p: p.read_bytes() for p in (project / FOLDERS).rglob("*.yaml")}
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=2)
    zero, one = project / FOLDERS / "test_shard-0", project / FOLDERS / "test_shard-1"
    assert _seeds(zero) == {6} and _seeds(one) == {3}
    assert [p.read_bytes() for p in _parts(zero)] != [p.read_bytes() for p in _parts(one)]
    # Replaying never writes a cassette.
    assert {p: p.read_bytes() for p in (project / FOLDERS).rglob("*.yaml")} == before


def test_a_changed_seed_fails_offline_with_one_line(
    pytester: pytest.Pytester, project: Path
) -> None:
    test_file = project / "test_shards.py"
    test_file.write_text(test_file.read_text().replace("SEEDS = (6, 3)", "SEEDS = (15, 2)"))
    reprec = pytester.inline_run()
    reprec.assertoutcome(failed=2)
    for message in _failures(reprec).values():
        message = message.strip()
        assert message.startswith("request not in cassette synthetic-chat-no-stream.yaml: ")
        assert "\n" not in message


def test_an_unrecorded_test_fails_offline_saying_how_to_record_it(
    pytester: pytest.Pytester, kimi_url: str
) -> None:
    pytester.makepyfile(
        test_new="""
        def test_campaign(agentfuzz_campaign):
            agentfuzz_campaign(seed=3, max_examples=2)
        """
    )
    # Live with record mode none fuzzes the server and records nothing.
    pytester.runpytest("--agentfuzz-base-url", kimi_url).assert_outcomes(passed=1)
    assert not (pytester.path / "cassettes").exists()
    reprec = pytester.inline_run()
    reprec.assertoutcome(failed=1)
    message = _failures(reprec)["test_campaign"].strip()
    assert message == (
        "no campaign cassettes in cassettes/test_new/test_campaign; record them with: "
        "pytest test_new.py::test_campaign --agentfuzz-base-url URL --agentfuzz-record-mode once"
    )


def test_every_item_gets_a_folder_of_its_own(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_names="""
        import pytest

        class TestIds:
            @pytest.mark.parametrize("x", ["a/b", "a b", "plain"])
            def test_c(self, agentfuzz_campaign, x):
                agentfuzz_campaign(seed=0)
        """
    )
    reprec = pytester.inline_run()
    reprec.assertoutcome(failed=3)
    folders = {
        name: message.split(" in ", 1)[1].split(";", 1)[0]
        for name, message in _failures(reprec).items()
    }
    assert folders["test_c[plain]"] == "cassettes/test_names/TestIds.test_c-plain"
    assert folders["test_c[a/b]"].startswith("cassettes/test_names/TestIds.test_c-a_b-")
    assert folders["test_c[a b]"].startswith("cassettes/test_names/TestIds.test_c-a_b-")
    assert folders["test_c[a/b]"] != folders["test_c[a b]"]
