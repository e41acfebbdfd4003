"""Cassettes: vcrpy's format written through a tee transport, read strictly, replayed in pieces."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest

from agentfuzz.wire.transport.cassette import (
    CassetteError,
    Interaction,
    NotInCassette,
    RecordingTransport,
    ReplayTransport,
    load_cassette,
    metadata,
    new_cassette,
    save_cassette,
    split_at_random,
)
from agentfuzz.wire.transport.live import LiveTransport

SSE = b'data: {"a": 1}\n\ndata: {"b": "\xc3\xa9"}\n\ndata: [DONE]\n\n'


def _server(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    if body.get("stream"):
        headers = {"content-type": "text/event-stream", "set-cookie": "session=SECRET"}
        return httpx.Response(200, headers=headers, content=SSE)
    return httpx.Response(200, json={"echo": body["n"]}, headers={"set-cookie": "s=SECRET"})


def _record(tmp_path: Path, *bodies: dict[str, object]) -> Path:
    kept: list[Interaction] = []
    recorder = RecordingTransport(kept.append, httpx.MockTransport(_server))
    with LiveTransport("http://h/v1", api_key="sk-SECRET", transport=recorder) as live:
        for body in bodies:
            live.send("/chat/completions", body, bool(body.get("stream")))
    path = tmp_path / "c.yaml"
    cassette = new_cassette(path)
    for interaction in kept:
        cassette.append(*interaction)
    save_cassette(cassette, {"agentfuzz": {"note": "hi"}})
    return path


def test_a_recorded_cassette_keeps_bodies_and_drops_secrets(tmp_path: Path) -> None:
    path = _record(tmp_path, {"n": 1}, {"n": 2, "stream": True})
    text = path.read_text()
    assert "SECRET" not in text
    assert "authorization" not in text.lower() and "set-cookie" not in text.lower()
    assert '"n": 1' in text
    # The SSE body is written as a readable block, one event per line.
    assert 'data: {"b": "é"}' in text
    cassette = load_cassette(path)
    assert len(cassette.data) == 2
    assert metadata(cassette) == {"note": "hi"}


def test_replay_matches_json_bodies_whatever_their_key_order(tmp_path: Path) -> None:
    path = _record(tmp_path, {"n": 1, "m": "x"})
    replay = ReplayTransport(load_cassette(path))
    with LiveTransport("http://elsewhere:1/v1", transport=replay) as live:
        exchange = live.send("/chat/completions", {"m": "x", "n": 1}, False)
    assert json.loads(exchange.body) == {"echo": 1}


def test_repeated_requests_replay_their_answers_in_recorded_order(tmp_path: Path) -> None:
    calls = iter(range(10))

    def counting(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"call": next(calls)})

    kept: list[Interaction] = []
    recorder = RecordingTransport(kept.append, httpx.MockTransport(counting))
    with LiveTransport("http://h/v1", transport=recorder) as live:
        for _ in range(3):
            live.send("/chat/completions", {"same": True}, False)
    cassette = new_cassette(tmp_path / "r.yaml")
    for interaction in kept:
        cassette.append(*interaction)
    save_cassette(cassette, {})
    replay = ReplayTransport(load_cassette(tmp_path / "r.yaml"))
    with LiveTransport("http://h/v1", transport=replay) as live:
        seen = [
            json.loads(live.send("/chat/completions", {"same": True}, False).body) for _ in range(3)
        ]
        assert seen == [{"call": 0}, {"call": 1}, {"call": 2}]
        with pytest.raises(NotInCassette, match="already played"):
            live.send("/chat/completions", {"same": True}, False)


def test_a_request_not_in_the_cassette_names_the_first_difference(tmp_path: Path) -> None:
    path = _record(tmp_path, {"n": 1, "messages": [{"role": "user", "content": "hi"}]})
    replay = ReplayTransport(load_cassette(path))
    asked = {"n": 1, "messages": [{"role": "user", "content": "bye"}]}
    with (
        LiveTransport("http://h/v1", transport=replay) as live,
        pytest.raises(NotInCassette) as caught,
    ):
        live.send("/chat/completions", asked, False)
    message = str(caught.value)
    assert "c.yaml" in message and "/v1/chat/completions" in message
    assert 'body.messages[0].content is "bye", recorded "hi"' in message
    assert "\n" not in message


def test_streamed_bodies_replay_in_random_pieces_that_decode_alike(tmp_path: Path) -> None:
    path = _record(tmp_path, {"n": 3, "stream": True})
    events = []
    for seed in (None, 0, 1, 2):
        rng = None if seed is None else random.Random(seed)
        replay = ReplayTransport(load_cassette(path), rng)
        with LiveTransport("http://h/v1", transport=replay) as live:
            events.append(live.send("/chat/completions", {"n": 3, "stream": True}, True).events)
    assert all(e == events[0] for e in events)
    assert [e.data for e in events[0]] == ['{"a": 1}', '{"b": "é"}', "[DONE]"]


def test_split_at_random_cuts_anywhere_and_loses_nothing() -> None:
    body = SSE * 20
    splits = [split_at_random(body, random.Random(seed)) for seed in range(10)]
    assert all(b"".join(pieces) == body for pieces in splits)
    assert all(len(pieces) > 10 for pieces in splits)
    # Some cut falls inside the two bytes of "é": the decoder must carry it over.
    assert any(p.endswith(b"\xc3") for pieces in splits for p in pieces)
    assert split_at_random(body, random.Random(3)) == splits[3]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("interactions: [\n  - {", "not valid YAML"),
        ("- 1\n- 2\n", "not a cassette"),
        ("version: 1\n", "not a cassette"),
        ("interactions:\n- request: {method: POST}\n", "interaction 1 lacks"),
        ("", "not a cassette"),
    ],
)
def test_unusable_files_are_one_line_errors_naming_the_file(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_or_binary_file_is_a_cassette_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot read"):
        load_cassette(tmp_path / "absent.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CassetteError, match="cannot read"):
        load_cassette(binary)
