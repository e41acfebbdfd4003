"""Regression test for an agentfuzz finding of ``stream_divergence``.

streamed and non-streamed answers to the same request differ (shape): stream gave text, non-
stream gave nothing

Two modes:

- offline (plain ``pytest``): replays the failing exchange recorded in ``cassette.yaml``
  through agentfuzz's client pipeline and asserts the same fault (``SIGNATURE``) still
  shows. It documents the bug and passes in CI, without a server or network;
- live (``pytest --agentfuzz-base-url http://host:8000/v1 [--agentfuzz-model NAME]``, or
  ``$AGENTFUZZ_BASE_URL``): re-sends the minimal request in ``repro.json`` and asserts
  ``stream_divergence`` no longer fires. It fails while the server has the bug and passes once
  fixed.
"""

import os
from pathlib import Path

import pytest

from agentfuzz import replay_bundle, resend_bundle

HERE = Path(__file__).parent
ORACLE = "stream_divergence"
SIGNATURE = "stream_divergence:shape"


def test_repro(request: pytest.FixtureRequest) -> None:
    base_url = request.config.getoption("agentfuzz_base_url", default=None)
    base_url = base_url or os.environ.get("AGENTFUZZ_BASE_URL")
    if not base_url:
        fired = {v.signature for v in replay_bundle(HERE)}
        assert SIGNATURE in fired, "the recorded exchange no longer shows the bug"
        return
    model = request.config.getoption("agentfuzz_model", default=None)
    found = [v for v in resend_bundle(HERE, base_url, model) if v.oracle == ORACLE]
    assert not found, f"{ORACLE} still fires: {found[0].message}"
