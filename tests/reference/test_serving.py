"""Serving: the blocking ``run`` prints its address, the thread server stops cleanly."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from agentfuzz.reference import serve_in_thread


def test_run_prints_listening_line_then_serves() -> None:
    code = "from agentfuzz.reference import run; run('fixed', '127.0.0.1', 0)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        models = httpx.get(line.removeprefix("listening on ") + "/v1/models", timeout=10)
        assert models.json()["data"][0]["id"] == "kimi-k2-reference"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_serve_in_thread_stops_on_exit() -> None:
    with serve_in_thread("fixed") as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert httpx.get(url + "/models", timeout=10).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/models", timeout=2)


def test_bad_json_and_bad_shapes_are_json_400s() -> None:
    with serve_in_thread("fixed") as url, httpx.Client(timeout=10) as client:
        for path, content in [
            ("/chat/completions", b"{not json"),
            ("/chat/completions", b'{"messages": []}'),
            ("/chat/completions", b'{"messages": [{"role": "wizard"}]}'),
            ("/responses", b'{"input": [{"type": "mystery"}]}'),
            ("/responses", b'{"input": "x", "tool_choice": {"type": "function", "name": "nope"}}'),
        ]:
            reply = client.post(url + path, content=content)
            assert reply.status_code == 400, (content, reply.text)
            assert reply.json()["error"]["message"]
