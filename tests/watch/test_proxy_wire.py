"""What the proxy does on the wire: the client reads exactly what it would read without it, the
key and the user's headers go upstream and nowhere else, an answer the upstream breaks off is
broken off for the client too (and judged), and one the client leaves is not judged."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from agentfuzz.reference import serve_in_thread
from agentfuzz.runs.watch import Watch, watching
from agentfuzz.wire.transport.relay import Forwarded, relay_app, serving_relay

from .conftest import Quiet, one_chunk_then, proxied, serving

# Only the clock differs between two fresh reference servers given the same requests.
_CLOCK = re.compile(rb'"created(_at)?": ?\d+')


def _posted(base_url: str, bodies: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    """Each body posted in turn, and the bytes the client read of each answer."""
    got = []
    with httpx.Client(timeout=30) as client:
        for path, body in bodies:
            with client.stream("POST", base_url + path, json=body) as answer:
                got.append(_CLOCK.sub(b"", b"".join(answer.iter_raw())))
    return got


def test_the_client_reads_byte_identical_answers_with_and_without_the_proxy(
    tmp_path: Path,
) -> None:
    agent_clients = pytest.importorskip("agent_clients")
    # A real session first, recorded by the proxy: its requests are what the client sends.
    with proxied("vllm-responses-regen", tmp_path / "out", tmp_path / "rec") as (url, _):
        agent_clients.sdk_loop(url, "responses", True)
        agent_clients.sdk_loop(url, "chat", True)
        agent_clients.sdk_loop(url, "chat", False)
    bodies = []
    for session in sorted((tmp_path / "rec").glob("session-*/session.json")):
        for turn in json.loads(session.read_text())["turns"]:
            path = "/responses" if turn["url"].endswith("/responses") else "/chat/completions"
            bodies.append((path, turn["request"]))
    assert len(bodies) >= 10
    with serve_in_thread("vllm-responses-regen") as upstream:
        direct = _posted(upstream, bodies)
    with proxied("vllm-responses-regen", tmp_path / "again") as (url, _):
        through = _posted(url, bodies)
    assert through == direct
    assert any(b"event: response.completed" in answer for answer in through)


_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
}


@contextmanager
def _watched(upstream: str, out: Path, record: Path | None = None) -> Iterator[tuple[str, Watch]]:
    watch = Watch(upstream, out, record, say=lambda _: None)
    try:
        with watching(upstream, watch) as url:
            yield url, watch
    finally:
        watch.close()


def test_the_key_and_the_users_headers_reach_the_upstream_and_no_file(tmp_path: Path) -> None:
    heard: list[dict[str, str]] = []

    class Handler(Quiet):
        def do_POST(self) -> None:
            heard.append({k.lower(): v for k, v in self.headers.items()})
            self.body()
            data = json.dumps(_ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Set-Cookie", "session=COOKIE-SECRET")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with (
        serving(Handler) as upstream,
        _watched(upstream, tmp_path / "out", tmp_path / "rec") as (
            url,
            watch,
        ),
    ):
        client = openai.OpenAI(
            base_url=url, api_key="sk-KEY-SECRET", default_headers={"X-Team": "TEAM-SECRET"}
        )
        answer = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    assert answer.choices[0].message.content == "ok"
    assert heard[0]["authorization"] == "Bearer sk-KEY-SECRET"
    assert heard[0]["x-team"] == "TEAM-SECRET"
    # The client's own headers, nothing of the proxy's HTTP library's in their place.
    assert heard[0]["user-agent"].startswith("OpenAI/"), heard[0]
    assert watch.judged == 1
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the session was recorded"
    for path in written:
        text = path.read_text(errors="replace")
        for secret in ("sk-KEY-SECRET", "COOKIE-SECRET"):
            assert secret not in text, path


def test_an_answer_the_upstream_breaks_off_is_broken_off_for_the_client_and_judged(
    tmp_path: Path,
) -> None:
    Handler = one_chunk_then(lambda: None)  # the connection just ends

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with (
        serving(Handler) as upstream,
        _watched(upstream, tmp_path / "out") as (url, watch),
        httpx.Client() as client,
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("POST", url + "/chat/completions", json=body) as answer,
    ):
        for _ in answer.iter_raw():
            pass
    assert watch.judged == 1
    caught = next(c for c in watch.caught if c.violation.oracle == "error")
    assert caught.violation.signature.startswith("error:transport"), watch.caught
    recorded = json.loads((caught.folder / "repro.json").read_text())
    assert recorded["observed"]["failure"]


def test_an_answer_the_client_leaves_midway_is_not_judged(tmp_path: Path) -> None:
    release = threading.Event()

    Handler = one_chunk_then(lambda: release.wait(30))

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    try:
        with serving(Handler) as upstream, _watched(upstream, tmp_path / "out") as (url, watch):
            with (
                httpx.Client() as client,
                client.stream("POST", url + "/chat/completions", json=body) as answer,
            ):
                first = next(answer.iter_raw())
            assert first.startswith(b"data: ")
            release.set()
    finally:
        release.set()
    assert watch.exchanges == 1
    assert watch.judged == 0 and watch.caught == []


_FINISH = json.dumps(
    {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
)
_ERROR = json.dumps({"error": {"message": "<|tool_call_begin|>", "code": 500}})


@pytest.mark.parametrize("last", [(_FINISH, "[DONE]"), (_ERROR,)], ids=["done", "error-frame"])
def test_a_client_that_hangs_up_at_the_end_had_the_whole_answer(
    tmp_path: Path, last: tuple[str, ...]
) -> None:
    # The openai SDK closes the connection once it reads ``[DONE]`` or an error frame, often
    # before the upstream's end of the chunked body reaches the proxy: that answer was whole.
    release, heard = threading.Event(), threading.Event()
    kept: list[Forwarded] = []

    def seen(forwarded: Forwarded) -> None:
        kept.append(forwarded)
        heard.set()

    Handler = one_chunk_then(lambda: release.wait(30), text="hello", last=last)

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    try:
        with serving(Handler) as upstream, serving_relay(relay_app(upstream, seen)) as url:
            with (
                httpx.Client() as client,
                client.stream("POST", url + "/chat/completions", json=body) as answer,
            ):
                lines = answer.iter_lines()
                while next(lines) != f"data: {last[-1]}":
                    pass
            # The proxy hears the client hang up while the upstream still holds its end.
            heard.wait(10)
            release.set()
            assert heard.wait(10)
    finally:
        release.set()
    [forwarded] = kept
    assert not forwarded.client_left and forwarded.failure is None
    assert forwarded.raw.endswith(f"data: {last[-1]}\n\n".encode())


def test_an_upstream_too_slow_for_the_proxys_timeout_is_a_slow_answer_not_a_fault(
    tmp_path: Path,
) -> None:
    release = threading.Event()

    # A model still thinking, past the proxy's patience.
    Handler = one_chunk_then(lambda: release.wait(30), text="thinking")

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    try:
        with serving(Handler) as upstream:
            watch = Watch(upstream, tmp_path, say=lambda _: None, timeout=0.5)
            try:
                with (
                    watching(upstream, watch) as url,
                    httpx.Client() as client,
                    pytest.raises(httpx.RemoteProtocolError),
                    client.stream("POST", url + "/chat/completions", json=body) as answer,
                ):
                    for _ in answer.iter_raw():
                        pass
            finally:
                release.set()
                watch.close()
    finally:
        release.set()
    assert watch.judged == 1
    assert watch.caught == []
    [session] = watch.sessions.all
    assert session.turns[0].observation.exchange.slow


def test_the_upstream_gets_the_clients_headers_and_no_others(tmp_path: Path) -> None:
    import http.client

    heard: list[dict[str, str]] = []

    class Handler(Quiet):
        def do_POST(self) -> None:
            heard.append({k.lower(): v for k, v in self.headers.items()})
            self.body()
            self.send_json(200, _ANSWER)

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with serving(Handler) as upstream, _watched(upstream, tmp_path) as (url, _):
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("POST", "/v1/chat/completions", body, {"X-Only": "this"})
        assert connection.getresponse().read() == json.dumps(_ANSWER).encode()
        connection.close()
    # http.client asks for no compression and names no agent: neither may the proxy.
    assert heard[0]["accept-encoding"] == "identity"
    assert "user-agent" not in heard[0] and heard[0]["x-only"] == "this"


@pytest.mark.parametrize(
    ("raw", "whole"),
    [
        (b'{"id": "r", "output": []}', True),
        (b'{"id": "r", "output": [', False),
        (b'data: {"choices": []}\n\ndata: [DONE]\n\n', True),
        (b'data: {"choices": []}\n\ndata: [DO', False),
        (b'data: {"choices": []}\n\n', False),
        (b'event: response.completed\ndata: {"type": "response.completed"}\n\n', True),
        (b'event: response.completed\r\ndata: {"type": "response.completed"}\r\n\r\n', True),
        (b'event: response.completed\ndata: {"type": "response.compl', False),
        (b'data: {"type": "response.output_text.delta"}\n\n', False),
        (b'data: {"choices": []}\n\ndata: {"error": {"message": "m"}}\n\n', True),
        (b'event: error\ndata: {"type": "error", "message": "m"}\n\n', True),
        (b"", False),
    ],
)
def test_a_whole_answer_is_told_from_one_cut_short(raw: bytes, whole: bool) -> None:
    from agentfuzz.wire.transport._answer import whole as _whole

    assert _whole(raw) is whole
