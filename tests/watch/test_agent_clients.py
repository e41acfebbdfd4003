"""Real agent clients through ``agentfuzz proxy``: every seed bug is caught in a real loop, and
the fixed profiles stay silent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import proxied

agent_clients = pytest.importorskip("agent_clients")

SEEDS = agent_clients.CATCHES
Loop = Callable[[str], object]


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


LOOPS, FIXED = agent_clients.LOOPS, agent_clients.FIXED


@pytest.mark.parametrize("profile", FIXED)
def test_fixed_profiles_stay_silent_under_every_client(tmp_path: Path, profile: str) -> None:
    for name, loop in LOOPS.items():
        with proxied(profile, tmp_path / name) as (url, watch):
            did = loop(url)
        assert did.error is None and did.tools, did.line(name)
        assert watch.judged == did.requests, name
        assert watch.caught == [], (name, [c.violation.signature for c in watch.caught])
