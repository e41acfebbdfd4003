"""What the differential tests share: a greedy fuzz profile and the ``fuzz`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli


@pytest.fixture
def greedy(tmp_path: Path) -> Path:
    """A fuzz profile whose every request asks for temperature 0, so each one is judged."""
    path = tmp_path / "greedy.toml"
    path.write_text(
        'name = "greedy"\ntemperatures = [0.0]\nknob_defaults = { temperature = 0.0 }\n'
    )
    return path


def fuzz(*args: str) -> tuple[int, str]:
    """``agentfuzz fuzz --quiet --seed 5 ARGS``: its exit code and output."""
    result = CliRunner().invoke(cli, ["fuzz", "--quiet", "--seed", "5", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output
