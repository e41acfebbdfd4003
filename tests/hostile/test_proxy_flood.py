"""``agentfuzz proxy`` in a child process in front of hostile upstreams (issue 41 items 8, 12,
20 and 21, the proxy's side).

An upstream whose answer never ends (comment lines, a drip of pings, one endless line, valid
events without end) used to hang the relay (its timeout was a pause between two chunks, which
never came while bytes kept coming) and every byte was kept for the judge: 2.3 GB after 3 s of
a flood. Each answer now ends at ``--timeout`` in all, the proxy keeps at most 32 MiB of it, it
closes the upstream when the client leaves, and it answers other requests meanwhile.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

import httpx
import pytest

from agentfuzz.reference import serve_in_thread

from .proxying import proxy_process
from .servers import Request, models_list, raw_server, respond, stream_head

# Proxies in child processes, each answer cut after seconds: the slow lane. When the proxy
# drops an endless answer, what was still buffered fails the raw server's own close (its
# thread's exception): that drop is what these tests want, and ``ended`` shows it.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
]

_TIMEOUT = 3.0
_CHUNK = {
    "id": "c",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "x"}}],
}
_EVENT = f"data: {json.dumps(_CHUNK)}\n\n".encode()
_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
    ],
}


def _endless(kind: str, out: BinaryIO) -> None:
    """One answer that never ends, framed as ``kind`` says."""
    stream_head(out)
    block = {"events": _EVENT, "pings": b": ping\n\n", "drip": b": ping\n\n", "line": b"x"}[kind]
    if kind == "drip":  # a ping now and then: what a server sends while its model thinks
        while True:
            out.write(block)
            out.flush()
            time.sleep(0.05)
    if kind == "line":
        out.write(b"data: ")
    block *= 65536 // len(block)
    while True:
        out.write(block)


class _Hostile:
    """The upstream: ``GET /models`` listed; a POST whose user message names an endless kind
    gets that answer (and ``ended[kind]`` is set once the proxy has let go of it); any other
    gets a short whole answer."""

    def __init__(self) -> None:
        self.ended = {k: threading.Event() for k in ("events", "pings", "drip", "line")}

    def __call__(self, request: Request, out: BinaryIO) -> None:
        if request.method == "GET":
            models_list(out)
            return
        body = request.json()
        assert isinstance(body, dict)
        kind = body["messages"][-1]["content"]
        if kind not in self.ended:
            respond(out, 200, json.dumps(_ANSWER))
            return
        try:
            _endless(kind, out)
        finally:
            self.ended[kind].set()


def _ask(kind: str) -> dict[str, object]:
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": kind}]}


def _read_until_cut(url: str, kind: str, upto: float) -> tuple[float, int, bool]:
    """Read one endless answer through the proxy for at most ``upto`` seconds: how long it
    lasted, the bytes read, and whether the proxy cut it (rather than this client)."""
    started, size = time.monotonic(), 0
    with httpx.Client(timeout=httpx.Timeout(10.0)) as client:
        try:
            with client.stream("POST", url + "/chat/completions", json=_ask(kind)) as answer:
                for chunk in answer.iter_raw():
                    size += len(chunk)
                    if time.monotonic() - started > upto:
                        return time.monotonic() - started, size, False
        except httpx.RemoteProtocolError:
            return time.monotonic() - started, size, True
    return time.monotonic() - started, size, True


def _models_within(url: str, seconds: float, answered: list[float]) -> None:
    started = time.monotonic()
    if httpx.get(url + "/models", timeout=seconds).status_code == 200:
        answered.append(time.monotonic() - started)


def _leave_mid_body(url: str) -> None:
    """A client that sends its headers and 10 bytes of the 1000 it announced, and goes."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port)) as raw:
        head = "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n"
        raw.sendall(head.encode() + b'{"model":"')


def test_endless_answers_are_cut_in_time_kept_small_and_the_proxy_serves_on(
    tmp_path: Path,
) -> None:
    hostile = _Hostile()
    upto = _TIMEOUT + 10
    with (
        raw_server(hostile) as upstream,
        proxy_process(upstream.base_url, tmp_path, "--timeout", str(_TIMEOUT)) as proxy,
    ):
        url = proxy.url()
        answered: list[float] = []
        meanwhile = threading.Thread(target=_models_within, args=(url, 5.0, answered))
        lasted = {}
        for kind in ("events", "pings", "drip", "line"):
            if kind == "events":
                meanwhile.start()  # asked while the flood is relayed
            seconds, size, cut = _read_until_cut(url, kind, upto)
            assert cut, f"{kind}: still coming after {seconds:.1f}s ({size} bytes)"
            lasted[kind] = seconds
            assert hostile.ended[kind].wait(5), f"{kind}: the upstream's answer was kept open"
        meanwhile.join()
        _leave_mid_body(url)
        hello = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        after = httpx.post(url + "/chat/completions", json=hello, timeout=30)
    assert answered, "GET /models got no answer within 5 s while a flood was relayed"
    assert after.status_code == 200 and after.json() == _ANSWER
    assert all(s < _TIMEOUT + 5 for s in lasted.values()), lasted
    assert proxy.peak_mb < 1024, f"peak {proxy.peak_mb:.0f} MB"
    assert proxy.code == 0, proxy.output
    assert "Traceback" not in proxy.output
    assert f"slow answer: not complete after {_TIMEOUT:g}s" in proxy.output  # the drip
    assert "answers too large to judge" in proxy.output  # the floods: nothing judged of them


def test_a_client_that_leaves_mid_flood_lets_the_upstream_go(tmp_path: Path) -> None:
    hostile = _Hostile()
    with (
        raw_server(hostile) as upstream,
        proxy_process(upstream.base_url, tmp_path, "--timeout", "60") as proxy,
    ):
        url = proxy.url()
        with (
            httpx.Client(timeout=10) as client,
            client.stream("POST", url + "/chat/completions", json=_ask("events")) as answer,
        ):
            read = 0
            for chunk in answer.iter_raw():
                read += len(chunk)
                if read > 1 << 20:
                    break
        assert hostile.ended["events"].wait(5), "the proxy still reads an answer nobody reads"
    assert proxy.code == 0 and "Traceback" not in proxy.output, proxy.output
    assert "0 turns judged" in proxy.output  # the client's own cut: not judged


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_proxy_waits_for_an_upstream_started_after_it(tmp_path: Path) -> None:
    port = _free_port()
    upstream = f"http://127.0.0.1:{port}/v1"
    with proxy_process(upstream, tmp_path, "--wait-for-server", "60") as proxy:
        proxy.line_with(f"waiting up to 60s for {upstream}/models to answer 200")
        with serve_in_thread("fixed", port=port):
            url = proxy.url()
            ask = {"model": "m", "messages": [{"role": "user", "content": "Hello."}]}
            answer = httpx.post(url + "/chat/completions", json=ask, timeout=30)
    assert answer.status_code == 200
    assert proxy.code == 0, proxy.output
    assert "1 turns judged in 1 sessions, 0 findings" in proxy.output


def test_an_upstream_without_v1_is_named_on_its_first_404(tmp_path: Path) -> None:
    with serve_in_thread("fixed") as served:
        root = served.removesuffix("/v1")
        with proxy_process(root, tmp_path) as proxy:
            url = proxy.url()
            ask = {"model": "m", "messages": [{"role": "user", "content": "Hello."}]}
            for _ in range(2):
                assert httpx.post(url + "/chat/completions", json=ask).status_code == 404
            line = proxy.line_with("answered 404")
    assert f"the base URL probably lacks /v1: try {root}/v1" in line
    assert proxy.output.count("answered 404") == 1
