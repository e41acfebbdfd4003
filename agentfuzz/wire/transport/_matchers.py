"""How a cassette's requests are matched: method, path, and the JSON body compared as data (key
order ignored), with a message saying where a request differs from the recorded one. The host and
port are left out on purpose: the reference server gets a fresh port every run. No body field is
ignored: agentfuzz's bodies are a pure function of the case and the model name.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple
from urllib.parse import urlparse

import httpx
from vcr.request import Request as VcrRequest

__all__ = ["Asked", "asked", "json_body", "key", "path"]


def json_body(r1: VcrRequest, r2: VcrRequest) -> None:
    """vcrpy matcher: equal JSON bodies, key order ignored; the message says what differs."""
    a, b = _as_json(r1.body), _as_json(r2.body)
    if a != b:
        raise AssertionError(_difference(a, b))


def path(r1: VcrRequest, r2: VcrRequest) -> None:
    if r1.path != r2.path:
        raise AssertionError(f"path {r1.path} != {r2.path}")


def _as_json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):
        # A malformed body (not JSON, or nested past what the parser takes) is its text.
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


class Asked(NamedTuple):
    """What a request is matched by, as ``VcrRequest`` gives it: method, URL path, body bytes."""

    method: str
    path: str
    body: bytes | None


def asked(request: httpx.Request) -> Asked:
    # The path as vcrpy's Request parses it from the URL, so both sides compare alike.
    return Asked(request.method, urlparse(str(request.url)).path, request.content)


def key(request: VcrRequest | Asked) -> tuple[str, str, str]:
    """What a request is matched by, as one hashable value: method, path, canonical body."""
    body = _as_json(request.body)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (request.method, request.path, canonical)
