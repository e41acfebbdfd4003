"""A bundle re-sent through agentfuzz (``repro.sh``'s second half, a live ``test_repro.py``)
carries the key as the curl beside it does: ``$OPENAI_API_KEY``, or the one it is given."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentfuzz import resend_bundle
from agentfuzz.model.history import Case, History, UserMessage

_EMPTY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}
    ],
}


@pytest.fixture
def server() -> Iterator[tuple[str, list[str | None]]]:
    """A server that answers every chat request with an empty turn and keeps the keys sent."""
    keys: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            keys.append(self.headers.get("Authorization"))
            body = json.dumps(_EMPTY).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", keys
    finally:
        httpd.shutdown()
        httpd.server_close()


def _bundle(folder: Path) -> Path:
    case = Case(history=History(items=(UserMessage(text="hi"),)))
    doc = {
        "url": "http://gone.invalid/v1/chat/completions",
        "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "oracle": "empty_turn",
        "case": case.model_dump(mode="json"),
    }
    folder.mkdir()
    (folder / "repro.json").write_text(json.dumps(doc))
    return folder


def test_the_key_comes_from_the_environment_or_the_caller(
    server: tuple[str, list[str | None]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, keys = server
    bundle = _bundle(tmp_path / "b")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert [v.oracle for v in resend_bundle(bundle, url)] == ["empty_turn"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    resend_bundle(bundle, url)
    resend_bundle(bundle, url, api_key="sk-given")
    assert keys == [None, "Bearer sk-from-env", "Bearer sk-given"]
