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


class _Canned:
    """A loopback HTTP server answering GET /v1/models and every POST with canned bytes."""

    def __init__(self, models: tuple[int, bytes], post: tuple[int, bytes]) -> None:
        import http.server
        import threading

        answers = {"GET": models, "POST": post}

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = answers[self.command]
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def canned():
    servers: list[_Canned] = []

    def start(models: tuple[int, bytes], post: tuple[int, bytes] = (200, b"{}")) -> str:
        servers.append(_Canned(models, post))
        return servers[-1].url

    yield start
    for server in servers:
        server.close()


def _one_line(err: str) -> None:
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1:9/v1",
        "http://",
        "ftp://x",
        "",
        "http://127.0.0.1:99999/v1",
        "http://127.0.0.1:abc/v1",
        "http://[::1",
        "http://a b/v1",
    ],
)
def test_malformed_base_url_is_exit_2(capsys, tmp_path: Path, url: str) -> None:
    argv = ["fuzz", "--base-url", url, "--model", "m", "--out", str(tmp_path / "o"), "--quiet"]
    code, err = _run(capsys, *argv)
    assert code == 2
    _one_line(err)
    assert "--base-url" in err


def test_unresolvable_host_is_exit_3(capsys, tmp_path: Path) -> None:
    url = "http://agentfuzz-no-such-host.invalid/v1"
    argv = ["fuzz", "--base-url", url, "--model", "m", "--out", str(tmp_path / "o"), "--quiet"]
    code, err = _run(capsys, *argv)
    assert code == 3
    _one_line(err)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--oracles", ""),
        ("--oracles", ",,"),
        ("--trials", "0"),
        ("--trials", "abc"),
        ("--max-examples", "0"),
        ("--max-examples", "-1"),
        ("--max-examples", "abc"),
        ("--api-key", "ключ"),
        ("--api-key", "a\nb"),
        ("--model", " "),
        ("--serve", ""),
        ("--max-time", "0"),
        ("--max-time", "soon"),
    ],
)
def test_bad_flag_values_are_exit_2(capsys, tmp_path: Path, flag: str, value: str) -> None:
    argv = ["fuzz", flag, value, "--out", str(tmp_path / "o"), "--quiet"]
    if flag != "--serve":
        argv += ["--base-url", f"http://127.0.0.1:{_dead_port()}/v1"]
    if flag not in ("--model", "--serve"):
        argv += ["--model", "m"]
    code, err = _run(capsys, *argv)
    assert code == 2
    _one_line(err)
    assert flag in err


def test_every_oracle_skipped_is_exit_2(capsys, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    argv = ["fuzz", "--base-url", url, "--model", "m", "--out", str(tmp_path / "o")]
    code, err = _run(capsys, *argv, "--oracles", "empty_turn", "--skip-oracles", "empty_turn")
    assert code == 2
    _one_line(err)


def test_profile_that_is_a_directory_or_binary_is_exit_2(capsys, tmp_path: Path) -> None:
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00\x01garbage")
    for profile in (str(tmp_path) + "/", str(binary)):
        code, err = _run(
            capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--profile", profile
        )
        assert code == 2
        _one_line(err)


def test_out_that_is_a_file_is_exit_2(capsys, tmp_path: Path) -> None:
    existing = tmp_path / "file"
    existing.write_text("")
    argv = ["fuzz", "--base-url", "http://127.0.0.1:9/v1", "--out", str(existing)]
    code, err = _run(capsys, *argv)
    assert code == 2
    _one_line(err)


@pytest.mark.parametrize(
    "answer",
    [
        (404, b'{"error": "not found"}'),
        (200, b"<html>login</html>"),
        (200, b"{}"),
        (200, b'{"data": []}'),
        (200, b'{"data": [{}]}'),
        (200, b"null"),
        (500, b"boom"),
    ],
)
def test_unusable_model_list_is_exit_2(canned, capsys, tmp_path: Path, answer) -> None:
    url = canned(answer)
    code, err = _run(capsys, "fuzz", "--base-url", url, "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2
    _one_line(err)
    # A web page (a login page, a web server's error page) is no API: no model name helps.
    page = answer[1].startswith(b"<")
    assert ("--base-url" in err and "--model" not in err) if page else "--model" in err


@pytest.mark.parametrize("status", [401, 404, 429])
def test_every_request_refused_is_exit_2(canned, capsys, tmp_path: Path, status: int) -> None:
    url = canned((200, b'{"data": [{"id": "m"}]}'), (status, b'{"error": {"message": "no"}}'))
    argv = ["fuzz", "--base-url", url, "--out", str(tmp_path / "o"), "--quiet"]
    code, err = _run(capsys, *argv, "--max-examples", "1", "--api", "chat", "--no-stream")
    assert code == 2
    _one_line(err)
    assert str(status) in err and "nothing was tested" in err


def test_serve_on_a_port_in_use_is_exit_2(capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, err = _run(capsys, "serve", "vllm-kimi-k2", "--port", str(port))
    assert code == 2
    _one_line(err)
    assert str(port) in err


@pytest.mark.parametrize("argv", [["serve", "nope"], ["serve", "vllm-kimi-k2", "--port", "99999"]])
def test_serve_bad_profile_or_port_is_exit_2(capsys, argv: list[str]) -> None:
    code, err = _run(capsys, *argv)
    assert code == 2
    _one_line(err)


def test_serve_and_base_url_together_is_exit_2(capsys) -> None:
    code, err = _run(capsys, "fuzz", "--base-url", "http://127.0.0.1:9/v1", "--serve", "fixed")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--serve" in err


def test_bare_command_prints_help(capsys) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "fuzz" in out and "serve" in out


def test_workers_auto_with_a_campaign_cassette_is_exit_2(capsys, tmp_path: Path) -> None:
    # --workers N with --cassette is supported (shard k plays shard-k); auto is not: it
    # measures a live server, and a recording has to be played by as many as recorded it.
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    argv = ["fuzz", "--base-url", url, "--model", "m", "--out", str(tmp_path / "o"), "--quiet"]
    code, err = _run(capsys, *argv, "--workers", "auto", "--cassette", str(tmp_path / "c"))
    assert code == 2
    _one_line(err)
    assert "--workers auto" in err and "--cassette" in err
