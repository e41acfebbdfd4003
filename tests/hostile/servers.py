"""Hostile servers on loopback, and a bounded way to run agentfuzz against them.

A hostile server is whatever a handler writes on the socket: ``raw_server(handler)`` accepts
connections on 127.0.0.1 (a free port), reads one HTTP request per connection and hands it to
``handler(request, out)``, which writes raw bytes (a stall, a drip, a redirect, a flood, HTML,
an endless stream). The server stops when the ``with`` block ends, even while a handler is
still writing: each write to a closed socket ends that handler.

``run_bounded(argv)`` runs ``python -m agentfuzz ...`` in a child process under a wall-clock
limit and reports its exit code, its output and its peak resident memory (from the child's own
rusage), so a test can say "no run exceeds its --max-time by more than its --timeout, nor
1 GB" and mean it.

This is test code on the server side: it imports nothing of agentfuzz.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import BinaryIO


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body or b"null")


Handler = Callable[[Request, BinaryIO], None]


@dataclass
class Server:
    base_url: str
    requests: list[Request] = field(default_factory=list)


def _read_request(stream: BinaryIO) -> Request | None:
    line = stream.readline(65536)
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (raw := stream.readline(65536)) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    size = int(headers.get("content-length", "0") or 0)
    return Request(method, path, headers, stream.read(size) if size else b"")


def respond(
    out: BinaryIO,
    status: int,
    body: bytes | str = b"",
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    """Write one whole HTTP/1.1 answer and close the connection."""
    data = body.encode() if isinstance(body, str) else body
    head = [f"HTTP/1.1 {status} X", f"content-type: {content_type}", f"content-length: {len(data)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head.append("connection: close")
    out.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    out.flush()


def models_list(out: BinaryIO, *names: str) -> None:
    """The usual answer to ``GET /v1/models``."""
    body = {"object": "list", "data": [{"id": n, "object": "model"} for n in names or ("m",)]}
    respond(out, 200, json.dumps(body))


def stream_head(out: BinaryIO, content_type: str = "text/event-stream") -> None:
    """Open an answer with no length: whatever follows is its body, until the socket closes."""
    head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n"
    out.write(head.encode())
    out.flush()


@contextmanager
def raw_server(handler: Handler) -> Iterator[Server]:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    server = Server(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
    stopping = threading.Event()
    conns: list[socket.socket] = []

    def serve(conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as stream:
            try:
                request = _read_request(stream)
                if request is not None:
                    server.requests.append(request)
                    handler(request, stream)
            except (OSError, ValueError):
                pass  # the client left, or the server is stopping

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue  # look at the stop flag a few times a second
            except OSError:
                return
            conn.settimeout(None)
            conns.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stopping.set()
        listener.close()
        for conn in conns:
            with suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        thread.join(5)


@dataclass
class Outcome:
    code: int
    output: str
    seconds: float
    peak_mb: float


def run_bounded(argv: list[str], limit_s: float, cwd: str | None = None) -> Outcome:
    """Run ``python -m agentfuzz *argv``; kill it past ``limit_s`` (code -9 then)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentfuzz", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"},
    )
    timer = threading.Timer(limit_s, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None
        with proc.stdout:
            output = proc.stdout.read().decode(errors="replace")
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    return Outcome(proc.returncode, output, seconds, usage.ru_maxrss / 1024)
