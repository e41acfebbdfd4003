"""``agentfuzz proxy`` in front of the reference server, with real agent clients driving it.

The clients are the live recipe's own (``live/agents/clients.py``): the plain openai SDK loop
and the OpenAI Agents SDK's ``Runner``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.watch import Watch, watching

RECIPE = Path(__file__).resolve().parents[2] / "live" / "agents"
if str(RECIPE) not in sys.path:
    sys.path.insert(0, str(RECIPE))


@contextlib.contextmanager
def proxied(profile: str, out: Path, record: Path | None = None) -> Iterator[tuple[str, Watch]]:
    """The reference server with ``profile`` and the proxy in front of it: yields the proxy's
    base URL and its watch (closed, every exchange judged, once the block ends)."""
    lines: list[str] = []
    with serve_in_thread(profile) as upstream:
        watch = Watch(upstream, out, record, say=lines.append)
        try:
            with watching(upstream, watch) as url:
                yield url, watch
        finally:
            watch.close()


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A hand-written server (``handler``) on a free loopback port; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class Quiet(BaseHTTPRequestHandler):
    """A handler that logs nothing and hands each POST's JSON body to ``answer``."""

    def log_message(self, *_: object) -> None:
        pass

    def body(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def send_json(self, status: int, answer: Any) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def one_chunk_then(
    then: Callable[[], None], text: str = "par", last: tuple[str, ...] = ()
) -> type[BaseHTTPRequestHandler]:
    """A chat server whose stream sends one chunk of ``text``, calls ``then`` (waits, say), and
    drops the connection without the chunked body's last chunk; or with ``last``, sends those
    events' data after the chunk and ends the body properly after ``then``."""

    class Handler(Quiet):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.body()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": text}}],
            }
            for event in (f"data: {data}\n\n".encode() for data in (json.dumps(chunk), *last)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
            then()
            if last:
                self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    return Handler
