"""What agentfuzz relies on inside vcrpy, pinned below its next major: this fails loudly if a
vcrpy release moves any of it.

``load_cassette`` fills a cassette itself (vcrpy's loader treats a broken file as empty) and
sets the private state vcrpy's own ``Cassette._load`` leaves; the tape transport reads
``play_counts``, ``rewound``, ``write_protected`` and ``find_requests_with_most_matches``.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from vcr.cassette import Cassette

from agentfuzz.observation import Exchange
from agentfuzz.transport.cassette import (
    interaction_of,
    load_cassette,
    metadata,
    new_cassette,
    save_cassette,
)

STATE = ("_old_interactions", "_loaded_count", "_metadata", "dirty", "rewound")


def _saved(path: Path) -> Path:
    cassette = new_cassette(path)
    exchange = Exchange(
        "http://127.0.0.1:9/v1/chat/completions",
        {"model": "m", "messages": []},
        False,
        200,
        "application/json",
        '{"ok": true}',
        reason="OK",
        headers=(("content-type", "application/json"),),
        raw=b'{"ok": true}',
    )
    interaction = interaction_of(exchange)
    assert interaction is not None
    cassette.append(*interaction)
    save_cassette(cassette, {"agentfuzz": {"turns": [{}]}})
    return path


def test_our_loader_leaves_the_state_vcrpys_own_loader_leaves(tmp_path: Path) -> None:
    path = _saved(tmp_path / "c.yaml")
    theirs = Cassette.load(path=str(path), record_mode="none")
    ours = load_cassette(path)
    for name in STATE:
        assert hasattr(theirs, name), f"vcrpy's Cassette has no {name} any more"
        mine, yours = getattr(ours, name), getattr(theirs, name)
        if name == "_old_interactions":
            mine, yours = len(mine), len(yours)
        assert mine == yours, name
    assert len(ours.data) == len(theirs.data) == 1
    assert metadata(ours) == metadata(theirs) == {"turns": [{}]}


def test_the_tape_reads_what_vcrpy_still_offers(tmp_path: Path) -> None:
    cassette = load_cassette(_saved(tmp_path / "c.yaml"))
    assert cassette.write_protected and cassette.rewound
    assert sum(cassette.play_counts.values()) == 0
    request = cassette.data[0][0]
    assert cassette.find_requests_with_most_matches(request)
    assert httpx.URL(request.uri).path == "/v1/chat/completions"
