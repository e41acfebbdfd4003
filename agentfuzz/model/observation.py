"""What came back: the raw exchange, the assembled turn, and the violations oracles find in it.

These are plain frozen dataclasses: they are built once per request on the hot path and never
validated from outside input, so pydantic would only cost time here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentfuzz.model.history import Case

__all__ = [
    "NOT_SERVED",
    "BackendRequest",
    "Exchange",
    "ItemSighting",
    "Observation",
    "ObservedCall",
    "Related",
    "SSEEvent",
    "Violation",
]


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event as it arrived: the ``event:`` field (if any) and the raw ``data:``."""

    event: str | None
    data: str


# How a failure says the answer was slow, not broken: the time budget ran out before the server
# sent anything, or while it was still sending. A stream that went silent after it had begun, or
# a body cut off mid-way, stays a failure: the server stopped making progress.
SLOW = "slow answer: "

# Statuses that say the request never reached a model: a wrong key, path or model name, or a
# rate limit. Whatever body comes with one (a router's plain-text 404 page) is not the server's
# answer to the request, so no oracle judges it.
NOT_SERVED = frozenset({401, 403, 404, 405, 429})


@dataclass(frozen=True)
class Exchange:
    """One request and whatever the transport saw of its answer, before any interpretation.

    ``failure`` is set when the transport itself failed mid-answer (connection reset,
    timeout, a stream that stopped): the status and partial body are still kept. A failure
    that starts with ``SLOW`` is a slow answer, not a fault: the time budget ran out while the
    server had sent nothing yet or was still sending (``slow``). The exchange
    carries its own recording: the request headers as sent (never a key or a cookie), the
    response's status line and headers, and ``raw``, the body bytes as the client read them
    off the wire (still content-encoded, cut where the answer was cut). A cassette is made
    from exactly that.
    """

    url: str
    # The JSON body sent, or (a malformed body) the exact text sent.
    request: dict[str, Any] | str
    stream: bool
    status: int | None = None
    content_type: str = ""
    body: str = ""
    events: tuple[SSEEvent, ...] = ()
    failure: str | None = None
    elapsed: float = 0.0
    request_headers: tuple[tuple[str, str], ...] = ()
    reason: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    raw: bytes = b""

    @property
    def slow(self) -> bool:
        """Whether the answer ran out of time with the server still at work: no oracle judges
        it (a slow model is not a server fault), the run counts it."""
        return self.failure is not None and self.failure.startswith(SLOW)


@dataclass(frozen=True)
class ObservedCall:
    """A tool call as the client assembled it.

    For chat, ``index`` is the streamed ``index`` (or the position in ``tool_calls``) and
    ``id`` the call id. For Responses, ``index`` is the ``output_index``, ``id`` the item id
    and ``call_id`` the call id.
    """

    index: int | None
    id: str | None
    name: str | None
    arguments: str
    call_id: str | None = None
    namespace: str | None = None

    @property
    def flat_name(self) -> str | None:
        """The name as a history's call names its tool (``history.ToolCall.flat_name``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class ItemSighting:
    """One sighting of a Responses output item's identity, at one phase of the stream."""

    phase: Literal["added", "done", "completed"]
    output_index: int
    type: str
    id: str | None
    call_id: str | None = None


@dataclass(frozen=True)
class BackendRequest:
    """One request body the backend behind a proxy received (middleman mode), with its URL path.

    ``read`` is the body as the importer reads it (``dialects.proxied``): a case, or the
    one-line reason it cannot be read; None until the pipeline has read it.
    """

    path: str
    body: dict[str, Any]
    read: Case | str | None = None


@dataclass(frozen=True)
class Observation:
    """The turn as the client saw it, assembled from an ``Exchange``.

    ``errors`` lists protocol-level faults found while assembling (HTTP 5xx, a non-JSON body,
    an SSE ``error`` frame, ``response.failed``, a stream without its terminal event, a
    transport failure); each is a short kind plus detail, e.g. ``("error_frame", "<raw>")``.
    ``refused`` marks a 4xx with a JSON error body: a legitimate refusal, not a failure.
    """

    exchange: Exchange
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ObservedCall, ...] = ()
    finish_reason: str | None = None
    status: str | None = None
    sightings: tuple[ItemSighting, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    stream_indexes: tuple[int | None, ...] = ()
    payloads: tuple[Any, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()
    refused: bool = False
    # The Responses reasoning item's id, as the final answer gives it (a session echoes it).
    reasoning_id: str | None = None
    # The Responses answer's own id (``resp_…``), which a later turn may name as
    # ``previous_response_id``; the terminal event's word on it wins in a stream.
    response_id: str | None = None
    # The Responses answer's output item types in order, as its final word lists them (the
    # body, or the terminal event of a stream); empty without one.
    output_types: tuple[str, ...] = ()
    # Output agentfuzz does not model, by type: a custom tool's call (chat ``custom``,
    # Responses ``custom_tool_call``), a hosted tool's (``web_search_call``…), a chat legacy
    # ``function_call``. Not in ``tool_calls``: their input is not JSON arguments, no
    # function declared them, or (legacy) they have no id to judge.
    others: tuple[str, ...] = ()
    # Middleman mode: what the backend received while this request was in flight (None otherwise).
    backend: tuple[BackendRequest, ...] | None = None
    # Middleman mode: the body the client sent the proxy, read as the backend's are (a case, or why
    # the importer cannot read it); None outside middleman mode and for a raw body.
    sent: Case | str | None = None
    # The answers to the requests related to this one (``request.relations``), in the order
    # they were sent: a partner the case's relation derives, and under ``--differential`` the
    # same request with ``stream`` flipped.
    related: tuple[Related, ...] = ()

    @property
    def api(self) -> str:
        return "responses" if self.exchange.url.rstrip("/").endswith("/responses") else "chat"

    @property
    def twin(self) -> Observation | None:
        """The answer to the same request with ``stream`` flipped, when one was sent."""
        return self.partner("stream")

    def partner(self, relation: str) -> Observation | None:
        """The answer to the request ``relation`` paired with this one, if it was sent."""
        return next((r.observation for r in self.related if r.relation == relation), None)


@dataclass(frozen=True)
class Related:
    """The answer to a request related to an observed one, and the relation's name."""

    relation: str
    observation: Observation


@dataclass(frozen=True)
class Violation:
    """One oracle's finding: its name, a one-line message, the evidence, and a signature.

    Two violations with the same ``(oracle, signature)`` are the same bug; the signature
    leaves out ids, texts and anything else that changes from example to example.
    """

    oracle: str
    message: str
    evidence: str = ""
    signature: str = field(default="")

    @property
    def key(self) -> tuple[str, str]:
        return (self.oracle, self.signature or self.message)
