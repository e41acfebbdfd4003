"""``agentfuzz proxy``'s judge: a real agent's traffic, turn by turn, told apart into sessions.

The relay (``transport/relay.py``) hands over each chat and Responses exchange once the client
has read it. Here each one is imported as a ``Case`` (what the request asked), assembled by the
one client pipeline (``Target.resend`` over the kept answer, so it is assembled exactly as a
live answer is) and judged by every oracle that applies; an answer the relay cut (past its bytes
or its time) is judged by none, and one line says so. Requests are grouped into sessions by
``previous_response_id`` or by their growing history: a request whose messages or input extend an
earlier request's continues its session (the one whose answer it holds, when several could). Two
clients may open with the same request: the same history sent again after a whole answer opens a
new session, and only after an answer the openai SDK retries (a 5xx, 408, 409, 429, or one
cut short) is it that session's retry. The session oracles then know which history items are the
server's own, sent back unchanged (``Provenance``), as they do in session mode.

A turn whose fault was not seen before prints one line and writes a bundle at once: the failing
request, the whole session up to it (``session.json``) and the session as a cassette
(``session.yaml``). With ``record`` every session is also written there as it grows. Judging
runs on a thread of its own, so the client never waits for it; ``close`` judges what is still
queued, so Ctrl-C loses nothing that was forwarded.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz.errors import InputError
from agentfuzz.judge.judge import Judge
from agentfuzz.judge.session import Turn
from agentfuzz.model.files import write_atomically
from agentfuzz.model.history import Api, AssistantMessage, Case, ForeignItem, Provenance, ToolResult
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.output.findings.bundle import Repro, observed_summary, session_json, write_bundle
from agentfuzz.tape.codec import Recorded, write_cassette
from agentfuzz.wire.dialects import parse_request
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.live import BODY_LIMIT, LiveTransport
from agentfuzz.wire.transport.relay import Forwarded, relay_app, replayed, run_relay, serving_relay

__all__ = ["Caught", "Watch", "reachable", "run_proxy", "watching"]


@dataclass(frozen=True)
class Caught:
    """A fault seen for the first time: which session and turn, and the bundle written."""

    session: int
    turn: int
    violation: Violation
    folder: Path


@dataclass
class _Session:
    number: int
    # The last request's history items, each as canonical JSON: a later request that begins
    # with them continues this session.
    items: list[str] = field(default_factory=list)
    response_ids: set[str] = field(default_factory=set)
    turns: list[Turn] = field(default_factory=list)
    # What the server said: its calls by call id (name, arguments) and its texts.
    calls: dict[str, tuple[str | None, Any]] = field(default_factory=dict)
    texts: set[str] = field(default_factory=set)
    last_calls: tuple[str, ...] = ()
    # What the last answer said that a history holding it shows: its ids, its text as JSON.
    said: tuple[str, ...] = ()


# The statuses after which the openai SDK sends the same request again.
_RETRIED = frozenset({408, 409, 429})


def _retried(turn: Turn) -> bool:
    """Whether a client sends ``turn``'s request again as it was: its answer failed the way
    the openai SDK retries (a 408, 409, 429 or 5xx), or never came whole."""
    exchange = turn.observation.exchange
    status = exchange.status
    return exchange.failure is not None or status is None or status in _RETRIED or status >= 500


def _follows(session: _Session, added: list[str]) -> bool:
    """Whether the items a request adds to ``session``'s last history hold its last answer."""
    return any(mark in item for item in added for mark in session.said)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _wire_items(body: dict[str, Any]) -> list[str]:
    items = body.get("messages", body.get("input"))
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    return [_canonical(i) for i in items] if isinstance(items, list) else []


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


class _Sessions:
    """The sessions seen so far; ``place`` finds (or opens) a request's own."""

    def __init__(self) -> None:
        self.all: list[_Session] = []

    def place(self, body: dict[str, Any], items: list[str]) -> _Session:
        """``items``: the body's history items as ``_wire_items`` gives them."""
        previous = body.get("previous_response_id")
        if isinstance(previous, str):
            for session in reversed(self.all):
                if previous in session.response_ids:
                    return session
        extended = [
            s
            for s in self.all
            if 0 < len(s.items) < len(items) and items[: len(s.items)] == s.items
        ]
        if extended:
            # The longest history it extends; of equals, the one whose answer it holds, then
            # the newest: clients run one after another, and an older one is done.
            return max(
                extended, key=lambda s: (len(s.items), _follows(s, items[len(s.items) :]), s.number)
            )
        again = [s for s in self.all if items and s.items == items and _retried(s.turns[-1])]
        if again:
            return again[-1]
        opened = _Session(len(self.all) + 1)
        self.all.append(opened)
        return opened


def _provenance(case: Case, session: _Session, turn: int) -> Provenance:
    """Where the request's history came from, told conservatively: ``untouched`` only when
    every assistant message is the server's own, call for call (id, name and arguments) and
    word for word; ``echoed`` the last answer's call ids sent back with their results."""
    untouched = True
    for item in case.history.items:
        if isinstance(item, ForeignItem):
            untouched = False
        if not isinstance(item, AssistantMessage):
            continue
        if item.text and item.text.strip() and item.text not in session.texts:
            untouched = False
        for call in item.tool_calls:
            said = session.calls.get(call.id)
            if said is None or said != (call.flat_name, _arguments(call.arguments)):
                untouched = False
    calls = {c.id for c in case.history.calls}
    results = {i.call_id for i in case.history.items if isinstance(i, ToolResult)}
    echoed = tuple(i for i in session.last_calls if i in calls and i in results)
    return Provenance(turn=turn, untouched=untouched, echoed=echoed)


def _remember(session: _Session, obs: Observation) -> None:
    """What the server said in this turn, for the next turn's provenance."""
    if obs.text.strip():
        session.texts.add(obs.text)
    ids = []
    for call in obs.tool_calls:
        own = call.call_id or call.id
        if own:
            name = f"{call.namespace}__{call.name}" if call.namespace else call.name
            session.calls[own] = (name, _arguments(call.arguments))
            ids.append(own)
    session.last_calls = tuple(ids)
    items = [c.id for c in obs.tool_calls if c.id]
    text = [_canonical(obs.text)[1:-1]] if obs.text.strip() else []
    session.said = (*ids, *items, *text)
    if obs.response_id:
        session.response_ids.add(obs.response_id)


class Watch:
    """Judges forwarded exchanges on a thread of its own; see the module's first lines."""

    def __init__(
        self,
        upstream: str,
        out: Path,
        record: Path | None = None,
        found_by: dict[str, Any] | None = None,
        only: Collection[str] | None = None,
        skip: Collection[str] = (),
        model_signatures: tuple[str, ...] = (),
        markup: Collection[str] = (),
        say: Callable[[str], None] = print,
        timeout: float = 600.0,
        hint: str | None = None,
    ) -> None:
        """``timeout``: the seconds the relay gives one answer in all. ``hint``: what to say
        the first time the upstream answers 404 (a URL without its ``/v1``, say)."""
        self.upstream = upstream.rstrip("/")
        self.timeout, self.hint = timeout, hint
        self.out, self.record, self.found_by, self.say = out, record, found_by, say
        self.judge = Judge(
            _sends_nothing,
            only=only,
            skip=skip,
            model_signatures=model_signatures,
            markup=markup,
        )
        self.sessions = _Sessions()
        self.caught: list[Caught] = []
        self.exchanges = 0
        self.judged = 0
        self.unread = 0
        self.cut = 0
        self._bundles: dict[tuple[str, str], Path] = {}
        self._queue: queue.Queue[Forwarded | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="agentfuzz-watch", daemon=True)
        self._thread.start()

    def take(self, forwarded: Forwarded) -> None:
        """Queue one exchange for judging (the relay's ``seen``; never blocks)."""
        self._queue.put(forwarded)

    def close(self) -> None:
        """Judge what is still queued, then stop."""
        self._queue.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (forwarded := self._queue.get()) is not None:
            try:
                self.judge_one(forwarded)
            except Exception as exc:  # one exchange must never stop the watch
                self.say(f"agentfuzz proxy: could not judge a {forwarded.path} exchange: {exc}")

    def judge_one(self, forwarded: Forwarded) -> list[Caught]:
        """Judge one exchange (on the calling thread); write a bundle for each fault it shows
        that no earlier turn showed."""
        self.exchanges += 1
        if forwarded.status is None or forwarded.client_left:
            return []  # never answered, or cut short by the client itself: nothing to judge
        if forwarded.cut:
            self.cut += 1
            self.say(
                f"an answer to {forwarded.path} went on past {BODY_LIMIT >> 20} MiB: relayed, "
                "but not judged (the proxy keeps no more of one answer)"
            )
            return []
        read = self._read(forwarded)
        if read is None:
            return []
        case, body = read
        model = body.get("model")
        with Target(
            self.upstream, str(model or ""), transport=replayed(forwarded), timeout=600.0
        ) as target:
            obs = target.resend(forwarded.path, body, case.stream, failed=forwarded.failure)
        items = _wire_items(body)
        session = self.sessions.place(body, items)
        number = len(session.turns) + 1
        case = case.model_copy(update={"session": _provenance(case, session, number)})
        found = self.judge.check(case, obs)
        turn = Turn(number, case, obs, tuple(found))
        session.turns.append(turn)
        session.items = items
        _remember(session, obs)
        self.judged += 1
        if obs.exchange.slow:
            self.say(
                f"session {session.number} turn {number}: {obs.exchange.failure} (--timeout "
                f"{self.timeout:g}s): the client's connection was dropped; not judged"
            )
        if self.record is not None:
            self._write_session(self.record / f"session-{session.number:04d}", session)
        caught = []
        for v in self.judge.faults(found):
            if v.key not in self._bundles:
                caught.append(self._caught(session, turn, body, v, model))
        return caught

    def _read(self, forwarded: Forwarded) -> tuple[Case, dict[str, Any]] | None:
        """The request as a ``Case`` and its JSON body; None (counted) for one that is not a
        chat or Responses request."""
        try:
            loaded = json.loads(forwarded.body)
        except (ValueError, RecursionError):
            loaded = None
        api: Api = "chat" if forwarded.path == "/chat/completions" else "responses"
        try:
            if not isinstance(loaded, dict):
                raise InputError("not a JSON object")
            return parse_request(loaded, api), loaded
        except InputError:
            self.unread += 1
            return None

    def not_found(self, path: str) -> None:
        """The relay's word that the upstream answered 404 (once): say what to try, when the
        upstream's URL itself suggests it (``hint``)."""
        if self.hint:
            self.say(f"{self.upstream}{path} answered 404 Not Found: {self.hint}")

    def _caught(
        self, session: _Session, turn: Turn, body: dict[str, Any], v: Violation, model: Any
    ) -> Caught:
        obs = turn.observation
        repro = Repro(
            url=obs.exchange.url,
            request=body,
            case=turn.case,
            violation=v,
            observed=observed_summary(obs) | {"evidence": v.evidence},
            reproduced="1/1 (as the client got it)",
            transcript=tuple(session.turns),
            observation=obs,
            found_by=self.found_by,
            target={"base_url": self.upstream, "model": model},
        )
        folder = write_bundle(self.out, repro)
        self._write_session(folder, session, json_too=False)
        self._bundles[v.key] = folder
        caught = Caught(session.number, turn.number, v, folder)
        self.caught.append(caught)
        self.say(
            f"session {session.number} turn {turn.number}: {v.oracle}: {v.message} "
            f"-> {folder / 'repro.json'}"
        )
        return caught

    def _write_session(self, folder: Path, session: _Session, json_too: bool = True) -> None:
        """The session so far as a cassette (``session.yaml``) and, unless a bundle wrote it
        already, as ``session.json``."""
        folder.mkdir(parents=True, exist_ok=True)
        recorded = [Recorded(t.observation, t.case, t.violations) for t in session.turns]
        about = {"target": self.upstream, "kind": "proxy-session", "session": session.number}
        write_cassette(folder / "session.yaml", recorded, about)
        if json_too:
            write_atomically(folder / "session.json", session_json(session.turns))


def _sends_nothing(case: Case) -> Observation:
    raise RuntimeError("the proxy judges what the client sent; it sends nothing of its own")


def _app(upstream: str, watch: Watch) -> Any:
    return relay_app(upstream, watch.take, watch.timeout, watch.not_found)


def watching(upstream: str, watch: Watch, host: str = "127.0.0.1", port: int = 0) -> Any:
    """A context manager serving the proxy in a background thread; yields its base URL."""
    return serving_relay(_app(upstream, watch), host, port)


def run_proxy(
    upstream: str, watch: Watch, host: str, port: int, listening: Callable[[str], None]
) -> None:
    """Serve the proxy until interrupted; ``OSError`` when the address cannot be listened on."""
    run_relay(_app(upstream, watch), host, port, listening)


def reachable(upstream: str) -> bool:
    """Whether the upstream takes a connection at all (any answer, however slow, says yes)."""
    with LiveTransport(upstream, timeout=10.0) as live:
        return live.accepts()
