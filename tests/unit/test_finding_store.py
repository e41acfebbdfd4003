"""The finding store keeps the smallest request per failure, and the session that showed it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.judge.session import Turn
from agentfuzz.model.history import Case, History, Provenance, UserMessage
from agentfuzz.model.observation import Exchange, Observation, SSEEvent, Violation
from agentfuzz.output.findings.store import FindingStore

URL = "http://127.0.0.1:9/v1/responses"
V = Violation("empty_turn", "nothing", "", "empty_turn")


def _case(*texts: str, turn: int | None = None) -> Case:
    history = History(items=tuple(UserMessage(text=t) for t in texts))
    return Case(history=history, session=None if turn is None else Provenance(turn=turn))


def _obs(case: Case, stream: bool = False) -> Observation:
    request = {"input": [it.model_dump() for it in case.history.items]}
    events = (SSEEvent("response.created", '{"type":"response.created"}'),) if stream else ()
    ex = Exchange(URL, request, stream, 200, body="" if stream else "{}", events=events)
    return Observation(exchange=ex)


def _session(*cases: Case) -> tuple[Turn, ...]:
    return tuple(Turn(n, c, _obs(c, stream=n % 2 == 0), (V,)) for n, c in enumerate(cases, 1))


def _written(store: FindingStore) -> dict[str, Any]:
    (finding,) = store.by_key.values()
    return json.loads((finding.bundle / "session.json").read_text())


def test_session_json_holds_every_turn_whole(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    first, second = _case("a", turn=1), _case("a", "b", turn=2)
    store.offer(V, second, _obs(second), _session(first, second))
    doc = _written(store)
    turns = doc["turns"]
    assert [t["turn"] for t in turns] == [1, 2]
    assert turns[0]["request"] == _obs(first).exchange.request
    assert turns[0]["response"]["body"] == "{}"
    assert turns[1]["response"]["events"] == [
        {"event": "response.created", "data": '{"type":"response.created"}'}
    ]
    assert turns[1]["violations"] == [{"oracle": "empty_turn", "message": "nothing"}]


def test_a_reduced_request_keeps_the_session_it_came_from(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    big = _case("a", "b", "c", turn=2)
    store.offer(V, big, _obs(big), _session(_case("a", turn=1), big))
    small = _case("c", turn=2)
    store.offer(V, small, _obs(small))  # what reduction offers: one request, no session
    (finding,) = store.by_key.values()
    assert finding.case == small
    assert len(finding.transcript) == 2
    assert len(_written(store)["turns"]) == 2


def test_a_smaller_synthetic_finding_still_gains_the_session(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    synthetic = _case("x")
    store.offer(V, synthetic, _obs(synthetic))
    (finding,) = store.by_key.values()
    assert not (finding.bundle / "session.json").exists()
    bigger = _case("a", "b", turn=1)
    store.offer(V, bigger, _obs(bigger), _session(bigger))
    assert finding.case == synthetic
    assert len(_written(store)["turns"]) == 1


def test_a_smaller_session_case_brings_its_own_session(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    big = _case("a", "b", "c", turn=3)
    store.offer(V, big, _obs(big), _session(_case("a", turn=1), _case("a", "b", turn=2), big))
    small = _case("a", turn=1)
    store.offer(V, small, _obs(small), _session(small))
    (finding,) = store.by_key.values()
    assert finding.case == small and len(finding.transcript) == 1


FIVE = Violation("error", "500", "", "error:http_status:500")


def _fields(**fields: Any) -> Case:
    case = _case("hi")
    return case.model_copy(update={"options": case.options.model_copy(update={"fields": fields})})


def test_a_bare_500_is_split_by_what_each_reduced_repro_needs(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    with_stop, with_n = _fields(stop=["x"], user="u"), _fields(n=2, user="u")
    for case in (with_stop, with_n, _fields(stop=["x"], n=2)):
        store.offer(FIVE, case, _obs(case))
    # The best example was reduced to a stop list: signed by it, its bundle moved.
    store.offer(FIVE, _fields(stop=["x"]), _obs(_fields(stop=["x"])))
    first = store.split(FIVE.key)
    assert first.violation.signature == "error:http_status:500:needs:stop"
    assert [p.parent.name for p in tmp_path.glob("*/repro.json")] == [first.bundle.name]
    # Only the example without a stop list is another fault's candidate; reduced to n alone.
    alternate = store.next_alternate(FIVE.key)
    assert alternate is not None and alternate.case == with_n
    store.offer(FIVE, _fields(n=2), _obs(_fields(n=2)))  # what its reduction offers
    second = store.settle_alternate(FIVE.key)
    assert second is not None and second.violation.signature.endswith(":needs:n")
    assert store.next_alternate(FIVE.key) is None
    assert {k[1] for k in store.by_key} == {
        "error:http_status:500:needs:stop",
        "error:http_status:500:needs:n",
    }
    # From now on the symptom goes to the finding whose needs a request has.
    store.offer(FIVE, _fields(n=3, user="v"), _obs(_fields(n=3, user="v")))
    assert store.by_key[("error", "error:http_status:500:needs:n")].case == _fields(n=2)


def test_an_alternate_reduced_to_less_than_a_finding_needs_takes_its_place(
    tmp_path: Path,
) -> None:
    store = FindingStore(tmp_path)
    stop_user = _fields(stop=["x"], user="u")
    store.offer(FIVE, stop_user, _obs(stop_user))
    store.offer(FIVE, _fields(stop=["x"], n=2), _obs(_fields(stop=["x"], n=2)))
    store.split(FIVE.key)  # reduced no further than stop and user
    assert store.next_alternate(FIVE.key) is not None
    store.offer(FIVE, _fields(stop=["x"]), _obs(_fields(stop=["x"])))
    settled = store.settle_alternate(FIVE.key)
    # The same fault, reduced further: one finding, needing the stop list alone.
    assert settled is not None
    assert [k[1] for k in store.by_key] == ["error:http_status:500:needs:stop"]
    assert len(list(tmp_path.glob("*/repro.json"))) == 1


def test_a_split_stopped_while_it_writes_keeps_the_bundle_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C lands while a reduced symptom's bundle moves to its new name: the old one stays
    until the new one is written, so one of them is always on disk."""
    store = FindingStore(tmp_path)
    case = _fields(stop=["x"])
    store.offer(FIVE, case, _obs(case))
    (before,) = store.by_key.values()
    assert (before.bundle / "repro.json").is_file()

    def stopped(self: FindingStore, finding: object) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(FindingStore, "write", stopped)
    with pytest.raises(KeyboardInterrupt):
        store.split(FIVE.key)
    assert [p.parent for p in tmp_path.glob("*/repro.json")] == [before.bundle]
