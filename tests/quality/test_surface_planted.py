"""The request surface reaches faults only one of its dimensions can, under the default profile:
the reference server's ``stop-cuts-markup`` (stop strings matched inside tool-call markup, the
open section a 500), shrunk to one message and one stop string; ``bad-json-500`` (a body that is
not JSON crashes the handler), shrunk to one message sent as JSON cut short; ``parts-500``
(content as a list of parts crashes it), shrunk to one message of one part; ``allowed-ignored``
(``allowed_tools`` offers every tool), shrunk to two tools and one allowed; ``quote-names-cut``
(a name cut at its quote), shrunk to that tool; ``instructions-500`` (Responses only) and
``min-p-500`` (a server extension, once the profile names it), each shrunk to its field alone;
``stored-500`` (a ``previous_response_id`` naming one of the server's own answers), reached by
a session alone and reduced to one message chained onto a stored answer; ``two-500s``, two faults
behind one bare 500, two findings each signed by what it needs. The ``fixed``
profile answers or refuses every dimension and stays silent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from agentfuzz.cli import cli
from agentfuzz.reference import serve_in_thread
from agentfuzz.tape.replay import replay_bundle

# The Kimi markup and call body the reference model writes: a stop must land inside them.
MARKUP = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "'
)


def _fuzz(
    out: Path, serve: str, api: str, stream: bool, examples: int, *extra: str
) -> tuple[int, str]:
    args = ["fuzz", "--serve", serve, "--api", api, "--stream" if stream else "--no-stream"]
    args += ["--max-examples", str(examples), "--seed", "3", "--out", str(out), "--quiet"]
    args += extra  # a later --seed wins
    result = CliRunner().invoke(cli, args, terminal_width=200)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _findings(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/repro.json"))]


@pytest.mark.parametrize("stream", [False, True])
def test_a_stop_inside_markup_is_found_and_shrunk_to_one_stop(tmp_path: Path, stream: bool) -> None:
    code, output = _fuzz(tmp_path, "stop-cuts-markup", "chat", stream, 400, "--seed", "2")
    assert code == 1, output
    hits = [f for f in _findings(tmp_path) if f["oracle"] == "error"]
    assert hits, output
    request = min(hits, key=lambda f: len(f["request"]["messages"]))["request"]
    # Nothing but the fault's own ingredients: one message, the tool, one stop string.
    assert set(request) == {"model", "messages", "tools", "stream", "stop"}, request
    assert len(request["messages"]) == 1 and len(request["tools"]) == 1
    stops = request["stop"] if isinstance(request["stop"], list) else [request["stop"]]
    assert len(stops) == 1 and stops[0] in MARKUP + "}", request
    stop = json.loads((tmp_path / "summary.json").read_text())["coverage"]["stop"]
    # Streamed, the failure is an error frame inside a 200; otherwise a 500.
    assert stop["requests"] > 0 and (stream or stop["error"] > 0), stop


def test_a_crash_on_bad_json_is_found_and_its_bundle_sends_the_same_bytes(tmp_path: Path) -> None:
    code, output = _fuzz(tmp_path, "bad-json-500", "chat", False, 1000)
    assert code == 1, output
    (found,) = [f for f in _findings(tmp_path) if f["oracle"] == "error"]
    # The plainest way to break a body, on the smallest history: one user message.
    assert found["case"]["options"]["malformed"] == "truncated"
    # A bare 500 is signed by what its reduced repro needs: here the broken body alone.
    assert found["size"] == 1
    assert found["signature"] == "error:http_status:500:needs:malformed:truncated"
    sent = found["request"]
    assert isinstance(sent, str) and sent.startswith('{"model": ')
    with pytest.raises(json.JSONDecodeError):
        json.loads(sent)
    bundle = next(p.parent for p in tmp_path.glob("*/repro.json"))
    assert f"printf %s '{sent}' | curl" in (bundle / "repro.sh").read_text()
    coverage = json.loads((tmp_path / "summary.json").read_text())["coverage"]
    assert coverage["malformed:truncated"]["error"] > 0


def test_the_fixed_profile_stays_silent_with_every_dimension_on(tmp_path: Path) -> None:
    # Seed 1: a run whose draws send every dimension below (seed 3's sends no custom tool call
    # in a history: a rare draw, here it is the coverage asked for, not the silence).
    code, output = _fuzz(tmp_path, "fixed", "chat", False, 300, "--seed", "1")
    assert code == 0, output
    coverage = json.loads((tmp_path / "summary.json").read_text())["coverage"]
    # Every chat dimension of the default profile was sent, and the server answered or refused.
    dimensions = {"budget", "stop", "n", "logprobs", "penalties", "parallel_tool_calls"}
    dimensions |= {"response_format", "user", "metadata", "reasoning_effort"}
    dimensions |= {"strict_tools", "custom_tools", "custom_tools:history"}
    assert dimensions <= set(coverage), sorted(coverage)
    assert all(row["error"] == row["failed"] == 0 for row in coverage.values())
    broken = [row for name, row in coverage.items() if name.startswith("malformed:")]
    assert broken and all(row["refused"] + row["ok"] == row["requests"] for row in broken)
    assert coverage["n"]["ok"] > 0 and coverage["stop"]["ok"] > 0
    assert "request surface coverage" in output


def test_allowed_tools_ignored_is_found_and_shrunk_to_two_tools_and_one_allowed(
    tmp_path: Path,
) -> None:
    # allowed-ignored keeps an allowed_tools mode but offers every tool: the model then calls
    # the first declared one, which the choice did not allow. (Responses reaches it too, in
    # a few thousand examples: its surface has more ways to be refused first.) Rare by design,
    # about one example in a few hundred even with the tool_choice forms alone on, and which
    # ones Hypothesis draws after its first few dozen depends on its caches (garbage
    # collection), not only on the seed: so the budget is generous and the run stops at the
    # first finding, which then shrinks.
    api = "chat"
    profile = tmp_path / "allowed.toml"
    profile.write_text('name = "allowed-only"\nsurface = ["tool_choice_forms"]\n')
    out = tmp_path / "out"
    extra = ("--seed", "7", "--profile", str(profile), "--max-failures", "1")
    code, output = _fuzz(out, "allowed-ignored", api, False, 3000, *extra)
    assert code == 1, output
    (found,) = [f for f in _findings(out) if f["oracle"] == "tool_choice"]
    assert found["signature"] == "tool_choice:allowed:other_name" and found["size"] == 1
    request = found["request"]
    assert set(request) == {
        "model",
        "messages" if api == "chat" else "input",
        "tools",
        "stream",
        "tool_choice",
    }
    assert len(request["tools"]) == 2 and request["tool_choice"]["type"] == "allowed_tools"
    spec = request["tool_choice"]["allowed_tools"] if api == "chat" else request["tool_choice"]
    assert spec["mode"] == "required" and len(spec["tools"]) == 1


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_crash_on_content_parts_is_found_and_shrunk_to_one_part(tmp_path: Path, api: str) -> None:
    code, output = _fuzz(tmp_path, "parts-500", api, False, 300)
    assert code == 1, output
    (found,) = [f for f in _findings(tmp_path) if f["oracle"] == "error"]
    assert found["signature"] == "error:http_status:500:needs:message_forms:parts"
    assert found["size"] == 1 and found["case"]["options"]["forms"] == ["parts"]
    (message,) = found["request"]["messages" if api == "chat" else "input"]
    assert isinstance(message["content"], list) and len(message["content"]) == 1
    coverage = json.loads((tmp_path / "summary.json").read_text())["coverage"]
    assert coverage["message_forms:parts"]["error"] > 0


def test_a_name_cut_at_its_quote_is_found_and_shrunk_to_that_one_tool(tmp_path: Path) -> None:
    # quote-names-cut cuts a call's name at its first quote: only a tool named with one (an
    # adversarial name, one in 41 of the catalogue) reaches it.
    extra = ("--seed", "5", "--oracles", "unknown_tool")
    code, output = _fuzz(tmp_path, "quote-names-cut", "chat", False, 1000, *extra)
    assert code == 1, output
    (found,) = _findings(tmp_path)
    assert found["signature"] == "unknown_tool:undeclared" and found["size"] == 1
    request = found["request"]
    assert [t["function"]["name"] for t in request["tools"]] == ['get"weather']
    assert set(request) == {"model", "messages", "tools", "stream"}


def test_a_crash_on_instructions_is_found_on_responses_and_shrunk_to_that_field(
    tmp_path: Path,
) -> None:
    code, output = _fuzz(tmp_path, "instructions-500", "responses", False, 300)
    assert code == 1, output
    (found,) = [f for f in _findings(tmp_path) if f["oracle"] == "error"]
    assert found["signature"] == "error:http_status:500:needs:instructions"
    assert found["size"] == 1
    # One message and the field, its plainest value: not even the tools are needed.
    assert set(found["request"]) == {"model", "input", "stream", "instructions"}
    assert found["request"]["instructions"] == "Answer briefly."
    coverage = json.loads((tmp_path / "summary.json").read_text())["coverage"]
    assert coverage["instructions"]["error"] > 0
    # Chat has no such field: the same server is silent there.
    assert _fuzz(tmp_path / "chat", "instructions-500", "chat", False, 100)[0] == 0


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_crash_on_a_server_extension_is_found_once_the_profile_names_it(
    tmp_path: Path, api: str
) -> None:
    # Server extensions are off in the default profile: the same one with them on.
    default = Path(__file__).parents[2] / "strategies" / "default.toml"
    text = default.read_text().replace("surface = [\n", 'surface = [\n  "sampler_extensions",\n', 1)
    everything = tmp_path / "everything.toml"
    everything.write_text(text)
    assert _fuzz(tmp_path / "default", "min-p-500", api, False, 200)[0] == 0
    extra = ("--profile", str(everything), "--seed", "1")
    code, output = _fuzz(tmp_path, "min-p-500", api, False, 300, *extra)
    assert code == 1, output
    (found,) = [f for f in _findings(tmp_path) if f["oracle"] == "error"]
    assert found["size"] == 1 and found["request"]["min_p"] == 0.1
    assert found["signature"] == "error:http_status:500:needs:sampler_extensions"
    assert set(found["request"]) == {
        "model",
        "messages" if api == "chat" else "input",
        "stream",
        "min_p",
    }


@pytest.mark.parametrize("stream", [False, True])
def test_a_crash_on_a_stored_answer_is_reached_by_a_session_chaining_onto_it(
    tmp_path: Path, stream: bool
) -> None:
    # A synthetic request names only ids no answer ever had: the server refuses them rightly.
    assert _fuzz(tmp_path / "synthetic", "stored-500", "responses", stream, 200)[0] == 0
    # Seed 14: a path whose session chains onto its own first answer (seeds move as generators
    # do; most seeds find a smaller repro: one turn chaining onto another session's answer).
    code, output = _fuzz(
        tmp_path, "stored-500", "responses", stream, 40, "--mode", "session", "--seed", "14"
    )
    assert code == 1, output
    (folder,) = [p.parent for p in tmp_path.glob("error-*/repro.json")]
    request = json.loads((folder / "repro.json").read_text())["request"]
    turns = json.loads((folder / "session.json").read_text())["turns"]
    # The session chained a turn onto an answer it had got, and failed there.
    *before, failed = turns
    assert failed["request"]["previous_response_id"] == request["previous_response_id"]
    said = "".join(
        t["response"].get("body") or "".join(e["data"] for e in t["response"].get("events") or [])
        for t in before
    )
    assert request["previous_response_id"] in said
    # Reduced to what the fault needs: one message, chained onto that stored answer.
    assert set(request) == {"model", "input", "stream", "previous_response_id"}
    assert len(request["input"]) == 1
    assert json.loads((folder / "repro.json").read_text())["signature"].endswith(
        ":needs:previous_response_id"
    )


def test_the_stored_answer_server_refuses_an_id_it_never_gave_whatever_its_shape() -> None:
    with serve_in_thread("stored-500") as url:
        for named in ("resp_never", {"id": "x"}, ["resp_x"], 7):
            body = {"model": "m", "input": "hi", "previous_response_id": named}
            answer = httpx.post(f"{url}/responses", json=body, timeout=10)
            assert answer.status_code == 400, (named, answer.text)


def test_two_faults_behind_one_bare_500_are_two_findings_each_signed_by_its_needs(
    tmp_path: Path,
) -> None:
    # two-500s answers a bare 500 both to content given as parts and to instructions: one
    # symptom, two faults. Each is reduced to what it needs, and each bundle replays offline
    # with its own signature.
    code, output = _fuzz(tmp_path, "two-500s", "responses", False, 300)
    assert code == 1, output
    found = {f["signature"]: f for f in _findings(tmp_path) if f["oracle"] == "error"}
    assert set(found) == {
        "error:http_status:500:needs:message_forms:parts",
        "error:http_status:500:needs:instructions",
    }, sorted(found)
    parts = found["error:http_status:500:needs:message_forms:parts"]["request"]
    assert "instructions" not in parts and isinstance(parts["input"][0]["content"], list)
    told = found["error:http_status:500:needs:instructions"]["request"]
    assert told["instructions"] and all(isinstance(m["content"], str) for m in told["input"])
    for folder in (p.parent for p in tmp_path.glob("error-*/repro.json")):
        signature = json.loads((folder / "repro.json").read_text())["signature"]
        assert signature in {v.signature for v in replay_bundle(folder)}
