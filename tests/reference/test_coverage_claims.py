"""The coverage table calls a dimension "always refused" only when the target refuses it alone
(issue 41 item 4).

Against ``--serve fixed`` a short run once called ``metadata``, ``logprobs`` and penalties
"always refused" from 2 to 4 requests each, every one refused for another field it carried; a
longer run gave ``metadata`` 33 answers. Here each claim a run makes is checked by sending, for
a request it counted, the same request with that field alone: the server must refuse it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentfuzz import Target
from agentfuzz.cli import cli
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation
from agentfuzz.model.summary import Coverage
from agentfuzz.request.surface import used


def _alone(case: Case, field: str) -> Case:
    """``case`` with its surface fields, forms and breakage gone but ``field``."""
    only = {field: case.options.fields[field]}
    options = case.options.model_copy(update={"fields": only, "forms": (), "malformed": None})
    return case.model_copy(update={"options": options, "relation": None})


def _claims_checked(url: str, out: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    """Run ``fuzz`` on ``url``; send each dimension it calls always refused alone (with a
    request it counted as refused) and return how many claims were so checked."""
    refused: list[Case] = []
    observe = Target.observe

    def keeping(self: Target, case: Case) -> Observation:
        obs = observe(self, case)
        if obs.refused and case.options.fields:
            refused.append(case)
        return obs

    monkeypatch.setattr(Target, "observe", keeping)
    args = ["fuzz", "--base-url", url, *argv, "--quiet", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output[-2000:]
    monkeypatch.undo()
    rows = json.loads((out / "summary.json").read_text())["coverage"]
    claimed = {name for name, row in rows.items() if Coverage(**row).always_refused}
    checked = 0
    with Target(url, "m") as target:
        for name in sorted(claimed):
            for case in refused:
                fields = [f for f in case.options.fields if name in used(_alone(case, f))]
                if fields:
                    alone = _alone(case, fields[0])
                    assert target.observe(alone).refused, (name, alone.options.fields)
                    checked += 1
                    break
    return checked


def test_every_dimension_called_always_refused_is_refused_alone(
    serve: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, checked = serve("fixed"), 0
    for seed in ("1", "2", "3", "4"):
        argv = ["--api", "responses", "--max-examples", "60", "--seed", seed]
        checked += _claims_checked(url, tmp_path / seed, monkeypatch, argv)
    assert checked  # some run made a claim, or the test showed nothing


def test_a_refusal_the_history_causes_is_pinned_on_no_field(
    serve: Callable[..., str], tmp_path: Path
) -> None:
    """A request refused for its history (a context it overflows) and the one field no other
    answered request used: re-sent without the field it is still refused, so nothing is
    claimed (the coverage table had called ``stream_options`` always refused so)."""
    from agentfuzz.model.history import History, Options, Tool, UserMessage
    from agentfuzz.runs.tally import Tally

    tally = Tally()
    history = History(tools=(Tool(name="f"),), items=(UserMessage(text="x" * 40_000),))
    case = Case(
        history=history,
        options=Options(fields={"stream_options": {"include_usage": True}}),
        api="chat",
        stream=True,
    )
    with Target(serve("fixed"), "m") as target:
        for _ in range(4):
            obs = target.observe(case)
            assert obs.refused
            tally.count(case, obs)
            dimension = tally.suspect(case, obs)
            assert dimension == "stream_options" or dimension is None
            if dimension is not None:
                smaller = case.model_copy(
                    update={"options": case.options.model_copy(update={"fields": {}})}
                )
                tally.pin(dimension, target.observe(smaller))
    row = tally.coverage["stream_options"]
    assert row.refused == row.requests == 4
    assert not row.always_refused
