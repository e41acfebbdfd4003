"""The cassette codec: agentfuzz's turns written into a vcrpy cassette and read back, checked.

A cassette's ``metadata.agentfuzz`` says what was fuzzed (target, model, agentfuzz version)
and, for each interaction in order, the ``case`` it sent, the ``verdicts`` the oracles gave at
record time and the body's size in ``bytes`` (a cut-short body is then an unreadable cassette,
not a new finding); in middleman mode also the ``backend`` requests (``path`` and ``body``) that
reached the backend behind the proxy; and the ``related`` requests the judge sent with it (a
relation's partner, ``--differential``'s stream-flipped twin): for each its ``relation``, what was
sent (``url``, ``request``, ``stream``) and its answer (``status``, ``content_type``, ``body``
text, maybe ``failure``); an older cassette's ``twin`` reads as the ``stream`` relation. Each
interaction is built from the exchange's own recording (``transport.cassette.interaction_of``);
vcrpy types stay in ``transport/``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentfuzz.model.history import Case
from agentfuzz.model.modes import slug
from agentfuzz.model.observation import BackendRequest, Observation, SSEEvent, Violation
from agentfuzz.wire.transport.cassette import (
    CassetteError,
    Tape,
    interaction_of,
    load_cassette,
    metadata,
    new_cassette,
    save_cassette,
)

__all__ = [
    "Recorded",
    "RecordedTurn",
    "load_turns",
    "read_turns",
    "record_example",
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
    it may carry the backend's requests and its related answers), the case behind it, its
    verdicts."""

    observation: Observation
    case: Case
    violations: tuple[Violation, ...]


def _related_metadata(relation: str, other: Observation) -> dict[str, Any]:
    exchange = other.exchange
    if exchange.status is not None:
        body = exchange.raw.decode("utf-8", errors="replace")
    else:
        # No answer ever came: write back what was read of it, if anything.
        body = "".join(_sse_text(e) for e in exchange.events) or exchange.body
    metadata = {
        "relation": relation,
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
        if obs.related:
            turn["related"] = [_related_metadata(r.relation, r.observation) for r in obs.related]
        turns.append(turn)
    save_cassette(cassette, {"agentfuzz": {"version": VERSION, **about, "turns": turns}})
    return path


def record_example(folder: Path, recorded: Sequence[Recorded], about: dict[str, Any]) -> None:
    """``fuzz --record``: one example's (or session's) answered exchanges as one cassette in
    ``folder``, named by its kind, mode and a digest of the bytes sent (the same requests give
    the same name); nothing when none was answered."""
    recorded = [r for r in recorded if r.observation.exchange.status is not None]
    if not recorded:
        return
    first = recorded[0].case
    digest = hashlib.sha1()
    for item in recorded:
        # The bytes sent: LiveTransport sends exactly json.dumps of the request.
        digest.update(json.dumps(item.observation.exchange.request).encode())
    about = about | {"api": first.api, "stream": first.stream}
    name = f"{about['kind']}-{slug((first.api, first.stream))}-{digest.hexdigest()[:12]}.yaml"
    write_cassette(folder / name, recorded, about)


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
    body: dict[str, Any] | str
    case: Case
    verdicts: list[dict[str, str]]
    # Middleman mode: what the backend behind the proxy received; None outside middleman mode.
    backend: tuple[BackendRequest, ...] | None = None
    # The transport failure that cut the answer short when it was recorded, if any.
    failure: str | None = None
    # The related requests and their answers, as ``write_cassette`` wrote them.
    related: tuple[dict[str, Any], ...] = ()


def read_turns(path: Path) -> tuple[dict[str, Any], list[RecordedTurn]]:
    """A cassette's agentfuzz metadata and its checked turns; ``CassetteError`` (one line) for
    anything unusable, a body shorter than recorded included."""
    _, about, read = load_turns(path)
    return about, read


def load_turns(path: Path) -> tuple[Tape, dict[str, Any], list[RecordedTurn]]:
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
        related = _related(path, number, turn)
        read.append(
            RecordedTurn(number, request.uri, body, case, verdicts, backend, failure, related)
        )
    return cassette, about, read


_RELATED_FIELDS: dict[str, tuple[type, ...]] = {
    "relation": (str,),
    "url": (str,),
    "request": (dict, str),
    "stream": (bool,),
    "status": (int, type(None)),
    "content_type": (str,),
    "body": (str,),
    "failure": (str, type(None)),
}


def _related(path: Path, number: int, turn: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    raw = turn.get("related")
    if raw is None and turn.get("twin") is not None:
        # Written before relations: the one related request was the stream-flipped twin.
        twin = turn["twin"]
        raw = [twin | {"relation": "stream"} if isinstance(twin, dict) else twin]
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise CassetteError(f"{path}: turn {number}: related: expected a list")
    for at, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise CassetteError(f"{path}: turn {number}: related[{at}]: expected a mapping")
        for name, kinds in _RELATED_FIELDS.items():
            if not isinstance(entry.get(name), kinds):
                raise CassetteError(
                    f"{path}: turn {number}: related[{at}].{name}: missing or of the wrong type"
                )
    return tuple(raw)


def _json(path: Path, number: int, body: Any) -> dict[str, Any] | str:
    """The request as sent: its JSON object, or the text of a malformed body."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError:
        text = None
    if not isinstance(text, str):
        raise CassetteError(f"{path}: turn {number}: the request body is not text")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return data if isinstance(data, dict) else text
