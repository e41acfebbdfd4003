"""``--header`` reaches the server with every request and no file ever holds it;
``--wait-for-server`` waits for a server that is not up yet, and gives up with exit 3."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from agentfuzz.cli import main
from agentfuzz.reference import create_app, serve_in_thread
from agentfuzz.request.profiles import Profile
from agentfuzz.runs.config import FuzzConfig
from agentfuzz.runs.workers import spec_of

SECRET = "s3cr3t"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _watched_server(profile: str) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """The reference server, and the headers of every request it received."""
    app = create_app(profile)
    seen: list[dict[str, str]] = []

    async def watched(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(
                {k.decode(): v.decode() for k, v in scope["headers"]} | {"path": scope["path"]}
            )
        await app(scope, receive, send)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        config = uvicorn.Config(watched, log_config=None, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", seen
        finally:
            server.should_exit = True
            thread.join(timeout=10)


def _files_holding(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_header_reaches_the_server_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, record = tmp_path / "out", tmp_path / "rec"
    with _watched_server("vllm-responses-regen") as (url, seen):
        code = main(
            [
                "fuzz", "--base-url", url, "--api", "responses", "--stream", "--seed", "0",
                "--max-examples", "2", "--quiet", "--out", str(out), "--record", str(record),
                "--cassette", str(tmp_path / "cas"), "-H", f"X-Secret: {SECRET}",
                f"--header=X-Other: {SECRET}-2",
            ]
        )  # fmt: skip
    printed = capsys.readouterr()
    assert code == 1, printed.err  # re-minted ids: bundles were written
    assert seen and [h["path"] for h in seen if h.get("x-secret") != SECRET] == []
    assert all(h.get("x-other") == f"{SECRET}-2" for h in seen)
    assert list(out.glob("*/repro.json")) and list(record.glob("*.yaml"))
    assert _files_holding(tmp_path, SECRET) == []
    assert SECRET not in printed.out + printed.err
    # The command each bundle says found it leaves the headers out, flag and all.
    found_by = json.loads(next(out.glob("*/repro.json")).read_text())
    assert "X-Secret" not in json.dumps(found_by) and "-H" not in json.dumps(found_by)


def test_headers_reach_shards_by_the_environment_not_the_spec(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentfuzz.runs import _shard

    config = FuzzConfig(
        base_url="http://x/v1",
        model="m",
        profile=Profile(),
        out=tmp_path,
        headers={"X-Secret": SECRET},
    )
    spec = spec_of(config, 2)
    assert SECRET not in spec.model_dump_json()
    monkeypatch.setenv("AGENTFUZZ_HEADERS", json.dumps(config.headers))
    assert _shard._config(spec, 1).headers == {"X-Secret": SECRET}


@pytest.mark.parametrize("bad", ["X-Secret", "X Secret: v", ": v", "X-Secret: caf\u00e9"])
def test_a_bad_header_is_one_line_without_its_value(
    capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    assert main(["fuzz", "-H", bad, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("agentfuzz: --header")
    assert "caf" not in err


def _cli(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentfuzz.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_wait_for_server_waits_for_a_server_started_late(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    run = _cli(
        "fuzz", "--base-url", url, "--wait-for-server", "60", "--api", "chat", "--no-stream",
        "--max-examples", "2", "--seed", "1", "--quiet", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert run.stderr is not None
    # Nothing listens until the command says it waits; then the server comes up.
    line = run.stderr.readline()
    assert line.startswith(f"agentfuzz: waiting up to 60s for {url}/models"), line
    with serve_in_thread("fixed", port=port):
        out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert "0 finding(s)" in out


def test_wait_for_server_gives_up_with_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    code = main(["fuzz", "--base-url", url, "--wait-for-server", "0.3", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert err[0].startswith("agentfuzz: waiting up to 0.3s")
    assert err[1:] == [f"agentfuzz: {url}/models did not answer 200 within 0.3s"]


@pytest.mark.parametrize(
    "words",
    [
        ["-H", f"X-Secret: {SECRET}"],
        ["--header", f"X-Secret: {SECRET}"],
        [f"--header=X-Secret: {SECRET}"],
        [f"-HX-Secret: {SECRET}"],
    ],
)
def test_the_recorded_command_leaves_headers_out(words: list[str]) -> None:
    import click

    from agentfuzz.cli import cli
    from agentfuzz.cli._common import command_line

    argv = ["fuzz", *words, "--seed", "3"]
    with click.Context(cli, obj={"argv": argv}):
        assert command_line() == "agentfuzz fuzz --seed 3"
