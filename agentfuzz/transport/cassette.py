"""Cassettes: recorded exchanges in vcrpy's format, a recording transport and a replaying one.

vcrpy owns the format (``version``, ``interactions``, ``metadata``), the header filters and the
matching; agentfuzz plugs two httpx transports under ``LiveTransport`` instead of letting vcrpy
patch httpx, because vcrpy reads a whole response before the client sees it, and a server that
streams forever would then hang the recorder past every time and size budget.

- ``RecordingTransport`` passes each response through untouched and, once the client has read
  it, hands the raw bytes to a sink as one vcrpy interaction.
- ``ReplayTransport`` answers from a loaded cassette, re-splitting each body at seeded random
  byte boundaries: vcrpy stores a streamed body whole, so replaying it in one piece would never
  exercise the SSE decoder and the assembler against chunk boundaries.

Requests match on method, path and JSON body compared as data (key order ignored). The host
and port are left out on purpose: the reference server gets a fresh port every run. No body
field is ignored: agentfuzz's bodies are a pure function of the case and the model name.
Headers ``authorization``, ``api-key``, ``x-api-key``, ``cookie`` and ``set-cookie`` are
never written.
"""

from __future__ import annotations

import functools
import inspect
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlparse

import httpx
import vcr
import yaml
from vcr.cassette import Cassette
from vcr.errors import MissingMetadataError
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest
from vcr.serialize import deserialize as vcr_deserialize
from vcr.serialize import serialize as vcr_serialize

from agentfuzz._files import write_atomically
from agentfuzz.observation import Exchange
from agentfuzz.transport._tee import SECRET_HEADERS, teed
from agentfuzz.transport._yaml import SafeLoader
from agentfuzz.transport.errors import CassetteError, NotInCassette

__all__ = [
    "SECRET_HEADERS",
    "CassetteError",
    "CassetteTransport",
    "Interaction",
    "NotInCassette",
    "RecordingTransport",
    "ReplayTransport",
    "interaction_of",
    "load_cassette",
    "metadata",
    "new_cassette",
    "save_cassette",
]


# A recorded (request, response) pair, as vcrpy keeps it in memory.
Interaction = tuple[VcrRequest, dict[str, Any]]


class _ReadableYaml:
    """vcrpy's YAML layout, with multi-line strings (SSE bodies) written as literal blocks."""

    # libyaml's emitter when there is one: recording every example must stay cheap.
    class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        pass

    @staticmethod
    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value and value == value.strip(" ") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)

    @classmethod
    def serialize(cls, data: dict[str, Any]) -> str:
        return yaml.dump(data, Dumper=cls._Dumper, allow_unicode=True, sort_keys=False, width=100)

    @staticmethod
    def deserialize(text: str) -> Any:
        return yaml.load(text, Loader=SafeLoader)


def _json_body(r1: VcrRequest, r2: VcrRequest) -> None:
    """vcrpy matcher: equal JSON bodies, key order ignored; the message says what differs."""
    a, b = _as_json(r1.body), _as_json(r2.body)
    if a != b:
        raise AssertionError(_difference(a, b))


def _path(r1: VcrRequest, r2: VcrRequest) -> None:
    if r1.path != r2.path:
        raise AssertionError(f"path {r1.path} != {r2.path}")


def _as_json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body


def _difference(new: Any, old: Any, where: str = "body") -> str:
    """The first place two JSON values differ, as a short path and both values."""
    if isinstance(new, dict) and isinstance(old, dict):
        for key in sorted(new.keys() | old.keys(), key=str):
            if new.get(key, _MISSING) != old.get(key, _MISSING):
                return _difference(new.get(key, _MISSING), old.get(key, _MISSING), f"{where}.{key}")
    if isinstance(new, list) and isinstance(old, list):
        if len(new) != len(old):
            return f"{where} has {len(new)} items, the recorded one {len(old)}"
        for i, (x, y) in enumerate(zip(new, old, strict=True)):
            if x != y:
                return _difference(x, y, f"{where}[{i}]")
    return f"{where} is {_short(new)}, recorded {_short(old)}"


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING = _Missing()


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, _Missing) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


class _Asked(NamedTuple):
    """What a request is matched by, as ``VcrRequest`` gives it: method, URL path, body bytes."""

    method: str
    path: str
    body: bytes | None


def _asked(request: httpx.Request) -> _Asked:
    # The path as vcrpy's Request parses it from the URL, so both sides compare alike.
    return _Asked(request.method, urlparse(str(request.url)).path, request.content)


def _key(request: VcrRequest | _Asked) -> tuple[str, str, str]:
    """What a request is matched by, as one hashable value: method, path, canonical body."""
    body = _as_json(request.body)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (request.method, request.path, canonical)


def _drop_response_secrets(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    response["headers"] = {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}
    return response


_VCR = vcr.VCR(
    serializer="agentfuzz-yaml",
    filter_headers=list(SECRET_HEADERS),
    before_record_response=_drop_response_secrets,
    match_on=("method", "agentfuzz-path", "agentfuzz-json-body"),
    decode_compressed_response=True,
)
_VCR.register_serializer("agentfuzz-yaml", _ReadableYaml)
_VCR.register_matcher("agentfuzz-path", _path)
_VCR.register_matcher("agentfuzz-json-body", _json_body)


_CASSETTE_ARGS = frozenset(inspect.signature(Cassette).parameters)


def _config(path: Path, record_mode: str) -> dict[str, Any]:
    return _mode_config(record_mode) | {"path": str(path)}


@functools.cache
def _mode_config(record_mode: str) -> dict[str, Any]:
    # vcrpy's merged config also carries what only its context manager uses. Its filters are
    # stateless functions, so cassettes opened in the same mode share them.
    merged = _VCR.get_merged_config(record_mode=record_mode)
    return {k: v for k, v in merged.items() if k in _CASSETTE_ARGS}


def new_cassette(path: Path, record_mode: str = "all") -> Cassette:
    """An empty cassette to record into, saved to ``path`` by ``save_cassette``."""
    return Cassette(**_config(path, record_mode))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def load_cassette(path: Path, record_mode: str = "none") -> Cassette:
    """The cassette at ``path``, checked strictly: unlike vcrpy's own loader, which treats an
    unreadable file as empty, anything wrong is a ``CassetteError`` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"{path}: cannot read: {_one_line(str(exc))}") from None
    try:
        data = _ReadableYaml.deserialize(text)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{path}: not valid YAML: {_one_line(str(exc))}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path}: not a cassette (no list of interactions)")
    for n, item in enumerate(data["interactions"], start=1):
        if not _interaction_shape(item):
            raise CassetteError(f"{path}: interaction {n} lacks a request or a response")
    # vcrpy builds its requests and responses from what was parsed here: YAML is the cost of
    # a replay, so the file is read and parsed once.
    cassette = Cassette(**_config(path, record_mode))
    try:
        return _filled(cassette, data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CassetteError(f"{path}: not a vcrpy cassette: {_one_line(str(exc))}") from None


def _filled(cassette: Cassette, data: dict[str, Any]) -> Cassette:
    """``cassette`` holding ``data``'s interactions, in the state ``Cassette.load`` leaves it.

    vcrpy's loader copies each request once and each response twice on the way in, so that
    its filters cannot change what a caller still holds. A fresh parse has no other holder:
    an interaction the filters would leave unchanged is kept as vcrpy builds it, uncopied.
    """
    requests, responses, *meta = vcr_deserialize("", _Parsed(data))
    for request, response in zip(requests, responses, strict=True):
        if _unfiltered(request, response):
            cassette.data.append((request, response))
        else:
            cassette.append(request, response)
    # What Cassette.load (vcrpy's _load) sets once the interactions are in.
    cassette._old_interactions = list(zip(requests, responses, strict=True))
    cassette._loaded_count = len(cassette.data)
    cassette._metadata = meta[0] if meta else {}
    cassette.dirty = False
    cassette.rewound = True
    return cassette


def _unfiltered(request: VcrRequest, response: dict[str, Any]) -> bool:
    """Whether ``_VCR``'s filters (secret headers, compressed bodies) leave this unchanged."""
    headers = response.get("headers")
    if not isinstance(headers, dict):
        return False
    names = [name.lower() for name in headers]
    return not any(name.lower() in SECRET_HEADERS for name in request.headers) and not any(
        name in SECRET_HEADERS or name == "content-encoding" for name in names
    )


class _Parsed:
    """A vcrpy serializer that hands over a cassette already parsed, and writes like ours."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def deserialize(self, text: str) -> dict[str, Any]:
        return self._data

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        return _ReadableYaml.serialize(data)


def _interaction_shape(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    request, response = item.get("request"), item.get("response")
    return (
        isinstance(request, dict)
        and {"method", "uri"} <= request.keys()
        and isinstance(response, dict)
        and isinstance(response.get("status"), dict)
        and isinstance(response.get("body"), dict)
    )


def save_cassette(cassette: Cassette, meta: dict[str, Any]) -> None:
    """Write ``cassette``'s interactions (filtered when appended) with ``meta`` beside them.

    The file is replaced at once: a reader (a collection, another shard writing the same
    example) never sees half of it, and an interrupted write leaves the old file or none.
    """
    data = {"requests": cassette.requests, "responses": cassette.responses, "metadata": meta}
    path = Path(cassette.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, vcr_serialize(data, _ReadableYaml))


def metadata(cassette: Cassette, key: str = "agentfuzz") -> dict[str, Any]:
    """What a cassette's metadata holds under ``key`` (empty if nothing)."""
    try:
        found = cassette.get_metadata(key, {})
    except MissingMetadataError:  # a write-protected cassette saved without metadata
        return {}
    return found if isinstance(found, dict) else {}


def _headers(headers: httpx.Headers) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in headers.multi_items():
        out.setdefault(name, []).append(value)
    return out


def _vcr_request(request: httpx.Request) -> VcrRequest:
    return VcrRequest(request.method, str(request.url), request.content, request.headers)


def interaction_of(exchange: Exchange) -> Interaction | None:
    """``exchange`` as a vcrpy interaction, from the recording it carries: the request as sent
    (``LiveTransport`` sends exactly ``json.dumps(request)``) and the answer's bytes as read.
    None when no answer came at all (the connection failed before a status line)."""
    if exchange.status is None:
        return None
    content = json.dumps(exchange.request).encode()
    request = VcrRequest("POST", exchange.url, content, dict(exchange.request_headers))
    response = {
        "status": {"code": exchange.status, "message": exchange.reason},
        "headers": _headers(httpx.Headers(list(exchange.headers))),
        "body": {"string": exchange.raw},
    }
    return request, response


class RecordingTransport(httpx.BaseTransport):
    """Sends through ``inner`` and gives ``sink`` each exchange, as read, as a vcrpy interaction.

    The body is what the client actually read, handed over when the client closes the
    response: if it stopped early (a time or size budget) or the connection failed mid-answer,
    the cassette holds the bytes read until then. The bytes alone cannot say that the answer
    was cut; the target adds the transport failure to the recording beside them.
    """

    def __init__(
        self, sink: Callable[[Interaction], None], inner: httpx.BaseTransport | None = None
    ) -> None:
        self._inner = inner or httpx.HTTPTransport()
        self._sink = sink

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        sent = _vcr_request(request)

        def done(body: bytes) -> None:
            recorded = {
                "status": {"code": response.status_code, "message": response.reason_phrase},
                "headers": _headers(response.headers),
                "body": {"string": body},
            }
            self._sink((sent, recorded))

        return teed(response, request, done)

    def close(self) -> None:
        self._inner.close()


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


# Piece sizes: a few bytes often enough to cut inside a UTF-8 character or between "\r" and
# "\n", and up to 144 bytes, so that events (most are 200-600 bytes) are still cut somewhere
# inside but a body comes in fewer pieces (each costs the client's decoders a pass): 34 bytes
# on average, against 23 when the largest piece was 89.
_PIECE_SIZES = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)
_MEAN_PIECE = sum(_PIECE_SIZES) // len(_PIECE_SIZES)


def split_at_random(body: bytes, rng: random.Random) -> list[bytes]:
    """``body`` cut at random byte boundaries (mid-line and mid-character included)."""
    chunks: list[bytes] = []
    at = 0
    while at < len(body):
        # Sizes are drawn in batches of about what the body needs: one call, not one a piece.
        for size in rng.choices(_PIECE_SIZES, k=(len(body) - at) // _MEAN_PIECE + 1):
            chunks.append(body[at : at + size])
            at += size
            if at >= len(body):
                break
    return chunks


class CassetteTransport(httpx.BaseTransport):
    """Answers from ``cassette`` or records into it, as vcrpy's record modes say.

    ``none``: play, or raise ``NotInCassette``; ``once``: like ``none`` for a cassette loaded from
    a file, else record; ``new_episodes``: play what the cassette holds, record the rest; ``all``:
    record everything anew. Repeated identical requests get their recorded answers in order.
    With ``rng``, played bodies come back in random pieces. ``cassette`` may be swapped between
    runs. What the client read, played or recorded, is in its exchange (``LiveTransport``'s tee).
    """

    def __init__(
        self,
        cassette: Cassette,
        inner: httpx.BaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.cassette = cassette
        self._rng = rng
        self._live = RecordingTransport(self._recorded, inner)
        self._indexed: Cassette | None = None
        self._known = 0
        self._index: dict[tuple[str, str, str], list[int]] | None = None
        self._next = 0
        self._next_of: object = None

    def _recorded(self, interaction: Interaction) -> None:
        self.cassette.append(*interaction)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # Only a cassette loaded from a file plays: what this run recorded is not played back to
        # it, so a repeated request is sent (and recorded) again, as its replay will ask for it.
        if self.cassette.record_mode != RecordMode.ALL and self.cassette.rewound:
            recorded = self._play(_asked(request))
            if recorded is not None:
                return self._played(request, recorded)
            if self.cassette.write_protected:
                raise NotInCassette(self._divergence(_vcr_request(request)))
        return self._live.handle_request(request)

    def _play(self, asked: _Asked) -> dict[str, Any] | None:
        """The first unplayed answer to ``asked``, marked played; None if there is none.

        The same match as the cassette's matchers (method, path, JSON body as data). A replay
        asks in recorded order, so the first unplayed interaction is tried first, by its bytes
        (equal bytes are equal JSON); only a request that is not the next one goes through an
        index of canonical bodies: vcrpy's own lookup re-parses every recorded body each time.
        """
        cassette = self.cassette
        if self._indexed is not cassette:
            # What this run records into the cassette is not played back: only what it held.
            self._indexed, self._known, self._index = cassette, len(cassette.data), None
        counts = cassette.play_counts
        if self._next_of is not counts:  # a new cassette, or the same one rewound
            self._next, self._next_of = 0, counts
        while self._next < self._known and counts[self._next]:
            self._next += 1
        if self._next < self._known:
            stored = cassette.data[self._next][0]
            if (stored.body, stored.method, stored.path) == (asked.body, asked.method, asked.path):
                counts[self._next] += 1
                return cassette.data[self._next][1]  # type: ignore[no-any-return]
        if self._index is None:
            self._index = {}
            for i in range(self._known):
                self._index.setdefault(_key(cassette.data[i][0]), []).append(i)
        for i in self._index.get(_key(asked), ()):
            if counts[i] == 0:
                counts[i] += 1
                return cassette.data[i][1]  # type: ignore[no-any-return]
        return None

    def _played(self, request: httpx.Request, recorded: dict[str, Any]) -> httpx.Response:
        body = recorded["body"]["string"]
        if isinstance(body, str):
            body = body.encode("utf-8")
        chunks = split_at_random(body, self._rng) if self._rng else [body]
        headers = [(k, v) for k, values in recorded.get("headers", {}).items() for v in values]
        return httpx.Response(
            recorded["status"]["code"], headers=headers, stream=_Chunks(chunks), request=request
        )

    def _divergence(self, asked: VcrRequest) -> str:
        where = Path(str(self.cassette.path)).name
        number = sum(self.cassette.play_counts.values()) + 1
        head = f"request not in cassette {where}: request {number}, POST {asked.path}"
        best = self.cassette.find_requests_with_most_matches(asked)
        if not best:
            return f"{head}: matches no recorded one"
        _, _, fails = best[0]
        if not fails:
            return f"{head}: every matching answer was already played"
        return f"{head}: {_one_line(str(fails[0][1]))}"

    def close(self) -> None:
        self._live.close()


class ReplayTransport(CassetteTransport):
    """Answers each request from ``cassette`` and never touches the network."""

    def __init__(self, cassette: Cassette, rng: random.Random | None = None) -> None:
        super().__init__(cassette, rng=rng, inner=_NoNetwork())


class _NoNetwork(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raise NotInCassette(f"request not in cassette: {request.method} {request.url.path}")
