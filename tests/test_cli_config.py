"""Option defaults from a config file: ``[tool.agentfuzz]`` in ``./pyproject.toml``,
``./agentfuzz.toml`` or ``--config FILE``; ``${ENV}`` expanded; the command line wins; anything
wrong is one line and exit 2. Each test runs in its own empty working directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.cli import fuzz as fuzz_command
from agentfuzz.cli import main


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What ``agentfuzz fuzz`` was given, without running it."""
    got: list[Any] = []
    monkeypatch.setattr(fuzz_command, "_fuzz", got.append)
    return got


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_pyproject_table_supplies_options(seen: list[Any]) -> None:
    Path("pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.agentfuzz]\nmax-examples = 7\nseed = 3\n'
        'trials = "auto"\n\n[tool.agentfuzz.fuzz]\nout = "found"\nstream = false\n'
    )
    assert main(["fuzz"]) == 0
    (o,) = seen
    assert (o.max_examples, o.seed, o.trials, o.out, o.stream) == (
        7,
        3,
        "auto",
        Path("found"),
        False,
    )


def test_the_command_line_wins(seen: list[Any]) -> None:
    Path("agentfuzz.toml").write_text("max_examples = 7\nseed = 3\n")
    assert main(["fuzz", "--max-examples", "2"]) == 0
    assert (seen[0].max_examples, seen[0].seed) == (2, 3)


def test_agentfuzz_toml_comes_before_pyproject(seen: list[Any]) -> None:
    Path("pyproject.toml").write_text("[tool.agentfuzz]\nseed = 1\n")
    Path("agentfuzz.toml").write_text("seed = 2\n")
    assert main(["fuzz"]) == 0
    assert seen[0].seed == 2


@pytest.mark.parametrize("where", ["before", "after"])
def test_config_given_explicitly(seen: list[Any], tmp_path: Path, where: str) -> None:
    Path("agentfuzz.toml").write_text("seed = 2\n")
    other = tmp_path / "ci.toml"
    other.write_text('[fuzz]\nseed = 9\nheader = ["X-A: 1"]\n')
    argv = (
        ["--config", str(other), "fuzz"] if where == "before" else ["fuzz", "--config", str(other)]
    )
    assert main(argv) == 0
    assert (seen[0].seed, seen[0].headers) == (9, ("X-A: 1",))


def test_environment_variables_are_substituted(
    seen: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_BOX", "gpu-box:8000")
    Path("agentfuzz.toml").write_text('base-url = "http://${GPU_BOX}/v1"\n')
    assert main(["fuzz"]) == 0
    assert seen[0].base_url == "http://gpu-box:8000/v1"


def test_top_level_keys_go_to_every_command_that_has_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # ``replay`` has --seed but no --max-examples: the shared table is fine for it.
    Path("agentfuzz.toml").write_text("seed = 5\nmax-examples = 3\n")
    assert main(["replay", "nothing-here"]) == 2
    err = _err(capsys)
    assert "nothing-here" in err and "agentfuzz.toml" not in err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("max-exampels = 3\n", "unknown key 'max-exampels'"),
        ("[fuzz]\nwhole = true\n", "[fuzz] unknown key 'whole'"),
        ('max-examples = "many"\n', "max-examples"),
        ("max-examples = 0\n", "max-examples"),
        ('quiet = "yes"\n', "expected true or false"),
        ("seed = [1, 2]\n", "expected a single value"),
        ('base-url = "${AGENTFUZZ_TEST_UNSET}"\n', "${AGENTFUZZ_TEST_UNSET} is not set"),
        ("seed = \n", "invalid TOML"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_2(
    seen: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    said: str,
) -> None:
    monkeypatch.delenv("AGENTFUZZ_TEST_UNSET", raising=False)
    Path("agentfuzz.toml").write_text(text)
    assert main(["fuzz"]) == 2
    err = _err(capsys)
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("agentfuzz: agentfuzz.toml") and said in err
    assert seen == []


def test_a_missing_explicit_config_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "nope.toml", "fuzz"]) == 2
    assert "nope.toml" in _err(capsys)


def test_an_unrelated_pyproject_is_left_alone(seen: list[Any]) -> None:
    Path("pyproject.toml").write_text('[project]\nname = "x"\n')
    assert main(["fuzz"]) == 0
    assert seen[0].max_examples == 100


def test_help_shows_the_configured_default() -> None:
    from click.testing import CliRunner

    from agentfuzz.cli import cli

    Path("agentfuzz.toml").write_text("max-examples = 7\n")
    result = CliRunner().invoke(cli, ["fuzz", "--help"], terminal_width=100)
    assert "[default: 7;" in result.output


def test_a_run_records_what_its_config_file_gave_it_without_secrets() -> None:
    """The command line alone does not run it again: each bundle's found_by names the file and
    the options it supplied, the key and headers left out."""
    Path("agentfuzz.toml").write_text(
        'api-key = "sk-config-secret"\nheader = ["X-Tenant: hush"]\n\n'
        '[fuzz]\nmax-examples = 20\nseed = 10\napi = "responses"\nstream = true\n'
    )
    assert main(["fuzz", "--quiet"]) == 1
    (repro,) = Path("agentfuzz-out").glob("*/repro.json")
    text = repro.read_text()
    assert "sk-config-secret" not in text and "hush" not in text
    found_by = json.loads(text)["found_by"]
    assert found_by["command"] == "agentfuzz fuzz --quiet"
    assert found_by["config"]["file"] == "agentfuzz.toml"
    assert found_by["config"]["options"] == {
        "max_examples": "20",
        "seed": "10",
        "api": "responses",
        "stream": True,
    }
    run = json.loads(Path("agentfuzz-out/summary.json").read_text())["run"]
    assert run["config"] == found_by["config"]
