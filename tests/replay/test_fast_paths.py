"""The short paths that make replay cheap give what the general ones give.

YAML documents are built without PyYAML's generic constructor, cassettes are filled without
vcrpy's copies, the next recorded request is matched by its bytes, and bodies come in larger
random pieces: each is checked here against the slow path it replaces.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from vcr.cassette import Cassette

from agentfuzz.tape.replay import cassette_files
from agentfuzz.wire.transport._cassette_format import _config, _Parsed, _ReadableYaml
from agentfuzz.wire.transport._cassette_format import vcr_request as _vcr_request
from agentfuzz.wire.transport._yaml import SafeLoader
from agentfuzz.wire.transport.cassette import (
    CassetteTransport,
    ReplayTransport,
    interaction_of,
    load_cassette,
    new_cassette,
    save_cassette,
    split_at_random,
)
from agentfuzz.wire.transport.live import LiveTransport

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = cassette_files([ROOT / "cassettes"])

DOCUMENTS = [
    "a: 1\nb: [x, 2.5, true, null, ~, 0x1f, 1_000]\nc: {d: '3', e: \"\"}\n",
    "when: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\nraw: !!binary aGk=\n",
    "base: &b {k: 1, l: [1, 2]}\nother: *b\n",
    "base: &b {k: 1}\nmerged:\n  <<: *b\n  m: 2\n",
    "= : value-key\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}]\n",
    "1: int key\n2.5: float key\nnull: null key\ntrue: bool key\n",
    "text: |+\n  event: x\n  data: {}\n\n",
    "- &r [*r]\n",
    "plain\n",
    "",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_loader_builds_what_the_safe_loader_builds(text: str) -> None:
    ours = yaml.load(text, Loader=SafeLoader)
    theirs = yaml.load(text, Loader=yaml.SafeLoader)
    assert repr(ours) == repr(theirs)


def test_aliases_share_one_object_and_recursion_still_loads() -> None:
    doc = yaml.load("base: &b {k: [1]}\nother: *b\n", Loader=SafeLoader)
    assert doc["other"] is doc["base"]
    (looped,) = yaml.load("- &r [*r]\n", Loader=SafeLoader)
    assert looped[0] is looped


def test_the_loader_fails_where_the_safe_loader_fails() -> None:
    for text in ("? [1]\n: 2\n", "x: !custom 1\n"):
        with pytest.raises(yaml.constructor.ConstructorError):
            yaml.load(text, Loader=yaml.SafeLoader)
        with pytest.raises(yaml.constructor.ConstructorError):
            yaml.load(text, Loader=SafeLoader)


@pytest.mark.parametrize("path", COMMITTED[::4], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_cassettes_parse_alike(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=SafeLoader) == yaml.load(text, Loader=yaml.CSafeLoader)


def _state(cassette: Cassette) -> dict[str, Any]:
    """A cassette's state, requests by their content, vcrpy's configuration left out (the old
    load kept the parse-once serializer; both write through ``_ReadableYaml.serialize``)."""
    state: dict[str, Any] = {}
    for name, value in vars(cassette).items():
        if name in ("_serializer", "_persister"):
            continue
        if name in ("data", "_old_interactions", "_played_interactions"):
            state[name] = [(request._to_dict(), response) for request, response in value]
        elif not callable(value) and not isinstance(value, (list, tuple, type)):
            state[name] = value
    state["hooks"] = len(cassette._after_load_interaction), len(cassette._before_save_interaction)
    return state


def _vcrpy_load(path: Path, mode: str) -> Cassette:
    data = _ReadableYaml.deserialize(path.read_text(encoding="utf-8"))
    return Cassette.load(**(_config(path, mode) | {"serializer": _Parsed(data)}))


def _with_secrets(tmp_path: Path) -> Path:
    """A hand-made cassette the filters change: secret headers on both sides."""
    request = {
        "method": "POST",
        "uri": "http://h/v1/chat/completions",
        "body": '{"n": 1}',
        "headers": {"Authorization": ["Bearer sk-x"], "content-type": ["application/json"]},
    }
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Set-Cookie": ["s=1"], "content-type": ["application/json"]},
        "body": {"string": '{"ok": true}'},
    }
    plain = {**request, "headers": {"content-type": ["application/json"]}}
    doc = {
        "version": 1,
        "interactions": [
            {"request": request, "response": response},
            {"request": plain, "response": {**response, "headers": {}}},
        ],
        "metadata": {"agentfuzz": {"turns": []}},
    }
    path = tmp_path / "secrets.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_a_loaded_cassette_is_in_the_state_vcrpy_leaves_it(tmp_path: Path, mode: str) -> None:
    for path in [*COMMITTED[::8], _with_secrets(tmp_path)]:
        assert _state(load_cassette(path, mode)) == _state(_vcrpy_load(path, mode))
    filtered = load_cassette(_with_secrets(tmp_path), mode)
    request, response = filtered.data[0]
    assert "authorization" not in request.headers and "Set-Cookie" not in response["headers"]


def _interaction(n: int, answer: int) -> tuple[httpx.Request, dict[str, Any]]:
    content = json.dumps({"n": n}).encode()
    request = httpx.Request("POST", "http://h/v1/chat/completions", content=content)
    body = json.dumps({"answer": answer, "padding": "x" * 400}).encode()
    return request, {
        "status": {"code": 200, "message": "OK"},
        "headers": {},
        "body": {"string": body},
    }


def _tape(tmp_path: Path, pairs: list[tuple[int, int]]) -> Path:
    cassette = new_cassette(tmp_path / "t.yaml")
    for n, answer in pairs:
        request, response = _interaction(n, answer)
        cassette.append(_vcr_request(request), response)
    save_cassette(cassette, {})
    return tmp_path / "t.yaml"


def _ask(transport: httpx.BaseTransport, n: int) -> Any:
    request, _ = _interaction(n, 0)
    response = transport.handle_request(request)
    return json.loads(b"".join(response.stream))["answer"]  # type: ignore[arg-type]


def test_requests_out_of_recorded_order_still_get_their_answers(tmp_path: Path) -> None:
    cassette = load_cassette(_tape(tmp_path, [(1, 10), (2, 20), (1, 11)]))
    replay = ReplayTransport(cassette)
    assert [_ask(replay, n) for n in (2, 1, 1)] == [20, 10, 11]
    cassette.rewind()
    assert [_ask(replay, n) for n in (1, 1, 2)] == [10, 11, 20]


def test_a_played_exchange_carries_its_recording(tmp_path: Path) -> None:
    tape = CassetteTransport(load_cassette(_tape(tmp_path, [(1, 10)])))
    with LiveTransport("http://h/v1", transport=tape) as client:
        exchange = client.send("/chat/completions", {"n": 1}, stream=False)
    assert json.loads(exchange.raw)["answer"] == 10
    interaction = interaction_of(exchange)
    assert interaction is not None
    request, response = interaction
    assert (request.method, request.path, request.body) == (
        "POST",
        "/v1/chat/completions",
        b'{"n": 1}',
    )
    assert json.loads(response["body"]["string"])["answer"] == 10


def test_the_tape_reads_what_vcrpy_still_offers(tmp_path: Path) -> None:
    # What the tape relies on besides the loaded state above (vcrpy is pinned below 10 for it).
    cassette = load_cassette(_tape(tmp_path, [(1, 10)]))
    assert cassette.write_protected and cassette.rewound
    assert sum(cassette.play_counts.values()) == 0
    assert cassette.find_requests_with_most_matches(cassette.data[0][0])


def test_whole_bodies_come_in_one_piece(tmp_path: Path) -> None:
    path = _tape(tmp_path, [(1, 10)])
    request, _ = _interaction(1, 0)
    whole = ReplayTransport(load_cassette(path)).handle_request(request)
    assert len(list(whole.stream)) == 1  # type: ignore[arg-type]
    split = ReplayTransport(load_cassette(path), random.Random(0)).handle_request(request)
    assert len(list(split.stream)) > 1  # type: ignore[arg-type]


EVENT = b'data: {"type": "response.output_text.delta", "delta": "caf\xc3\xa9"}\r\n\r\n'


def test_pieces_are_larger_but_cuts_still_land_anywhere() -> None:
    body = EVENT * 200
    cuts: set[int] = set()
    sizes: list[int] = []
    for seed in range(20):
        pieces = split_at_random(body, random.Random(seed))
        assert b"".join(pieces) == body
        assert pieces == split_at_random(body, random.Random(seed))
        sizes += [len(p) for p in pieces]
        at = 0
        for piece in pieces[:-1]:
            at += len(piece)
            cuts.add(at % len(EVENT))
    # Every offset inside the event is cut at some seed: mid-"data:", mid-"é", inside "\r\n".
    assert cuts == set(range(len(EVENT)))
    assert max(sizes) <= 144 and min(sizes) >= 1
    # Fewer, larger pieces than the old 23-byte average: each piece costs the decoders a pass.
    assert 28 <= sum(sizes) / len(sizes) <= 40
