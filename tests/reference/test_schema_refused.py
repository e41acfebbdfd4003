"""A server that refuses a tool schema it cannot handle is no session fault (issue 41 item 0).

``arrays-refused`` answers any request declaring an array parameter with a JSON 400. A session
whose first turn is refused, whose next goes out without tools (``strip-tools``) and is
answered, and whose third brings the tools back, is refused for its tools, not its history:
the same request cut back to its first user message is refused too. No ``self_rejection``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentfuzz import Target
from agentfuzz.cli import cli
from agentfuzz.model.history import AssistantMessage, Case
from agentfuzz.model.observation import Observation


@pytest.mark.parametrize(("api", "stream"), [("chat", "--no-stream"), ("responses", "--stream")])
def test_a_refused_tool_schema_is_never_blamed_on_the_history(
    serve: Callable[..., str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    api: str,
    stream: str,
) -> None:
    refused_with_history: list[Case] = []
    observe = Target.observe

    def counting(self: Target, case: Case) -> Observation:
        obs = observe(self, case)
        own = any(isinstance(it, AssistantMessage) for it in case.history.items)
        if case.session is not None and own and "'array'" in obs.exchange.body:
            refused_with_history.append(case)
        return obs

    monkeypatch.setattr(Target, "observe", counting)
    profile = tmp_path / "p.toml"
    profile.write_text('session_policies = ["passthrough", "strip-tools"]\nswitch_modes = false\n')
    out = tmp_path / "out"
    argv = ["fuzz", "--base-url", serve("arrays-refused"), "--profile", str(profile)]
    argv += ["--mode", "session", "--api", api, stream, "--max-examples", "30", "--seed", "1"]
    result = CliRunner().invoke(cli, [*argv, "--out", str(out), "--quiet"])
    # The scenario was met: a turn carrying the server's own answer was refused for its tools.
    assert refused_with_history
    oracles = [json.loads(p.read_text())["oracle"] for p in out.glob("*/repro.json")]
    assert "self_rejection" not in oracles and "id_roundtrip" not in oracles
    assert result.exit_code == 0, (oracles, result.output[-2000:])
