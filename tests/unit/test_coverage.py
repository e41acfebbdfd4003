"""The coverage table: per dimension of the request surface, the requests that used it and how
the target answered, counted by the run's tally, merged across shards and printed with a note for a
dimension the target always refused."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from rich.console import Console

from agentfuzz import Summary, Target
from agentfuzz.cli._coverage import coverage_line, coverage_table
from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.summary import Coverage
from agentfuzz.request.surface import without
from agentfuzz.runs.tally import Tally
from agentfuzz.runs.workers import merge

ANSWER = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}


def _answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    if "n" in body:
        return httpx.Response(400, json={"error": {"message": "n is not supported"}})
    if "stop" in body:
        return httpx.Response(500, text="Internal Server Error")
    return httpx.Response(200, json=ANSWER)


def _case(**fields: object) -> Case:
    history = History(tools=(Tool(name="f"),), items=(UserMessage(text="q"),))
    return Case(history=history, options=Options(fields=dict(fields)))


def _tally(*cases: Case) -> Tally:
    """The tally of sending ``cases`` as a run does: a refusal the tally suspects one dimension
    of is re-sent without it (``without``), and that answer counted and pinned too."""
    tally = Tally()
    transport = httpx.MockTransport(_answer)
    with Target("http://x.invalid/v1", "m", transport=transport, recording=False) as target:
        for case in cases:
            obs = target.observe(case)
            tally.count(case, obs)
            dimension = tally.suspect(case, obs)
            smaller = None if dimension is None else without(case, dimension)
            if dimension is not None and smaller is not None:
                again = target.observe(smaller)
                tally.count(smaller, again)
                tally.pin(dimension, again)
    return tally


def test_the_tally_counts_each_dimension_by_how_it_was_answered() -> None:
    cases = (_case(), _case(user=""), _case(n=2), _case(n=2, user="u"), _case(stop="}"))
    rows = _tally(*cases).coverage
    # Refused alone, and beside ``user`` (answered before): re-sent without n, both answered,
    # so both refusals are pinned on n. The two re-sends count too (plain, and user).
    assert rows["n"] == Coverage(requests=2, refused=2, pinned=2) and rows["n"].always_refused
    assert rows["plain"] == Coverage(requests=2, ok=2)
    assert rows["user"] == Coverage(requests=3, ok=2, refused=1)
    assert rows["stop"] == Coverage(requests=1, error=1) and not rows["stop"].always_refused
    assert not any(name.startswith("relation:") for name in rows)


def test_a_paired_request_counts_under_its_relation_too() -> None:
    paired = _case().model_copy(update={"relation": "tools"})
    rows = _tally(paired, paired, _case(n=2).model_copy(update={"relation": "tools"})).coverage
    assert rows["relation:tools"] == Coverage(requests=3, ok=2, refused=1)
    assert rows["plain"] == Coverage(requests=2, ok=2)


def test_shards_merge_by_adding_rows_and_summary_json_holds_them(tmp_path: Path) -> None:
    one = Summary(coverage={"stop": Coverage(requests=2, ok=2), "n": Coverage(requests=1)})
    two = Summary(coverage={"stop": Coverage(requests=3, ok=1, refused=1, slow=1)})
    merged = merge([one, two], tmp_path)
    assert merged.coverage["stop"] == Coverage(requests=5, ok=3, refused=1, slow=1)
    assert merged.dump()["coverage"]["n"] == {
        "requests": 1, "ok": 0, "refused": 0, "error": 0, "failed": 0, "slow": 0, "pinned": 0,
    }  # fmt: skip


def test_the_printed_table_says_which_dimension_was_always_refused() -> None:
    rows = {
        "plain": Coverage(requests=9, ok=9),
        "n": Coverage(requests=4, refused=4, pinned=2),
        "metadata": Coverage(requests=3, refused=3),  # never pinned: not called unsupported
    }
    console = Console(record=True, width=120)
    coverage_table(console, rows)
    text = console.export_text()
    assert "request surface coverage" in text
    (n_row,) = [line for line in text.splitlines() if "│ n " in line]
    assert "always refused" in n_row
    for name in ("plain", "metadata"):
        (row,) = [line for line in text.splitlines() if f"│ {name} " in line]
        assert "always refused" not in row
    assert "1 always refused: n (" in coverage_line(rows)


def test_a_field_refused_only_beside_another_refused_field_is_not_called_unsupported() -> None:
    """Seen against ``--serve fixed``: ``metadata`` was "always refused" from requests that
    also carried a field the server refuses; alone, it is answered."""
    refused_beside_n = [_case(n=2, metadata={"k": "v"}) for _ in range(3)]
    rows = _tally(*refused_beside_n).coverage
    assert rows["metadata"] == Coverage(requests=3, refused=3)
    assert not rows["metadata"].always_refused
    assert not rows["n"].always_refused  # nor n: either may be the one refused
    # Once metadata is seen answered, such a refusal is re-sent without n, answered, and
    # pinned on n: twice is enough, no more re-sends after.
    rows = _tally(_case(metadata={"k": "v"}), *refused_beside_n).coverage
    assert rows["n"].pinned == 2 and rows["n"].always_refused
    assert not rows["metadata"].always_refused


def test_one_pinned_refusal_is_not_enough_to_call_a_field_unsupported() -> None:
    rows = _tally(_case(n=2)).coverage
    assert rows["n"] == Coverage(requests=1, refused=1, pinned=1)
    assert not rows["n"].always_refused
