"""Issue 41: what the command line checks before it sends anything, and how it says so.

Non-finite seconds, a report path that cannot be written, a pyproject.toml whose ``tool`` is not a
table, a profile name a letter off: each one line and exit 2 before any request. ``--model`` that
the server does not list: one warning line, and the run goes on. ``--version`` says what every
bundle records. A Ctrl-C while the commands load: one line and exit 130.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentfuzz.cli import main
from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.config import version


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


class Listener:
    """A port that listens and never answers: whether anything connected to it is whether
    anything was sent (a connection waits in its backlog, accepted or not)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"

    def reached(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True


@pytest.fixture
def counted() -> Iterator[Listener]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield Listener(sock)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--max-time", "NaN"),
        ("--max-time", "1e999"),
        ("--wait-for-server", "nan"),
    ],
)
def test_non_finite_seconds_are_a_usage_error_before_any_request(
    capsys: pytest.CaptureFixture[str], counted: Listener, flag: str, value: str
) -> None:
    argv = ["fuzz", "--base-url", counted.base_url, "--model", "m", "--quiet", flag, value]
    code, _, err = _run(capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and flag in err and "finite" in err
    assert not counted.reached()


def test_non_finite_seconds_in_a_config_file_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("agentfuzz.toml").write_text("[fuzz]\ntimeout = nan\n")
    code, _, err = _run(capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--quiet")
    assert code == 2 and err.count("\n") == 1
    assert "agentfuzz.toml" in err and "finite" in err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("tool = 5\n", "[tool] must be a table, not an integer"),
        ("[tool]\nagentfuzz = 3\n", "[tool.agentfuzz] must be a table, not an integer"),
        ('tool = "x"\n', "[tool] must be a table, not a string"),
    ],
)
def test_a_pyproject_whose_tool_is_not_a_table_is_one_line(
    capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    Path("pyproject.toml").write_text(text)
    code, _, err = _run(capsys, "oracles")
    assert code == 2
    assert err == f"agentfuzz: pyproject.toml: {said}\n"


# Paths even root cannot create: /proc takes no new entries.
_PROC = Path("/proc")


@pytest.mark.skipif(not (_PROC / "self").is_dir(), reason="needs /proc")
@pytest.mark.parametrize(
    "flags",
    [
        ("--report", "html", str(_PROC / "agentfuzz-html")),
        ("--report", "markdown", str(_PROC / "agentfuzz-report.md")),
        ("--junit-xml", str(_PROC / "agentfuzz-junit.xml")),
    ],
    ids=["html", "markdown", "junit"],
)
def test_an_unwritable_report_path_is_exit_2_before_any_request(
    capsys: pytest.CaptureFixture[str], counted: Listener, flags: tuple[str, ...]
) -> None:
    argv = ["fuzz", "--base-url", counted.base_url, "--model", "m", "--quiet", *flags]
    code, out, err = _run(capsys, *argv)
    assert code == 2, out + err
    assert err.count("\n") == 1 and flags[0] in err and "not writable" in err
    assert not counted.reached() and out == ""


def test_a_report_folder_is_made_up_front(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """As ``--out``'s is: made and written in once, before the run (here one that then stops
    at a later check, so nothing is sent)."""
    folder = tmp_path / "deep" / "html"
    argv = ["fuzz", "--base-url", "http://127.0.0.1:9/v1", "--report", "html", str(folder)]
    code, _, err = _run(capsys, *argv, "--workers", "auto", "--cassette", str(tmp_path / "c"))
    assert code == 2 and "--workers auto" in err
    assert folder.is_dir() and not any(folder.iterdir())


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["fuzz", "--profile", "kimi_k2"], "did you mean kimi-k2?"),
        (["fuzz", "--profile", "defualt"], "did you mean default?"),
        (["fuzz", "--profile", "vllm-kimi-k2"], "--serve vllm-kimi-k2 starts it"),
        (["serve", "vllm-kimi-k3"], "did you mean vllm-kimi-k2?"),
        (["fuzz", "--serve", "vllm_kimi_k2_fixed"], "did you mean vllm-kimi-k2-fixed?"),
    ],
)
def test_a_name_a_letter_off_says_which_was_meant(
    capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    code, _, err = _run(capsys, *argv, "--out", "o") if argv[0] == "fuzz" else _run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and meant in err, err


def test_a_name_nothing_like_any_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "serve", "zzzzzz")
    assert code == 2 and "did you mean" not in err and "known:" in err


def test_a_model_the_server_does_not_list_gets_one_warning_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_in_thread("fixed") as url:
        argv = ["fuzz", "--base-url", url, "--model", "gpt-4o", "--quiet"]
        code, out, err = _run(capsys, *argv, "--api", "chat", "--no-stream", "--max-examples", "2")
    assert code == 0, out + err
    (warning,) = [line for line in err.splitlines() if "warning" in line]
    assert warning.startswith("agentfuzz: warning: --model gpt-4o is not among the models")
    assert "(kimi-k2-reference); going on" in warning
    assert "1 finding" not in out and "0 finding(s)" in out


def test_a_listed_model_gets_no_warning(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_in_thread("fixed") as url:
        argv = ["fuzz", "--base-url", url, "--model", "kimi-k2-reference", "--quiet"]
        code, _, err = _run(capsys, *argv, "--api", "chat", "--no-stream", "--max-examples", "1")
    assert code == 0 and "warning" not in err


def test_version_is_the_one_every_bundle_records(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--version")
    assert code == 0
    assert out == f"agentfuzz, version {version()}\n"


# Runs the console script's entry as ``python -m agentfuzz`` does, with an import that a
# Ctrl-C interrupts: the moment the commands load, made exact.
_INTERRUPTED_IMPORT = """
import runpy, sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "click":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["agentfuzz", "--version"]
runpy.run_module("agentfuzz", run_name="__main__")
"""


def test_ctrl_c_while_the_commands_load_is_one_line_and_exit_130() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "agentfuzz: interrupted\n"
    assert done.stdout == ""
