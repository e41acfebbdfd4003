"""The target: a server seen through the client pipeline, live or through a campaign cassette.

``Target.observe(case)`` builds the request, sends it, assembles the answer; ``Target.resend``
sends a recorded body as it is. Every exchange carries its own recording (what was sent, the
bytes read), so the one that failed goes into its bundle's cassette as it came. With a record
mode, parts of a campaign play from (or record into) cassettes: ``with target.cassette(path,
about):`` for each part. In middleman mode a ``BackendLog`` behind the proxy gives each observation
the request bodies the backend received while it was in flight, read back as cases. Requests
related to a case (its stream-flipped twin) are the judge's business (``judge.py``): each is one
more ``observe``. What the requests used and how they were answered the run counts
(``runs.tally``): the target turns a case into an observation, nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx

from agentfuzz.errors import ModelListError
from agentfuzz.model.accepted import RECORD_MODES
from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.model.observation import NOT_SERVED, BackendRequest, Exchange, Observation
from agentfuzz.request.profiles import KnobDefaults
from agentfuzz.wire.dialects import assemble, build_request, proxied, wire_body
from agentfuzz.wire.transport.cassette import (
    CassetteError,
    CassetteTransport,
    load_cassette,
    new_cassette,
    save_cassette,
)
from agentfuzz.wire.transport.live import LiveTransport, network

__all__ = [
    "NOT_SERVED",
    "PUPPET_CANARY",
    "RECORD_MODES",
    "BackendLog",
    "Target",
    "first_model",
    "listed_models",
    "puppet_problem",
    "wait_for_server",
    "wire_items",
]

# NOT_SERVED (observation.py): a run where every answer is one of them tested nothing.


class BackendLog:
    """The request bodies a proxy's backend received, in order; ``add`` is the backend's hook.

    The backend calls ``add`` from its own thread while the client waits for the proxy, so
    the log is locked. A body that is not a JSON object is kept as ``{}`` (the oracle then
    says the backend got a request it cannot read).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: list[BackendRequest] = []

    def add(self, path: str, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None
        with self._lock:
            self._seen.append(BackendRequest(path, body if isinstance(body, dict) else {}))

    def take(self) -> tuple[BackendRequest, ...]:
        """What arrived since the last ``take``, forgotten here (a long run keeps no bodies)."""
        with self._lock:
            seen, self._seen = tuple(self._seen), []
        return seen


class Target:
    """A live server seen through the client pipeline: Case → request → Exchange → Observation."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        record_mode: str | None = None,
        knob_defaults: KnobDefaults | None = None,
        backend: BackendLog | None = None,
        transport: httpx.BaseTransport | None = None,
        recording: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``transport`` answers in the server's place (a replayed cassette, a mock); without
        ``recording`` exchanges carry no recording (an offline replay has its cassette).
        ``headers`` (``--header``) go with every request that reaches the network, below
        every recorder: no exchange, cassette or bundle holds them."""
        self.backend = backend
        self.base_url = base_url.rstrip("/")
        # Filled into every request that leaves a knob out: a slow real model needs its
        # max_tokens bounded and greedy sampling, even in what the shrinker simplifies.
        self.knob_defaults = {
            k: v for k, v in (knob_defaults or KnobDefaults()).model_dump().items() if v is not None
        }
        self.model = model
        self.record_mode = record_mode
        self.tape: CassetteTransport | None = None
        if record_mode is not None:
            # Until a part of the campaign opens its cassette, nothing may be sent.
            tape = new_cassette(Path("unopened.yaml"), "none")
            self.tape = CassetteTransport(tape, inner=network(headers))
            transport = self.tape
        # A target surely on the network (no cassette may answer for it) can be asked whether
        # it still lives (``alive``), and is worth waiting for when it says it is busy.
        networked = transport is None and record_mode in (None, "all")
        self.transport = LiveTransport(
            self.base_url,
            api_key,
            timeout,
            transport,
            recording,
            headers=headers,
            patient=networked,
        )
        self._network = (api_key, headers) if networked else None
        self.calls = 0
        self.answered = 0
        self.last_answered: tuple[Case, Observation] | None = None
        self.not_served = 0
        self.last_not_served = ""

    @contextlib.contextmanager
    def cassette(self, path: Path, about: dict[str, Any]) -> Iterator[None]:
        """Play or record the requests sent inside the block with the cassette at ``path``."""
        if self.tape is None or self.record_mode is None:
            yield
            return
        mode = self.record_mode
        if path.exists() and mode != "all":
            tape = load_cassette(path, mode)
        elif mode == "none":
            raise CassetteError(f"{path}: no such cassette (--record-mode none never records)")
        else:
            tape = new_cassette(path, mode)
        self.tape.cassette = tape
        try:
            yield
        finally:
            if tape.dirty:
                save_cassette(tape, {"agentfuzz": {**about, "kind": "campaign"}})

    def observe(self, case: Case) -> Observation:
        if self.knob_defaults:
            case = _with_defaults(case, self.knob_defaults)
        path, body = wire_body(case, self.model)
        if self.backend is not None:
            # Requests run one at a time, so what reaches the backend from here on is this one's.
            self.backend.take()
        obs = self.resend(path, body, case.stream)
        if self.backend is not None:
            obs = proxied(obs, self.backend.take())
        self.answered += 1
        said = _not_served(obs.exchange)
        if said is not None:
            self.not_served += 1
            self.last_not_served = said
        self.last_answered = (case, obs)
        return obs

    def resend(
        self, path: str, body: dict[str, Any] | str, stream: bool, failed: str | None = None
    ) -> Observation:
        """Send ``body`` as it is to ``path`` (relative to the base URL) and assemble the answer
        (a ``str`` is a malformed body, sent as that text).

        ``failed``: the transport failure recorded with a replayed answer, which stands for
        whatever the replay sees (the cassette holds only the bytes read before it).
        """
        self.calls += 1
        exchange = self.transport.send(path, body, stream)
        if failed is not None:
            exchange = dataclasses.replace(exchange, failure=failed)
        return assemble(exchange)

    def alive(self, tries: int = 3, pause: float = 0.5) -> bool:
        """After a connection dropped mid-answer: whether the server still takes a new one.
        Dead only when refused ``tries`` times, ``pause`` seconds apart; a replayed target
        always lives. The probe goes around any cassette: no recording holds it."""
        if self._network is None:
            return True
        api_key, headers = self._network
        with LiveTransport(self.base_url, api_key, headers=headers) as probe:
            for attempt in range(tries):
                if probe.accepts():
                    return True
                if attempt + 1 < tries:
                    time.sleep(pause)
        return False

    def describe(self) -> dict[str, Any]:
        """What a bundle records of the target: its base URL and model, and, when it is a live
        server (not a cassette), what it says about itself (``LiveTransport.about``)."""
        info: dict[str, Any] = {"base_url": self.base_url, "model": self.model}
        if self.tape is None:
            info |= self.transport.about()
        return info

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()


def _not_served(exchange: Exchange) -> str | None:
    """What an answer that never reached a model says, in short (a status and its body, or
    where a redirect leads); None for any other answer. A redirect is the target's
    configuration: a run where every answer is one tested nothing, and says where it leads."""
    status = exchange.status
    if status is not None and 300 <= status < 400 and not exchange.failure:
        where = next((v for k, v in exchange.headers if k.lower() == "location"), "")
        return f"{status} (a redirect to {' '.join(where.split())[:120] or 'nowhere'})"
    if status in NOT_SERVED:
        return f"{status} {' '.join(exchange.body.split())[:120]}"
    return None


def _with_defaults(case: Case, defaults: dict[str, Any]) -> Case:
    options = case.options
    unset = {k: v for k, v in defaults.items() if getattr(options, k) is None}
    if not unset:
        return case
    return case.model_copy(update={"options": options.model_copy(update=unset)})


def wait_for_server(
    base_url: str,
    seconds: float,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> bool:
    """Poll ``GET /models`` until it answers 200 (True) or ``seconds`` pass (False): a server
    that is still loading its model is not a target gone."""
    deadline = time.monotonic() + seconds
    pause = 0.05
    with LiveTransport(base_url, api_key, headers=headers) as live:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if live.ready(min(left, 10.0)):
                return True
            time.sleep(min(pause, max(deadline - time.monotonic(), 0.0)))
            pause = min(pause * 2, 1.0)


def listed_models(
    base_url: str,
    api_key: str | None,
    timeout: float,
    headers: Mapping[str, str] | None = None,
) -> list[str]:
    """The model ids ``GET /models`` lists, in the server's order: what ``--model`` is checked
    against. Raises ``TargetUnreachable`` or ``ModelListError``, as ``first_model`` does."""
    with LiveTransport(base_url, api_key=api_key, timeout=timeout, headers=headers) as transport:
        return transport.models()


def first_model(
    base_url: str,
    api_key: str | None,
    timeout: float,
    headers: Mapping[str, str] | None = None,
) -> str:
    """The first model ``GET /models`` lists: what a run asks for when told no model.

    Raises ``TargetUnreachable``, or ``ModelListError`` (one line) for an answer that is not a
    model list or lists none.
    """
    with LiveTransport(base_url, api_key=api_key, timeout=timeout, headers=headers) as transport:
        models = transport.models()
    if not models:
        raise ModelListError(f"{base_url.rstrip('/')}/models lists no model")
    return models[0]


# What a puppet server is asked to write before a ``--puppet`` run: text no model writes alone.
PUPPET_CANARY = "agentfuzz puppet canary: 7f3a 0x2c19 kestrel"


def puppet_problem(
    base_url: str,
    model: str,
    api_key: str | None,
    timeout: float,
    headers: Mapping[str, str] | None = None,
) -> str | None:
    """Why ``--puppet`` cannot run against this server, or None: a request scripted to write
    ``PUPPET_CANARY`` must come back with that text. A server without the processor answers
    with what its model writes, and judging that against a script would blame the server for
    the model."""
    from agentfuzz.puppet import channel

    fields = {"vllm_xargs": channel.encode(channel.Text(PUPPET_CANARY, "canary"))}
    history = History(items=(UserMessage(text="Say the canary."),))
    case = Case(history=history, options=Options(fields=fields), api="chat", stream=False)
    with Target(base_url, model, api_key, timeout, headers=headers, recording=False) as target:
        obs = target.observe(case)
    if obs.text.strip() == PUPPET_CANARY:
        return None
    said = f"HTTP {obs.exchange.status}" if obs.errors or obs.refused else repr(obs.text[:60])
    return (
        f"{base_url} does not write what a script says (asked for the canary, got {said}): "
        "start it with the puppet processor (agentfuzz puppet vllm-args)"
    )


def wire_items(case: Case) -> int:
    """How many messages (chat) or input items (Responses) ``case`` sends."""
    _, body = build_request(case, "m")
    items = body.get("messages", body.get("input"))
    return len(items) if isinstance(items, list) else 0
