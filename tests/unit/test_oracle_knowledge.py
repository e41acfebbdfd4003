"""What each oracle means, stated where it is registered, and read from there by the report, the
fold, the judge and the merge of shards."""

from __future__ import annotations

from typing import Any

import pytest

from agentfuzz import oracles
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles import (
    RANK_LAST,
    OracleInfo,
    _registry,
    implies,
    info,
    judged_by,
    names,
    rank,
    suspect,
)
from agentfuzz.output.reports.bundle import look_for, report_text
from agentfuzz.request.relations import RELATIONS

# Which of one cause's symptoms names it, first to last, as the fold has always read it.
PRECEDENCE = [
    "error",
    "wire_schema",
    "self_rejection",
    # The truth of what the model wrote names a cause before any symptom of it (a lost call is
    # also an empty turn, a leaked call also markup in the text).
    "puppet_truth",
    "puppet_cut",
    "empty_turn",
    "identity",
    "index_gap",
    "leaked_markup",
    "unknown_tool",
    "bad_arguments",
    "tool_choice",
]


def _about(name: str) -> OracleInfo:
    about = info(name)
    assert about is not None, name
    return about


@pytest.mark.parametrize("name", names())
def test_every_oracle_states_what_it_means(name: str) -> None:
    about = _about(name)
    assert about.expected.strip() and about.expected.endswith(".")
    assert about.look_for.strip() and "\n" not in about.look_for
    assert isinstance(about.rank, int) and about.rank > 0
    # What it implies and suspects are its own failures and others' signatures, never blanks.
    assert all(s.strip() for s in about.suspects)
    assert all(own.startswith(name) and all(about.implies[own]) for own in about.implies)
    assert set(about.relations) <= RELATIONS.keys()


def test_an_unknown_name_means_nothing() -> None:
    assert info("bogus") is None
    assert rank("bogus") == RANK_LAST
    assert not implies(("bogus", "empty_turn"), ("tool_choice", "tool_choice:required"))
    assert not suspect("bogus", "error:server_died")


def test_the_ranked_oracles_come_in_the_order_that_names_a_cause() -> None:
    ranked = sorted((n for n in names() if rank(n) < RANK_LAST), key=rank)
    assert ranked == PRECEDENCE
    assert len({rank(n) for n in PRECEDENCE}) == len(PRECEDENCE)
    # The rest explain no other failure: they share the last rank, after every ranked one.
    assert sorted(n for n in names() if n not in PRECEDENCE) == sorted(
        [
            "consistency",
            "framing",
            "id_roundtrip",
            "knob",
            "proxy_fidelity",
            "relation",
            "stream_divergence",
        ]
    )
    assert all(rank(n) == RANK_LAST for n in names() if n not in PRECEDENCE)


@pytest.mark.parametrize(
    ("signature", "implied"),
    [
        ("tool_choice:required", True),
        ("tool_choice:named:no_call", True),
        ("tool_choice:allowed:no_call", True),
        ("tool_choice:none", False),
        ("tool_choice:named:other_name", False),
        ("tool_choice:allowed:other_name", False),
    ],
)
def test_an_empty_turn_implies_the_no_call_complaints_alone(signature: str, implied: bool) -> None:
    assert implies(("empty_turn", "empty_turn"), ("tool_choice", signature)) is implied
    # Nor the other way round, nor a truncated empty turn (tool_choice skips a cut turn).
    assert not implies(("tool_choice", signature), ("empty_turn", "empty_turn"))
    assert not implies(("empty_turn", "empty_turn:truncated"), ("tool_choice", signature))


@pytest.mark.parametrize(
    ("oracle", "signature", "suspected"),
    [
        ("error", "error:server_died", True),
        ("error", "error:transport", True),
        ("error", "error:transport:needs:plain", True),
        ("error", "error:http_status:500", False),
        ("error", "error:no_terminal:needs:instructions", False),
        ("empty_turn", "empty_turn", False),
    ],
)
def test_a_dead_server_suspects_the_requests_in_flight(
    oracle: str, signature: str, suspected: bool
) -> None:
    assert suspect(oracle, signature) is suspected


def test_every_relation_is_judged_by_exactly_one_oracle() -> None:
    judges = {r: [n for n in names() if r in _about(n).relations] for r in RELATIONS}
    assert all(len(by) == 1 for by in judges.values()), judges
    assert judged_by("stream") == "stream_divergence"
    assert {judged_by(r) for r in RELATIONS if r != "stream"} == {"relation"}
    assert judged_by("bogus") is None


def test_a_relation_cannot_get_a_second_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_ORACLES", dict(_registry._ORACLES))

    def twin(case: Case, obs: Observation) -> list[Violation]:
        return []

    with pytest.raises(ValueError, match="stream"):
        oracles.register("twin", relations=("stream",))(twin)
    assert "twin" not in names()


def _doc(oracle: str) -> dict[str, Any]:
    """A minimal repro.json of a finding by ``oracle``."""
    return {
        "url": "http://127.0.0.1:8000/v1/chat/completions",
        "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        "oracle": oracle,
        "message": "what the oracle said",
        "signature": oracle,
        "api": "chat",
        "stream": False,
    }


@pytest.mark.parametrize("name", names())
def test_a_report_says_what_was_expected_and_what_to_look_for(name: str) -> None:
    about = _about(name)
    report = report_text(_doc(name), f"{name}-x")
    assert f"- Expected: {about.expected}\n" in report
    assert f"- Look for: {about.look_for}\n" in report
    assert look_for(name, "said  so") == f"{about.look_for} (said so)"


def test_a_report_of_an_oracle_no_longer_registered_still_reads() -> None:
    report = report_text(_doc("retired"), "retired-x")
    assert "- Expected: see the oracle retired\n" in report
    assert "- Look for:" not in report
    assert look_for("retired", "said  so") == "said so"
