"""Bad input of every kind: one line on stderr, a contract exit code, never a traceback."""

import socket
from pathlib import Path

import pytest

from agentfuzz.cli import main


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_refused_connection_is_exit_3_and_one_line(capsys, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    code, err = _run(capsys, "fuzz", "--base-url", url, "--out", str(tmp_path / "o"), "--quiet")
    assert code == 3
    assert len(err.strip().splitlines()) == 1
    assert "127.0.0.1" in err


def test_refused_connection_with_model_is_exit_3(capsys, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    argv = ["fuzz", "--base-url", url, "--model", "m", "--out", str(tmp_path / "o"), "--quiet"]
    code, err = _run(capsys, *argv)
    assert code == 3
    assert len(err.strip().splitlines()) == 1


def test_bad_flag_is_exit_2_and_one_line(capsys) -> None:
    code, err = _run(capsys, "fuzz", "--no-such-flag")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--no-such-flag" in err


def test_bad_profile_names_file_and_field(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("max_turns = 0\n")
    code, err = _run(capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--profile", str(bad))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "bad.toml" in err and "max_turns" in err


def test_unknown_profile_name(capsys) -> None:
    code, err = _run(capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--profile", "nope")
    assert code == 2
    assert "nope" in err


def test_unwritable_out_is_exit_2(capsys, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = ["fuzz", "--base-url", "http://127.0.0.1:9/v1", "--out", str(blocker / "sub")]
    code, err = _run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--out" in err


def test_unknown_oracle_is_exit_2(capsys) -> None:
    code, err = _run(capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--oracles", "nope")
    assert code == 2
    assert "nope" in err and "empty_turn" in err
