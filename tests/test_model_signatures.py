"""A fuzz profile's ``model_signatures`` keep what the target's model does on its own out of the
findings, while oracles still judge it and recordings keep the verdict."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agentfuzz.cli import cli


def _fuzz(tmp_path: Path, name: str, signatures: str) -> tuple[int, Path, Path]:
    profile = tmp_path / f"{name}.toml"
    profile.write_text(f'name = "{name}"\nmodel_signatures = {signatures}\n')
    out, record = tmp_path / f"{name}-out", tmp_path / f"{name}-rec"
    argv = ["fuzz", "--profile", str(profile), "--api", "responses", "--stream"]
    argv += ["--max-examples", "30", "--seed", "1", "--oracles", "empty_turn", "--quiet"]
    argv += ["--out", str(out), "--record", str(record)]
    result = CliRunner().invoke(cli, argv, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, out, record


def test_a_model_signature_is_judged_and_recorded_but_not_reported(tmp_path: Path) -> None:
    code, out, _ = _fuzz(tmp_path, "server-side", "[]")
    assert code == 1 and list(out.glob("empty_turn-*"))
    code, out, record = _fuzz(tmp_path, "model-side", '["empty_turn"]')
    assert code == 0
    assert not list(out.glob("empty_turn-*"))
    assert any("signature: empty_turn" in p.read_text() for p in record.glob("*.yaml"))
