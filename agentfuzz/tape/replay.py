"""Cassettes replayed through the real client pipeline (``Target``, dialect assembly, every
oracle), offline: bodies come from the cassette (``cassette_codec`` reads and checks it), re-split
at seeded random byte boundaries; the recorded answers to related requests are read back the same
way and attached as ``Observation.related``, recorded backend requests as
``Observation.backend``, read as the target reads them live. Also a bundle's replay and its
live re-send (the related requests with it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentfuzz import oracles
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Related, Violation
from agentfuzz.tape.codec import load_turns
from agentfuzz.wire.dialects import proxied
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.cassette import RecordedAnswer, ReplayTransport, split_at_random

__all__ = [
    "CassetteReplay",
    "ReplayedTurn",
    "cassette_files",
    "replay_bundle",
    "replay_cassette",
    "resend_bundle",
]


@dataclass
class ReplayedTurn:
    """One interaction replayed: the verdicts recorded then and the ones given now."""

    number: int
    url: str
    recorded: list[dict[str, str]]
    observation: Observation
    violations: list[Violation]
    # The case the turn was recorded with (its provenance included).
    case: Case | None = None

    @property
    def same(self) -> bool:
        """Whether replay reached the recorded verdicts (by oracle and signature)."""
        now = sorted((v.oracle, v.signature) for v in self.violations)
        then = sorted((v["oracle"], v.get("signature", "")) for v in self.recorded)
        return now == then


@dataclass
class CassetteReplay:
    path: Path
    about: dict[str, Any]
    turns: list[ReplayedTurn] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(t.violations for t in self.turns)

    @property
    def same(self) -> bool:
        return all(t.same for t in self.turns)


def replay_cassette(path: Path, seed: int | None = 0, recording: bool = False) -> CassetteReplay:
    """Re-run every interaction of the cassette at ``path`` offline; ``seed`` None: whole bodies.
    With ``recording`` each exchange keeps its recording, so a bundle can be written of it.

    Raises ``CassetteError`` (one line) for a cassette that cannot be read or used.
    """
    cassette, about, turns = load_turns(path)
    rng = None if seed is None else random.Random(seed)
    result = CassetteReplay(path, about)
    if not turns:
        return result
    # One client for the whole cassette: matching ignores the host, so the first one serves all.
    tape = ReplayTransport(cassette, rng)
    with _offline(turns[0].uri, tape, recording) as target:
        for turn in turns:
            route, stream = urlsplit(turn.uri).path, turn.case.stream
            obs = target.resend(route, turn.body, stream, turn.failure)
            if turn.backend is not None:
                obs = proxied(obs, turn.backend)
            if turn.related:
                related = tuple(
                    Related(r["relation"], _replay_related(r, rng)) for r in turn.related
                )
                obs = dataclasses.replace(obs, related=related)
            said = {(v["oracle"], v.get("signature", "")) for v in turn.verdicts}
            found = [_as_said(v, turn.case, said) for v in oracles.check(turn.case, obs)]
            url = obs.exchange.url
            replayed = ReplayedTurn(turn.number, url, turn.verdicts, obs, found, turn.case)
            result.turns.append(replayed)
    return result


def _as_said(v: Violation, case: Case, said: set[tuple[str, str]]) -> Violation:
    """``v`` signed by what ``case`` needs when the recording said it so: a bundle's finding
    is signed by what its reduced repro needs (``oracles.by_needs``), the oracle by its
    symptom alone."""
    refined = oracles.by_needs(v, case)
    return refined if refined.key in said else v


def _offline(
    url: str, transport: ReplayTransport | RecordedAnswer, recording: bool = False
) -> Target:
    """A target at ``url``'s origin whose answers come from ``transport``, not the network."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return Target(origin, "", transport=transport, recording=recording)


def _replay_related(twin: dict[str, Any], rng: random.Random | None) -> Observation:
    """A related request's answer read back through the client pipeline, like the turn's own."""
    body = twin["body"].encode("utf-8")
    chunks = split_at_random(body, rng) if rng is not None else [body]
    answer = RecordedAnswer(twin["status"], twin["content_type"], chunks)
    with _offline(twin["url"], answer) as target:
        path = urlsplit(twin["url"]).path
        return target.resend(path, twin["request"], twin["stream"], twin.get("failure"))


def cassette_files(paths: Sequence[Path]) -> list[Path]:
    """The cassettes named by ``paths``: files as given, folders searched for ``*.yaml``."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
        else:
            found.append(path)
    return found


def _bundle_case(folder: Path) -> tuple[dict[str, Any], Case]:
    doc = json.loads((folder / "repro.json").read_text(encoding="utf-8"))
    return doc, Case.model_validate(doc["case"])


def replay_bundle(folder: Path, seed: int | None = 0) -> list[Violation]:
    """What the oracles say, offline, about the failing exchange a bundle recorded."""
    replay = replay_cassette(folder / "cassette.yaml", seed)
    return replay.turns[-1].violations


def resend_bundle(
    folder: Path, base_url: str, model: str | None = None, api_key: str | None = None
) -> list[Violation]:
    """Send a bundle's minimal request to a live server, and the requests related to it (a
    relation's partner, the stream twin) right after; what the oracles say about the answers.
    The key is ``api_key``, else ``$OPENAI_API_KEY`` (as ``repro.sh``'s curl sends it)."""
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
    doc, case = _bundle_case(folder)
    request = _with_model(doc["request"], model)
    sent_model = request.get("model", "") if isinstance(request, dict) else model
    with Target(base_url, str(sent_model or ""), api_key=api_key) as target:
        obs = target.resend(_path(doc["url"]), request, case.stream)
        related = []
        for entry in doc.get("related") or _old_twin(doc, case):
            body = _with_model(entry["request"], model)
            answer = target.resend(_path(entry["url"]), body, entry["stream"])
            related.append(Related(entry["relation"], answer))
    found = oracles.check(case, dataclasses.replace(obs, related=tuple(related)))
    said = {(str(doc.get("oracle")), str(doc.get("signature")))}
    return [_as_said(v, case, said) for v in found]


def _old_twin(doc: dict[str, Any], case: Case) -> list[dict[str, Any]]:
    """A bundle written before relations: a stream_divergence one sends its twin, the same
    body with ``stream`` flipped, or the live test proves nothing."""
    request = doc["request"]
    if doc.get("oracle") != "stream_divergence" or not isinstance(request, dict):
        return []
    flipped = {**request, "stream": not case.stream}
    return [
        {"relation": "stream", "url": doc["url"], "request": flipped, "stream": not case.stream}
    ]


def _with_model(request: dict[str, Any] | str, model: str | None) -> dict[str, Any] | str:
    if isinstance(request, dict) and model is not None:
        return request | {"model": model}
    return request


def _path(url: str) -> str:
    """The path after the API root (``/chat/completions``) of a URL a bundle posted to."""
    return "/" + urlsplit(url).path.split("/v1/", 1)[-1]
