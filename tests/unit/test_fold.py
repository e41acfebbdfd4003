"""One finding per root cause: symptoms one request shows together fold into one bundle."""

import json
from pathlib import Path

from agentfuzz.model.summary import FindingRow, Summary
from agentfuzz.output.findings.fold import fold


def _row(tmp: Path, oracle: str, signature: str, history: str, *cofired: str) -> FindingRow:
    bundle = tmp / f"{oracle}-{signature.replace(':', '_')}"
    bundle.mkdir()
    doc = {"oracle": oracle, "message": f"{signature} fired", "request": {}, "url": "u"}
    (bundle / "repro.json").write_text(json.dumps(doc))
    return FindingRow(
        oracle=oracle,
        signature=signature,
        message=f"{signature} fired",
        size=3,
        reproduced="10/10",
        bundle=str(bundle),
        seen_on=["chat/no-stream"],
        cofired=[(c.split(":")[0], c) for c in cofired],
        history=history,
    )


def test_symptoms_of_one_request_fold_into_the_most_telling(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    rows = [
        _row(tmp_path, "tool_choice", "tool_choice:required", "h1", "empty_turn"),
        _row(tmp_path, "empty_turn", "empty_turn", "h1", "tool_choice:required"),
        _row(tmp_path, "tool_choice", "tool_choice:named:no_call", "h1", "empty_turn"),
    ]
    folded = fold(Summary(findings=rows)).findings
    assert len(folded) == 1
    head = folded[0]
    assert head.oracle == "empty_turn"
    assert head.symptoms[0].signature == "empty_turn"
    assert {s.signature for s in head.symptoms} == {r.signature for r in rows}
    doc = json.loads((Path(head.bundle) / "repro.json").read_text())
    assert len(doc["symptoms"]) == 3
    report = (Path(head.bundle) / "REPORT.md").read_text()
    assert report.count("- `tool_choice:") == 2 and "Symptoms of this one cause" in report
    # The folded bundles are gone; what they said lives on in the symptoms.
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(head.bundle).name]


def test_distinct_causes_stay_distinct(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    rows = [
        # Another history: never the same cause, even if the oracle is the same.
        _row(tmp_path, "empty_turn", "empty_turn", "h1", "tool_choice:required"),
        _row(tmp_path, "bad_arguments", "bad_arguments:not_object", "h2", "empty_turn"),
        # The same history, but the two never showed together.
        _row(tmp_path, "leaked_markup", "leaked_markup:kimi", "h1"),
    ]
    folded = fold(Summary(findings=rows)).findings
    assert len(folded) == 3 and all(not f.symptoms for f in folded)
    assert len(list(tmp_path.iterdir())) == 3


def test_an_implied_symptom_folds_even_from_another_history(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    rows = [
        _row(tmp_path, "empty_turn", "empty_turn", "h1"),
        # Its own minimal request has another history, but showed the empty turn too.
        _row(tmp_path, "tool_choice", "tool_choice:named:no_call", "h2", "empty_turn"),
        # Not implied by an empty turn: a distinct cause, however it co-fired.
        _row(tmp_path, "index_gap", "index_gap:skipped", "h3", "empty_turn"),
    ]
    folded = fold(Summary(findings=rows)).findings
    assert [f.oracle for f in folded] == ["empty_turn", "index_gap"]
    assert [s.signature for s in folded[0].symptoms] == ["empty_turn", "tool_choice:named:no_call"]
    # Shown by a request of its own, not the head's: its repro moves inside the head's bundle.
    assert folded[0].symptoms[1].repro == "symptoms/tool_choice-tool_choice_named_no_call"


def _cleared(row: FindingRow, shape: str, minted_on: str = "chat/no-stream") -> FindingRow:
    return row.model_copy(update={"cleared_by": {"shape": shape, "minted_on": minted_on}})


def test_failures_the_servers_own_id_shape_clears_are_one_cause(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    rows = [
        _cleared(_row(tmp_path, "index_gap", "index_gap:gap", "h2"), "kimi_native"),
        _cleared(_row(tmp_path, "empty_turn", "empty_turn", "h1"), "kimi_native", "chat/stream"),
        # Cleared by another shape, or by none: other causes.
        _cleared(_row(tmp_path, "error", "error:500", "h3"), "kimi_sanitized"),
        _row(tmp_path, "leaked_markup", "leaked_markup:kimi", "h4"),
    ]
    folded = fold(Summary(findings=rows)).findings
    assert [f.oracle for f in folded] == ["empty_turn", "error", "leaked_markup"]
    head = folded[0]
    assert [(s.signature, s.repro) for s in head.symptoms] == [
        ("empty_turn", None),
        ("index_gap:gap", "symptoms/index_gap-index_gap_gap"),
    ]
    # The symptom its request does not show keeps its repro, inside the one bundle.
    inside = Path(head.bundle) / "symptoms" / "index_gap-index_gap_gap" / "repro.json"
    assert json.loads(inside.read_text())["oracle"] == "index_gap"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(f.bundle).name for f in folded)
    assert (
        "its own repro: `symptoms/index_gap-index_gap_gap/repro.sh`"
        in (Path(head.bundle) / "REPORT.md").read_text()
    )


def test_a_run_cut_short_keeps_every_symptoms_own_bundle(tmp_path: Path) -> None:
    """Interrupted mid-shrink, the head's request was never confirmed to show the others, and a
    symptom's own repro may be smaller than the head's: it moves inside, never away."""
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    rows = [
        _row(tmp_path, "empty_turn", "empty_turn", "h1", "tool_choice:required"),
        _row(tmp_path, "tool_choice", "tool_choice:required", "h1", "empty_turn"),
    ]
    folded = fold(Summary(findings=rows, interrupted=True)).findings
    assert len(folded) == 1
    (head,) = folded
    symptom = head.symptoms[1]
    assert symptom.repro == "symptoms/tool_choice-tool_choice_required"
    assert (Path(head.bundle) / symptom.repro / "repro.json").is_file()
