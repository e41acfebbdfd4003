"""``test_repro.py``: the pytest file a bundle carries, which replays the recorded exchange
offline (the oracle still fires) or re-sends the request live (the oracle must not fire)."""

from __future__ import annotations

import json
import textwrap

from agentfuzz.model.observation import Violation

_TEST_FILE = '''\
"""Regression test for an agentfuzz finding of ``{oracle}``.

{message}

Two modes:

- offline (plain ``pytest``): replays the failing exchange recorded in ``cassette.yaml``
  through agentfuzz's client pipeline and asserts the same fault (``SIGNATURE``) still
  shows. It documents the bug and passes in CI, without a server or network;
- live (``pytest --agentfuzz-base-url http://host:8000/v1 [--agentfuzz-model NAME]``, or
  ``$AGENTFUZZ_BASE_URL``): re-sends the minimal request in ``repro.json`` and asserts
  ``{oracle}`` no longer fires. It fails while the server has the bug and passes once
  fixed.
"""

import os
from pathlib import Path

import pytest

from agentfuzz import replay_bundle, resend_bundle

HERE = Path(__file__).parent
ORACLE = {oracle_literal}
SIGNATURE = {signature_literal}


def test_repro(request: pytest.FixtureRequest) -> None:
    base_url = request.config.getoption("agentfuzz_base_url", default=None)
    base_url = base_url or os.environ.get("AGENTFUZZ_BASE_URL")
    if not base_url:
        fired = {{v.signature for v in replay_bundle(HERE)}}
        assert SIGNATURE in fired, "the recorded exchange no longer shows the bug"
        return
    model = request.config.getoption("agentfuzz_model", default=None)
    found = [v for v in resend_bundle(HERE, base_url, model) if v.oracle == ORACLE]
    assert not found, f"{{ORACLE}} still fires: {{found[0].message}}"
'''


def regression_test(v: Violation) -> str:
    """The text of ``test_repro.py`` for a bundle whose failure is ``v``."""
    # The message goes into a docstring: no quotes or backslashes, wrapped to the line limit.
    message = " ".join(v.message.split()).replace('"', "'").replace("\\", "/")
    wrapped = textwrap.fill(message[:300], 96, break_long_words=True)
    # json.dumps writes the double-quoted literal the formatter would.
    return _TEST_FILE.format(
        oracle=v.oracle,
        oracle_literal=json.dumps(v.oracle),
        signature_literal=json.dumps(v.signature),
        message=wrapped,
    )
