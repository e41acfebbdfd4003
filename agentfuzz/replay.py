"""Cassettes as agentfuzz uses them: written with the case and verdicts of every turn, and
replayed through the real client pipeline (transport, dialect assembly, every oracle).

A cassette's ``metadata.agentfuzz`` says what was fuzzed (target, model, agentfuzz version)
and, for each interaction in order, the ``case`` it sent, the ``verdicts`` the oracles gave at
record time and the body's size in ``bytes`` (a cut-short body is then an unreadable cassette,
not a new finding); in proxy mode also the ``backend`` requests (``path`` and ``body``) that
reached the backend behind the proxy, which replay hands to the oracles again; with
``--differential`` the ``twin``: the same request with ``stream`` flipped (``url``, ``request``,
``stream``) and its answer (``status``, ``content_type``, ``body`` text, maybe ``failure``),
which replay reads through the same client pipeline and attaches as ``Observation.twin``. Replay
needs no network: bodies come from the cassette, re-split at seeded random byte boundaries.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError
from vcr.cassette import Cassette

from agentfuzz import oracles
from agentfuzz.history import Case
from agentfuzz.observation import BackendRequest, Observation, SSEEvent, Violation
from agentfuzz.target import Target
from agentfuzz.transport.cassette import (
    CassetteError,
    ReplayTransport,
    interaction_of,
    load_cassette,
    metadata,
    new_cassette,
    save_cassette,
    split_at_random,
)

__all__ = [
    "CassetteReplay",
    "Recorded",
    "RecordedTurn",
    "ReplayedTurn",
    "cassette_files",
    "read_turns",
    "replay_bundle",
    "replay_cassette",
    "resend_bundle",
    "verdict",
    "write_cassette",
]

try:
    VERSION = importlib.metadata.version("agentfuzz")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
    VERSION = "unknown"


@dataclass(frozen=True)
class Recorded:
    """One turn to write: the observation (its exchange carries what went over the wire, and
    it may carry the backend's requests and a twin), the case behind it, its verdicts."""

    observation: Observation
    case: Case
    violations: tuple[Violation, ...]


def _twin_metadata(twin: Observation) -> dict[str, Any]:
    exchange = twin.exchange
    if exchange.status is not None:
        body = exchange.raw.decode("utf-8", errors="replace")
    else:
        # No answer ever came: write back what was read of it, if anything.
        body = "".join(_sse_text(e) for e in exchange.events) or exchange.body
    metadata = {
        "url": exchange.url,
        "request": exchange.request,
        "stream": exchange.stream,
        "status": exchange.status,
        "content_type": exchange.content_type,
        "body": body,
    }
    if exchange.failure is not None:
        metadata["failure"] = exchange.failure
    return metadata


def _sse_text(event: SSEEvent) -> str:
    named = "" if event.event is None else f"event: {event.event}\n"
    return named + "".join(f"data: {line}\n" for line in event.data.split("\n")) + "\n"


def _backend_metadata(backend: tuple[BackendRequest, ...] | None) -> list[dict[str, Any]] | None:
    return None if backend is None else [{"path": b.path, "body": b.body} for b in backend]


def _backend(path: Path, number: int, turn: dict[str, Any]) -> tuple[BackendRequest, ...] | None:
    raw = turn.get("backend")
    if raw is None:
        return None
    ok = isinstance(raw, list) and all(
        isinstance(b, dict) and isinstance(b.get("path"), str) and isinstance(b.get("body"), dict)
        for b in raw
    )
    if not ok:
        raise CassetteError(f"{path}: turn {number}: backend: expected a list of {{path, body}}")
    return tuple(BackendRequest(b["path"], b["body"]) for b in raw)


def verdict(v: Violation) -> dict[str, str]:
    return {"oracle": v.oracle, "signature": v.signature, "message": v.message}


def _body_bytes(response: dict[str, Any]) -> int:
    body = response["body"]["string"]
    return len(body.encode("utf-8") if isinstance(body, str) else body)


def write_cassette(path: Path, recorded: Sequence[Recorded], about: dict[str, Any]) -> Path:
    """Write ``recorded`` as one cassette at ``path``; ``about`` says what was fuzzed.

    A turn whose request got no answer at all (no status line) has nothing to play back and
    is left out.
    """
    cassette = new_cassette(path)
    turns = []
    for item in recorded:
        obs = item.observation
        interaction = interaction_of(obs.exchange)
        if interaction is None:
            continue
        cassette.append(*interaction)
        turn: dict[str, Any] = {
            "case": item.case.model_dump(mode="json"),
            "verdicts": [verdict(v) for v in item.violations],
            "bytes": len(obs.exchange.raw),
        }
        if obs.backend is not None:
            turn["backend"] = _backend_metadata(obs.backend)
        if obs.exchange.failure is not None:
            turn["failure"] = obs.exchange.failure
        if obs.twin is not None:
            turn["twin"] = _twin_metadata(obs.twin)
        turns.append(turn)
    save_cassette(cassette, {"agentfuzz": {"version": VERSION, **about, "turns": turns}})
    return path


@dataclass
class ReplayedTurn:
    """One interaction replayed: the verdicts recorded then and the ones given now."""

    number: int
    url: str
    recorded: list[dict[str, str]]
    observation: Observation
    violations: list[Violation]

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


def _turns(path: Path, about: dict[str, Any], count: int) -> list[dict[str, Any]]:
    turns = about.get("turns")
    if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
        raise CassetteError(f"{path}: no agentfuzz metadata (metadata.agentfuzz.turns)")
    if len(turns) != count:
        raise CassetteError(f"{path}: {count} interactions but {len(turns)} turns of metadata")
    return turns


def _case(path: Path, number: int, turn: dict[str, Any]) -> Case:
    try:
        return Case.model_validate(turn.get("case"))
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise CassetteError(
            f"{path}: turn {number}: case.{where}: {problem['msg']}".rstrip(".")
        ) from None


def _check_body(path: Path, number: int, response: dict[str, Any], turn: dict[str, Any]) -> None:
    size = _body_bytes(response)
    expected = turn.get("bytes")
    if isinstance(expected, int) and size != expected:
        raise CassetteError(
            f"{path}: turn {number}: body holds {size} bytes, recorded {expected} (truncated?)"
        )
    for name, values in (response.get("headers") or {}).items():
        declared = str(values[0]) if name.lower() == "content-length" and values else ""
        if declared.isdigit() and int(declared) != size:
            raise CassetteError(
                f"{path}: turn {number}: body holds {size} bytes, content-length says "
                f"{declared} (truncated?)"
            )


@dataclass(frozen=True)
class RecordedTurn:
    """One interaction of an agentfuzz cassette, read and checked: what was sent, and why."""

    number: int
    uri: str
    body: dict[str, Any]
    case: Case
    verdicts: list[dict[str, str]]
    # Proxy mode: what the backend behind the proxy received; None outside proxy mode.
    backend: tuple[BackendRequest, ...] | None = None
    # The transport failure that cut the answer short when it was recorded, if any.
    failure: str | None = None
    # Differential mode: the twin request and its answer, as ``write_cassette`` wrote them.
    twin: dict[str, Any] | None = None


def read_turns(path: Path) -> tuple[dict[str, Any], list[RecordedTurn]]:
    """A cassette's agentfuzz metadata and its checked turns; ``CassetteError`` (one line) for
    anything unusable, a body shorter than recorded included."""
    _, about, read = _read(path)
    return about, read


def _read(path: Path) -> tuple[Cassette, dict[str, Any], list[RecordedTurn]]:
    cassette = load_cassette(path)
    about = metadata(cassette)
    turns = _turns(path, about, len(cassette.data))
    read = []
    for number, ((request, response), turn) in enumerate(zip(cassette.data, turns, strict=True), 1):
        _check_body(path, number, response, turn)
        body = _json(path, number, request.body)
        verdicts = turn.get("verdicts") or []
        case = _case(path, number, turn)
        backend = _backend(path, number, turn)
        failure = turn.get("failure")
        if failure is not None and not isinstance(failure, str):
            raise CassetteError(f"{path}: turn {number}: failure: expected a string")
        twin = _twin(path, number, turn)
        read.append(RecordedTurn(number, request.uri, body, case, verdicts, backend, failure, twin))
    return cassette, about, read


def replay_cassette(path: Path, seed: int | None = 0) -> CassetteReplay:
    """Re-run every interaction of the cassette at ``path`` offline; ``seed`` None: whole bodies.

    Raises ``CassetteError`` (one line) for a cassette that cannot be read or used.
    """
    cassette, about, turns = _read(path)
    rng = None if seed is None else random.Random(seed)
    result = CassetteReplay(path, about)
    if not turns:
        return result
    # One client for the whole cassette: matching ignores the host, so the first one serves all.
    tape = ReplayTransport(cassette, rng)
    with _offline(turns[0].uri, tape) as target:
        for turn in turns:
            route, stream = urlsplit(turn.uri).path, turn.case.stream
            obs = target.resend(route, turn.body, stream, turn.failure)
            if turn.backend is not None:
                obs = dataclasses.replace(obs, backend=turn.backend)
            if turn.twin is not None:
                obs = dataclasses.replace(obs, twin=_replay_twin(turn.twin, rng))
            found = oracles.check(turn.case, obs)
            url = obs.exchange.url
            result.turns.append(ReplayedTurn(turn.number, url, turn.verdicts, obs, found))
    return result


def _offline(url: str, transport: httpx.BaseTransport) -> Target:
    """A target at ``url``'s origin whose answers come from ``transport``, not the network."""
    parts = urlsplit(url)
    return Target(f"{parts.scheme}://{parts.netloc}", "", transport=transport, recording=False)


_TWIN_FIELDS: dict[str, tuple[type, ...]] = {
    "url": (str,),
    "request": (dict,),
    "stream": (bool,),
    "status": (int, type(None)),
    "content_type": (str,),
    "body": (str,),
    "failure": (str, type(None)),
}


def _twin(path: Path, number: int, turn: dict[str, Any]) -> dict[str, Any] | None:
    raw = turn.get("twin")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CassetteError(f"{path}: turn {number}: twin: expected a mapping")
    for name, kinds in _TWIN_FIELDS.items():
        if not isinstance(raw.get(name), kinds):
            raise CassetteError(f"{path}: turn {number}: twin.{name}: missing or of the wrong type")
    return raw


def _replay_twin(twin: dict[str, Any], rng: random.Random | None) -> Observation:
    """The twin's answer read back through the client pipeline, like the turn's own."""
    body = twin["body"].encode("utf-8")
    chunks = split_at_random(body, rng) if rng is not None else [body]
    headers = {"content-type": twin["content_type"]} if twin["content_type"] else {}

    def answer(request: httpx.Request) -> httpx.Response:
        if twin["status"] is None:
            # No answer was ever read: nothing to play, only the recorded failure to report.
            raise httpx.ReadError("no answer was recorded", request=request)
        return httpx.Response(twin["status"], headers=headers, content=iter(chunks))

    with _offline(twin["url"], httpx.MockTransport(answer)) as target:
        path = urlsplit(twin["url"]).path
        return target.resend(path, twin["request"], twin["stream"], twin.get("failure"))


def _json(path: Path, number: int, body: Any) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)
    except (ValueError, AttributeError, TypeError):
        data = None
    if not isinstance(data, dict):
        raise CassetteError(f"{path}: turn {number}: the request body is not a JSON object")
    return data


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


def resend_bundle(folder: Path, base_url: str, model: str | None = None) -> list[Violation]:
    """Send a bundle's minimal request to a live server; what the oracles say about the answer."""
    doc, case = _bundle_case(folder)
    request = dict(doc["request"])
    if model is not None:
        request["model"] = model
    path = "/" + urlsplit(doc["url"]).path.split("/v1/", 1)[-1]
    with Target(base_url, str(request.get("model", ""))) as target:
        obs = target.resend(path, request, case.stream)
        if doc.get("oracle") == "stream_divergence":
            # The finding is a difference: send the twin too, or the live test proves nothing.
            flipped = {**request, "stream": not case.stream}
            obs = dataclasses.replace(obs, twin=target.resend(path, flipped, not case.stream))
    return oracles.check(case, obs)
