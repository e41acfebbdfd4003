"""Repro bundles on disk: ``OUT/<oracle>-<hash>/`` holding

- ``repro.json``: the failing request, what came back, the oracle and the reproduction rate;
- ``repro.sh``: the same request as ``curl``;
- ``cassette.yaml`` + ``test_repro.py``: the failing exchange as recorded, and a pytest file that
  replays it offline (the recorded oracle still fires: documents the bug) or, with
  ``--agentfuzz-base-url``, re-sends it live (the oracle no longer fires: the regression test);
- ``session.json``, for a failure a session found: every request and answer of that session.

A bundle is written the moment a failure is first seen and rewritten, atomically, each time a
smaller example fails the same way, so an interrupted run loses nothing. The API key never
reaches a bundle: only the request body is stored, and ``repro.sh`` reads ``$OPENAI_API_KEY``.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz._files import write_atomically
from agentfuzz.cassette_codec import Recorded, write_cassette
from agentfuzz.history import Case
from agentfuzz.observation import Exchange, Observation, Violation
from agentfuzz.session import Turn

__all__ = ["Repro", "bundle_dir", "observed_summary", "write_bundle"]


@dataclass(frozen=True)
class Repro:
    """Everything a bundle holds: one failing request and what was seen when it was sent."""

    url: str
    request: dict[str, Any] | str
    case: Case
    violation: Violation
    observed: dict[str, Any]
    reproduced: str = "pending"
    transcript: tuple[Turn, ...] = field(default=())
    # The failing turn as observed: its exchange carries the recording the cassette is made of.
    observation: Observation | None = None
    # The run that found it (``config.found_by``), and a ``reduce`` step when one cut it down.
    found_by: dict[str, Any] | None = None


def bundle_dir(out: Path, violation: Violation) -> Path:
    """The bundle folder of a distinct failure: the same for the same oracle and signature."""
    digest = hashlib.sha1("\0".join(violation.key).encode()).hexdigest()[:8]
    return out / f"{violation.oracle}-{digest}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def observed_summary(obs: Observation) -> dict[str, Any]:
    """What a maintainer needs to see of the answer, clipped so a bundle stays readable."""
    ex = obs.exchange
    return {
        "status": ex.status,
        "content_type": ex.content_type,
        "failure": ex.failure,
        "text": _clip(obs.text, 2000),
        "reasoning": _clip(obs.reasoning, 500),
        "tool_calls": [
            {
                "index": c.index,
                "id": c.id,
                "call_id": c.call_id,
                "name": c.name,
                "namespace": c.namespace,
                "arguments": _clip(c.arguments, 500),
            }
            for c in obs.tool_calls
        ],
        "finish_reason": obs.finish_reason,
        "response_status": obs.status,
        "errors": [{"kind": k, "detail": _clip(d, 500)} for k, d in obs.errors],
        "body": _clip(ex.body, 2000) if not ex.stream else None,
        "events": [_clip(e.data, 300) for e in ex.events[:200]] if ex.stream else None,
    }


def _curl(url: str, request: dict[str, Any] | str, stream: bool) -> str:
    flags = "-sS -N" if stream else "-sS"
    head = (
        "#!/bin/sh\n# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.\n"
    )
    command = (
        f"curl {flags} -X POST {shlex.quote(url)} \\\n"
        "  -H 'Content-Type: application/json' \\\n"
        '  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \\\n'
        "  --data-binary @-"
    )
    if isinstance(request, str):
        # A malformed body, byte for byte: printf adds no newline, a here-document would.
        return f"{head}printf %s {shlex.quote(request)} | {command}\n"
    body = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    return f"{head}{command} <<'AGENTFUZZ_JSON'\n{body}\nAGENTFUZZ_JSON\n"


def write_bundle(out: Path, repro: Repro) -> Path:
    """Write (or overwrite) the bundle for ``repro`` and return its folder."""
    folder = bundle_dir(out, repro.violation)
    folder.mkdir(parents=True, exist_ok=True)
    v = repro.violation
    doc = {
        "url": repro.url,
        "request": repro.request,
        "oracle": v.oracle,
        "message": v.message,
        "observed": repro.observed,
        "reproduced": repro.reproduced,
        "signature": v.signature,
        "evidence": v.evidence,
        "api": repro.case.api,
        "stream": repro.case.stream,
        "size": repro.case.history.size,
        "case": repro.case.model_dump(mode="json"),
        "found_by": repro.found_by,
    }
    write_atomically(folder / "repro.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    write_atomically(folder / "repro.sh", _curl(repro.url, repro.request, repro.case.stream), 0o755)
    obs = repro.observation
    if obs is not None and obs.exchange.status is not None:
        about = {"target": repro.url, "kind": "repro", "api": repro.case.api}
        write_cassette(folder / "cassette.yaml", [Recorded(obs, repro.case, (v,))], about)
        write_atomically(folder / "test_repro.py", _test_file(v))
    if repro.transcript:
        turns = {"turns": [_turn(t) for t in repro.transcript]}
        write_atomically(
            folder / "session.json", json.dumps(turns, indent=2, ensure_ascii=False) + "\n"
        )
    return folder


def _answer(ex: Exchange) -> dict[str, Any]:
    answer: dict[str, Any] = {"status": ex.status, "content_type": ex.content_type}
    if ex.stream:
        answer["events"] = [{"event": e.event, "data": e.data} for e in ex.events]
    else:
        answer["body"] = ex.body
    if ex.failure:
        answer["failure"] = ex.failure
    return answer


def _turn(turn: Turn) -> dict[str, Any]:
    """One session turn as sent and as answered, whole: the transcript is the evidence."""
    ex = turn.observation.exchange
    origin = turn.case.session
    return {
        "turn": turn.number,
        "url": ex.url,
        "request": ex.request,
        "response": _answer(ex),
        "untouched": origin.untouched if origin else None,
        "violations": [{"oracle": v.oracle, "message": v.message} for v in turn.violations],
    }


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


def _test_file(v: Violation) -> str:
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
