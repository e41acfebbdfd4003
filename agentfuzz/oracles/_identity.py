"""Oracles on streamed identity: ``identity`` (ids stay put), ``index_gap`` (indexes, ids exist)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import ItemSighting, Observation, Violation
from agentfuzz.oracles._registry import clip, register

__all__ = ["identity", "index_gap"]

_PHASE_EVENT = {
    "added": "response.output_item.added",
    "done": "response.output_item.done",
    "completed": "response.completed",
}
_FIELDS = ("type", "id", "call_id")


def _changes(index: int, sightings: list[ItemSighting]) -> Iterator[Violation]:
    """The first change of each identity field across one output item's sightings."""
    kind = sightings[0].type
    for field in _FIELDS:
        seen = [(s.phase, getattr(s, field)) for s in sightings if getattr(s, field) is not None]
        if not seen:
            continue
        first_phase, first = seen[0]
        for phase, value in seen[1:]:
            if value != first:
                yield Violation(
                    oracle="identity",
                    message=(
                        f"output {index} ({kind}) {field} changed between "
                        f"{_PHASE_EVENT[first_phase]} and {_PHASE_EVENT[phase]}"
                    ),
                    evidence=clip(f"{first} → {value}"),
                    signature=f"identity:{kind}:{field}",
                )
                break


def _completed_output(payloads: tuple[Any, ...]) -> list[Any] | None:
    for payload in reversed(payloads):
        if isinstance(payload, dict) and payload.get("type") == "response.completed":
            response = payload.get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), list):
                return list(response["output"])
    return None


def _responses_identity(obs: Observation) -> Iterator[Violation]:
    by_index: dict[int, list[ItemSighting]] = {}
    for s in obs.sightings:
        by_index.setdefault(s.output_index, []).append(s)
    for index in sorted(by_index):
        yield from _changes(index, by_index[index])
    streamed = {s.output_index for s in obs.sightings if s.phase != "completed"}
    output = _completed_output(obs.payloads)
    final = (
        len(output)
        if output is not None
        else len({s.output_index for s in obs.sightings if s.phase == "completed"})
    )
    if (output is not None or final) and final != len(streamed):
        yield Violation(
            oracle="identity",
            message=(
                f"response.completed carries {final} output items but {len(streamed)} were streamed"
            ),
            evidence=clip(f"streamed output_index {sorted(streamed)} → {final} completed"),
            signature="identity:output_length",
        )


@register(
    "identity",
    expected="An item keeps its id, call_id and type from `output_item.added` through "
    "`response.completed`; chat chunks keep one id.",
    look_for="an id that changes between the stream's events",
    rank=50,
)
def identity(case: Case, obs: Observation) -> Iterator[Violation]:
    """A streamed item's type/id/call_id must match what the terminal event says (seeds 002/003).

    Chat streams must keep one ``id`` across all chunks. Non-streamed answers have only one
    sighting of each thing, so there is nothing to compare.
    """
    if obs.refused or not obs.exchange.stream:
        return
    if obs.api == "responses":
        yield from _responses_identity(obs)
        return
    if obs.chunk_ids:
        first = obs.chunk_ids[0]
        other = next((c for c in obs.chunk_ids if c != first), None)
        if other is not None:
            yield Violation(
                oracle="identity",
                message="chat stream chunk id changed mid-stream",
                evidence=clip(f"{first} → {other}"),
                signature="identity:chunk:id",
            )


@register(
    "index_gap",
    expected="Streamed tool calls are indexed 0..n-1, each once, each with an id.",
    look_for="tool_calls indexes that skip or repeat",
    rank=60,
)
def index_gap(case: Case, obs: Observation) -> Iterator[Violation]:
    """Streamed tool-call indexes must be 0..n-1 once each, and every call must carry an id."""
    if obs.refused:
        return
    if obs.exchange.stream and obs.api == "chat":
        yield from _stream_indexes(obs.stream_indexes)
    field = "call_id" if obs.api == "responses" else "id"
    for n, call in enumerate(obs.tool_calls):
        value = call.call_id if obs.api == "responses" else call.id
        if not (value or "").strip():
            yield Violation(
                oracle="index_gap",
                message=f"tool call {n} ({call.name!r}) has an empty {field}",
                evidence=clip(f"index={call.index} name={call.name!r} {field}={value!r}"),
                signature=f"index_gap:empty_{field}",
            )


def _stream_indexes(indexes: tuple[int | None, ...]) -> Iterator[Violation]:
    evidence = clip(f"streamed tool_call indexes {list(indexes)}")
    if any(i is None for i in indexes):
        yield Violation(
            oracle="index_gap",
            message="a streamed tool_call delta carrying an id has no index",
            evidence=evidence,
            signature="index_gap:no_index",
        )
    present = [i for i in indexes if i is not None]
    distinct = sorted(set(present))
    if len(distinct) != len(present):
        yield Violation(
            oracle="index_gap",
            message="two streamed tool calls share one index",
            evidence=evidence,
            signature="index_gap:duplicate",
        )
    if distinct != list(range(len(distinct))):
        yield Violation(
            oracle="index_gap",
            message=f"streamed tool_call indexes {distinct}, expected {list(range(len(distinct)))}",
            evidence=evidence,
            signature="index_gap:gap",
        )
