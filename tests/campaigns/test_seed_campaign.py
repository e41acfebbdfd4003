"""Seeded campaigns against the reference server's ``vllm-kimi-k2`` profile, one per shard.

Offline (``pytest tests/campaigns``, or ``-n 2``) each shard replays its own recorded campaign
from ``cassettes/test_seed_campaign/test_kimi_k2_campaign-<shard>/``: no server, no network.

To re-record them (after a change to the generator, the profile or the reference server, which
makes the replay fail with "request not in cassette …"):

    agentfuzz serve vllm-kimi-k2 --port 8011 &
    pytest tests/campaigns --agentfuzz-base-url http://127.0.0.1:8011/v1 \\
        --agentfuzz-record-mode all

``all`` records every part anew; ``once`` only records a shard whose folder is empty.
"""

from __future__ import annotations

import json

import pytest

from agentfuzz.pytest.campaign import CampaignRunner


@pytest.mark.parametrize("shard", [0, 1])
def test_kimi_k2_campaign(agentfuzz_campaign: CampaignRunner, shard: int) -> None:
    """Each shard's campaign finds seed 000's empty turn and writes its repro bundle."""
    report = agentfuzz_campaign(
        seed=shard,
        modes=(("responses", True),),
        kinds=("synthetic", "session"),
        max_examples=8,
    )
    empty = [f for f in report.findings if f.violation.oracle == "empty_turn"]
    assert empty, [f.violation.key for f in report.findings]
    repro = json.loads((empty[0].bundle / "repro.json").read_text())
    assert repro["oracle"] == "empty_turn"
    assert repro["url"].endswith("/v1/responses")
