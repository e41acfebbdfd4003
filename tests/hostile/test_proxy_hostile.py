"""``agentfuzz proxy`` against what real use throws at it (issue 41 items 8 and 21), in process.

- A client that hangs up before sending its whole body made uvicorn print starlette's
  ``ClientDisconnect`` traceback; it is now let go without a word, and the proxy serves on.
- An upstream given without its ``/v1`` answered every request 404 and nothing said why; the
  first 404 now prints the hint ``fuzz`` prints.
- ``--wait-for-server`` waits for an upstream started beside the proxy, as ``fuzz`` waits
  (the whole start is in ``test_proxy_flood.py``, in a child process); non-finite seconds
  are a usage error.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.cli._common import url_hint
from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.watch import Watch, watching

_ASK = {"model": "m", "messages": [{"role": "user", "content": "Hello."}]}


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serve_in_thread("fixed") as url:
        yield url


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_client_gone_mid_body_prints_no_traceback_and_the_proxy_serves_on(
    tmp_path: Path, upstream: str, caplog: pytest.LogCaptureFixture
) -> None:
    said: list[str] = []
    watch = Watch(upstream, tmp_path, say=said.append)
    with caplog.at_level(logging.INFO), watching(upstream, watch) as url:
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port)) as raw:
            head = (
                "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                "content-type: application/json\r\ncontent-length: 1000\r\n\r\n"
            )
            raw.sendall(head.encode() + b'{"model":"')
        answer = httpx.post(url + "/chat/completions", json=_ASK, timeout=30)
    # Out of the block the server has stopped, its tasks ended: any log line is in by now.
    watch.close()
    assert answer.status_code == 200
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    assert "Traceback" not in caplog.text and "ClientDisconnect" not in caplog.text
    assert watch.judged == 1 and said == []


def test_an_upstream_without_v1_gets_the_fuzz_hint_once(tmp_path: Path, upstream: str) -> None:
    root = upstream.removesuffix("/v1")
    said: list[str] = []
    watch = Watch(root, tmp_path, say=said.append, hint=url_hint(root))
    with watching(root, watch) as url, httpx.Client(timeout=30) as client:
        answers = [client.post(url + "/chat/completions", json=_ASK) for _ in range(2)]
    watch.close()
    assert [a.status_code for a in answers] == [404, 404]  # relayed as they came
    assert said == [
        f"{root}/chat/completions answered 404 Not Found: "
        f"the base URL probably lacks /v1: try {root}/v1"
    ]


def test_an_upstream_with_v1_gets_no_hint_for_a_404(tmp_path: Path, upstream: str) -> None:
    said: list[str] = []
    watch = Watch(upstream, tmp_path, say=said.append, hint=url_hint(upstream))
    with watching(upstream, watch) as url:
        assert httpx.get(url + "/nowhere", timeout=30).status_code == 404
    watch.close()
    assert said == []


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--wait-for-server", "nan"), ("--wait-for-server", "inf"), ("--timeout", "nan")],
)
def test_seconds_that_bound_nothing_are_a_usage_error(
    tmp_path: Path, upstream: str, flag: str, value: str
) -> None:
    args = ["proxy", "--upstream", upstream, "--port", "0", "--out", str(tmp_path), flag, value]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert flag in line and "finite" in line


def test_an_upstream_that_never_comes_up_is_exit_3_after_the_wait(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{_closed_port()}/v1"
    args = ["proxy", "--upstream", closed, "--out", str(tmp_path), "--wait-for-server", "0.3"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    assert f"waiting up to 0.3s for {closed}/models to answer 200" in result.output
    assert result.output.strip().splitlines()[-1].endswith("did not answer 200 within 0.3s")
    assert "Traceback" not in result.output


def test_waiting_on_an_upstream_without_v1_ends_with_the_hint(
    tmp_path: Path, upstream: str
) -> None:
    root = upstream.removesuffix("/v1")
    args = ["proxy", "--upstream", root, "--out", str(tmp_path), "--wait-for-server", "0.3"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    last = result.output.strip().splitlines()[-1]
    assert "did not answer 200 within 0.3s" in last and f"try {root}/v1" in last


def test_the_copy_kept_for_the_judge_stops_at_the_fuzzers_limit() -> None:
    from agentfuzz.wire.transport._answer import Copy
    from agentfuzz.wire.transport.live import BODY_LIMIT

    copy = Copy()
    block = b"x" * (1 << 20)
    for _ in range((BODY_LIMIT >> 20) + 3):
        copy.add(block)
    assert copy.cut and copy.size == BODY_LIMIT == len(copy.raw())
