"""Real agent clients through ``agentfuzz proxy``: every seed bug is caught in a real loop, and
the fixed profiles stay silent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import proxied

clients = pytest.importorskip("agent_clients")

Loop = Callable[[str], Any]


def _sdk(api: str, stream: bool, **kw: bool) -> Loop:
    return lambda url: clients.sdk_loop(url, api, stream, **kw)


def _agents(api: str, stream: bool) -> Loop:
    return lambda url: clients.agents_loop(url, api, stream)


# (seed profile, the client loop that meets it, the finding the proxy must write)
SEEDS = [
    # 000: Responses call ids rendered verbatim, imitated, the call dropped: an empty turn.
    ("vllm-kimi-k2", "sdk responses stream", _sdk("responses", True), "empty_turn"),
    ("vllm-kimi-k2", "agents responses stream", _agents("responses", True), "empty_turn"),
    # 001: a client that sanitises ids (Kimi Code CLI through LiteLLM): an error frame.
    (
        "exo-kimi-k2",
        "sdk chat stream, ids sanitised",
        _sdk("chat", True, sanitize_ids=True),
        "error:error_frame",
    ),
    # 002 and 003: response.completed re-mints the streamed ids.
    ("vllm-responses-regen", "sdk responses stream", _sdk("responses", True), "identity:"),
    ("vllm-responses-regen", "agents responses stream", _agents("responses", True), "identity:"),
    ("vllm-gpt-oss", "agents responses stream", _agents("responses", True), "identity:"),
    # 004: tools left out on a later turn: the raw call markup comes back as text.
    (
        "no-tools-leak",
        "sdk chat, tools on the first turn only",
        _sdk("chat", False, tools_on_first_only=True),
        "leaked_markup:",
    ),
]


@pytest.mark.parametrize(
    ("profile", "client", "loop", "signature"), SEEDS, ids=[f"{s[0]}-{s[1]}" for s in SEEDS]
)
def test_each_seed_bug_is_caught_in_a_real_agent_loop(
    tmp_path: Path, profile: str, client: str, loop: Loop, signature: str
) -> None:
    with proxied(profile, tmp_path / "out") as (url, watch):
        did = loop(url)
    assert did.requests >= 2, did
    caught = [c for c in watch.caught if c.violation.signature.startswith(signature)]
    assert caught, f"{client} on {profile}: {did.line(client)}; caught {watch.caught}"
    first = caught[0]
    assert first.turn >= 1 and (first.folder / "repro.json").is_file()
    # The whole session up to the failing turn, as JSON and as a cassette.
    assert (first.folder / "session.json").is_file() and (first.folder / "session.yaml").is_file()


LOOPS = {
    "sdk chat": _sdk("chat", False),
    "sdk chat stream": _sdk("chat", True),
    "sdk responses": _sdk("responses", False),
    "sdk responses stream": _sdk("responses", True),
    "agents chat": _agents("chat", False),
    "agents chat stream": _agents("chat", True),
    "agents responses": _agents("responses", False),
    "agents responses stream": _agents("responses", True),
}
FIXED = ["fixed", "vllm-kimi-k2-fixed", "exo-kimi-k2-fixed", "vllm-gpt-oss-fixed"]


@pytest.mark.parametrize("profile", FIXED)
def test_fixed_profiles_stay_silent_under_every_client(tmp_path: Path, profile: str) -> None:
    for name, loop in LOOPS.items():
        with proxied(profile, tmp_path / name) as (url, watch):
            did = loop(url)
        assert did.error is None and did.tools, did.line(name)
        assert watch.judged == did.requests, name
        assert watch.caught == [], (name, [c.violation.signature for c in watch.caught])
    sanitising = _sdk("chat", True, sanitize_ids=True)
    with proxied(profile, tmp_path / "sanitised") as (url, watch):
        sanitising(url)
    assert watch.caught == []
