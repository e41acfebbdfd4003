"""What a bundle records of one failure: the ``Repro`` a run hands over, the answer clipped to
what a maintainer reads, and the requests related to the failing one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentfuzz.judge.session import Turn
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation


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
    # What was fuzzed: base URL, model, what /v1/models listed, the server's own word on itself.
    target: dict[str, Any] | None = None
    seen_on: tuple[str, ...] = ()
    reproduces_on: tuple[str, ...] = ()
    # ``validity.NEEDS`` codes: the rules the failure needs broken.
    needs: tuple[str, ...] = ()
    mechanism: dict[str, Any] | None = None
    # The server's own id shape that stops the failure (``explain``): the trigger is the ids.
    cleared_by: dict[str, Any] | None = None


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
        # How long the answer took: the time of the finding's test case in JUnit XML.
        "elapsed_s": round(ex.elapsed, 3),
    }


def related_requests(obs: Observation | None) -> list[dict[str, Any]]:
    """What a bundle records of the requests related to its failing one: for each, the
    relation, the URL, the exact body and whether it streamed (``repro.json``'s ``related``)."""
    if obs is None:
        return []
    return [
        {
            "relation": r.relation,
            "url": r.observation.exchange.url,
            "request": r.observation.exchange.request,
            "stream": r.observation.exchange.stream,
        }
        for r in obs.related
    ]
