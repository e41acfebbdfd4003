"""A campaign's ``--seed`` draws the same requests whatever else its process has imported.

Hypothesis mixes into its draws the constants of every "local" module loaded at the time; a
pass sees agentfuzz's own constants only (``_pass_seed.seed_alone``), so a module imported in
between, with constants of its own, changes nothing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from click.testing import CliRunner

from agentfuzz.cli import cli


def _requests(out: Path) -> list[str]:
    args = ["fuzz", "--serve", "fixed", "--api", "chat", "--no-stream", "--seed", "5"]
    args += ["--max-examples", "60", "--out", str(out / "out"), "--record", str(out / "rec")]
    result = CliRunner().invoke(cli, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    return sorted(p.name for p in (out / "rec").glob("*.yaml"))


def test_a_module_imported_between_two_runs_changes_no_request(tmp_path: Path) -> None:
    before = _requests(tmp_path / "first")
    extra = tmp_path / "lib"
    extra.mkdir()
    words = ", ".join(repr(f"agentfuzz-unseen-constant-{i}") for i in range(400))
    numbers = ", ".join(str(7919 * i + 13) for i in range(400))
    (extra / "extra_constants.py").write_text(f"WORDS = ({words},)\nNUMBERS = ({numbers},)\n")
    sys.path.insert(0, str(extra))
    try:
        importlib.import_module("extra_constants")
        after = _requests(tmp_path / "second")
    finally:
        sys.path.remove(str(extra))
        sys.modules.pop("extra_constants", None)
    assert len(before) > 20
    assert after == before


def test_only_the_generators_feed_the_draws() -> None:
    """A report's wording, the puppet's catalogue or the reference server's planted faults must
    not move what a seed draws (nor hand the fuzzer a planted fault's trigger)."""
    from hypothesis.internal.constants_ast import constants_from_module

    from agentfuzz.reference import faults
    from agentfuzz.runs._pass_seed import _own_constants

    strings = _own_constants().strings
    assert "kimi_bare" in strings  # request/ids.py: a generator's own word
    planted = "null_calls"  # the name of a planted fault: the reference server's word alone
    assert planted in constants_from_module(faults).strings
    assert planted not in strings
