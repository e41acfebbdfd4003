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


@pytest.mark.parametrize("seed", ["1", "3"])
def test_every_dimension_called_always_refused_is_refused_alone(
    serve: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: str
) -> None:
    refused: list[Case] = []
    observe = Target.observe

    def keeping(self: Target, case: Case) -> Observation:
        obs = observe(self, case)
        if obs.refused and case.options.fields:
            refused.append(case)
        return obs

    monkeypatch.setattr(Target, "observe", keeping)
    url, out = serve("fixed"), tmp_path / "out"
    argv = ["fuzz", "--base-url", url, "--max-examples", "30", "--seed", seed, "--quiet"]
    result = CliRunner().invoke(cli, [*argv, "--out", str(out)])
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
    assert checked, claimed
