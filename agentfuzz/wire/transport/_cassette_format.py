"""Cassettes in vcrpy's format: written readable (SSE bodies as literal blocks), never with a key
or a cookie (nor a secret the server echoed: ``model.secrets``), loaded strictly (anything
wrong is one ``CassetteError`` line), saved at once. An ``Exchange`` becomes a vcrpy
interaction here, from the recording it carries. vcrpy owns the format (``version``,
``interactions``, ``metadata``), the header filters and the matching; some of its private
attributes are set here for speed, which ``tests/replay/test_fast_paths.py`` checks against
the pinned vcrpy.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

import httpx
import vcr
import yaml
from vcr.cassette import Cassette
from vcr.errors import MissingMetadataError
from vcr.request import Request as VcrRequest
from vcr.serialize import deserialize as vcr_deserialize
from vcr.serialize import serialize as vcr_serialize

from agentfuzz.errors import CassetteError
from agentfuzz.model.files import write_atomically
from agentfuzz.model.observation import Exchange
from agentfuzz.model.secrets import masked
from agentfuzz.wire.transport import _matchers
from agentfuzz.wire.transport._tee import SECRET_HEADERS
from agentfuzz.wire.transport._yaml import SafeLoader

__all__ = [
    "Interaction",
    "headers_of",
    "interaction_of",
    "load_cassette",
    "metadata",
    "new_cassette",
    "one_line",
    "save_cassette",
    "vcr_request",
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
        # Masked before it is laid out: the emitter may fold a secret a server echoed across
        # two lines, where the mask of the written text would miss it.
        data = masked(data)
        return yaml.dump(data, Dumper=cls._Dumper, allow_unicode=True, sort_keys=False, width=100)

    @staticmethod
    def deserialize(text: str) -> Any:
        return yaml.load(text, Loader=SafeLoader)


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
_VCR.register_matcher("agentfuzz-path", _matchers.path)
_VCR.register_matcher("agentfuzz-json-body", _matchers.json_body)


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


def one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def load_cassette(path: Path, record_mode: str = "none") -> Cassette:
    """The cassette at ``path``, checked strictly: unlike vcrpy's own loader, which treats an
    unreadable file as empty, anything wrong is a ``CassetteError`` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"{path}: cannot read: {one_line(str(exc))}") from None
    try:
        data = _ReadableYaml.deserialize(text)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{path}: not valid YAML: {one_line(str(exc))}") from None
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
        raise CassetteError(f"{path}: not a vcrpy cassette: {one_line(str(exc))}") from None


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


def headers_of(headers: httpx.Headers) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in headers.multi_items():
        out.setdefault(name, []).append(value)
    return out


def vcr_request(request: httpx.Request) -> VcrRequest:
    return VcrRequest(request.method, str(request.url), request.content, request.headers)


def interaction_of(exchange: Exchange) -> Interaction | None:
    """``exchange`` as a vcrpy interaction, from the recording it carries: the request as sent
    (``LiveTransport`` sends exactly ``json.dumps(request)``, or a malformed body's text) and
    the answer's bytes as read. None when no answer came at all (the connection failed before a
    status line)."""
    if exchange.status is None:
        return None
    sent = exchange.request
    content = sent.encode() if isinstance(sent, str) else json.dumps(sent).encode()
    request = VcrRequest("POST", exchange.url, content, dict(exchange.request_headers))
    response = {
        "status": {"code": exchange.status, "message": exchange.reason},
        "headers": headers_of(httpx.Headers(list(exchange.headers))),
        "body": {"string": exchange.raw},
    }
    return request, response
