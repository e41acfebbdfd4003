"""Does session mode find a server that refuses the call ids it minted itself?

The planted bug ``rejects_own_ids`` (``planted_ids.py``) mints vLLM-shaped call ids and answers
400 to any history carrying one. Only a session sends such an id back as the server wrote it,
so only session mode may call that refusal a bug (``self_rejection``); to synthetic mode it
is a legitimate 4xx. Each run goes through ``agentfuzz.cli.main``, as a maintainer would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentfuzz import Target
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation

from .planted_ids import OWN_ID
from .planted_server import planted_server

SEED = 1
BUG = "rejects_own_ids"


def fuzz(url: str, out: Path, *options: str) -> int:
    """The exit code of ``agentfuzz fuzz`` against ``url`` with ``options``."""
    from agentfuzz.cli import main

    args = ["fuzz", "--base-url", url, "--model", "planted", "--seed", str(SEED)]
    return main([*args, "--out", str(out), "--quiet", *options])


def bundles(out: Path) -> dict[str, list[Path]]:
    """Bundle folders by the oracle their repro names."""
    found: dict[str, list[Path]] = {}
    for repro in sorted(out.glob("*/repro.json")):
        found.setdefault(json.loads(repro.read_text())["oracle"], []).append(repro.parent)
    return found


def answer_text(response: dict[str, Any]) -> str:
    """A recorded answer as text: the body, or every SSE event's data."""
    if "events" in response:
        return "\n".join(e["data"] for e in response["events"])
    return str(response["body"])


def post(url: str, messages: list[dict[str, Any]]) -> httpx.Response:
    body = {"model": "planted", "messages": messages}
    return httpx.post(url + "/chat/completions", json=body, timeout=10)


def history(call_id: str) -> list[dict[str, Any]]:
    call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return [
        {"role": "user", "content": "Use f."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "{}"},
    ]


def test_the_bug_mints_its_own_shape_and_refuses_only_that_shape() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    own = "chatcmpl-tool-" + "0123456789abcdef" * 2
    with planted_server([BUG]) as url:
        first = httpx.post(
            url + "/chat/completions",
            json={"model": "planted", "messages": history(own)[:1], "tools": tools},
            timeout=10,
        )
        minted = first.json()["choices"][0]["message"]["tool_calls"][0]["id"]
        assert OWN_ID.fullmatch(minted)
        refused = post(url, history(own))
        assert refused.status_code == 400
        assert own in refused.json()["error"]["message"]
        assert post(url, history("call_" + "0" * 24)).status_code == 200
    with planted_server() as url:
        assert post(url, history(own)).status_code == 200


# One stream mode per api keeps the file fast; between them both stream modes are covered.
@pytest.mark.parametrize(("api", "stream"), [("chat", "--no-stream"), ("responses", "--stream")])
def test_session_mode_finds_the_server_rejecting_its_own_ids(
    tmp_path: Path, api: str, stream: str
) -> None:
    out = tmp_path / "out"
    with planted_server([BUG]) as url:
        code = fuzz(url, out, "--mode", "session", "--api", api, stream, "--max-examples", "10")
        assert code == 1
        found = bundles(out)
        assert "self_rejection" in found, sorted(found)
        for folder in found["self_rejection"]:
            repro = json.loads((folder / "repro.json").read_text())
            assert repro["url"].endswith("/chat/completions" if api == "chat" else "/responses")
            assert OWN_ID.search(json.dumps(repro["request"]))
            assert repro["reproduced"] == "10/10"
            again = httpx.post(repro["url"], json=repro["request"], timeout=10)
            assert again.status_code == 400, again.text
            assert "must be a-z, A-Z, 0-9, with a length of 9" in again.json()["error"]["message"]

            turns = json.loads((folder / "session.json").read_text())["turns"]
            last = turns[-1]
            assert last["response"]["status"] == 400
            assert last["untouched"] is True
            assert "self_rejection" in {v["oracle"] for v in last["violations"]}
            # The failing request carries an id the server minted in an earlier answer.
            minted = {i for t in turns[:-1] for i in OWN_ID.findall(answer_text(t["response"]))}
            assert minted & set(OWN_ID.findall(json.dumps(last["request"])))


def test_session_mode_on_a_correct_server_finds_nothing(clean_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert fuzz(clean_url, out, "--mode", "session", "--max-examples", "100") == 0
    assert bundles(out) == {}


def test_synthetic_mode_never_reports_self_rejection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusals: list[int] = []
    observe = Target.observe

    def counting(self: Target, case: Case) -> Observation:
        obs = observe(self, case)
        refusals.append(obs.exchange.status == 400 and "length of 9" in obs.exchange.body)
        return obs

    monkeypatch.setattr(Target, "observe", counting)
    out = tmp_path / "out"
    with planted_server([BUG]) as url:
        # Seed 5: one whose generated histories carry the server's own id shape (a later
        # --seed wins over the helper's).
        options = ("--mode", "synthetic", "--api", "chat", "--max-examples", "100", "--seed", "5")
        code = fuzz(url, out, *options)
    # The server did refuse generated histories carrying its shape: a legitimate 400 there.
    assert sum(refusals) > 0
    assert "self_rejection" not in bundles(out)
    assert code == 0, sorted(bundles(out))
