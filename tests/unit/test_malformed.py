"""Malformed bodies: each way of breaking a body, sent byte for byte, judged by ``error`` alone,
refused by a careful server, recorded and replayed as the text it was, and reduced away."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from agentfuzz import Target
from agentfuzz.judge.judge import check
from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.reduce.reduction import reduce_case
from agentfuzz.reference import create_app
from agentfuzz.request.surface import MALFORMED, used
from agentfuzz.runs.tally import Tally
from agentfuzz.tape.codec import Recorded, read_turns, write_cassette
from agentfuzz.wire.dialects import build_request, wire_body


def _case(kind: str | None, api: str = "chat") -> Case:
    history = History(tools=(Tool(name="get_weather"),), items=(UserMessage(text="q"),))
    return Case(history=history, options=Options(malformed=kind), api=api)  # type: ignore[arg-type]


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("kind", MALFORMED)
def test_every_way_is_no_request_and_a_careful_server_refuses_it(kind: str, api: str) -> None:
    path, body = wire_body(_case(kind, api), "m")
    assert body != build_request(_case(None, api), "m")[1]
    if isinstance(body, str):
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            parsed = None
        assert not isinstance(parsed, dict) or kind == "huge_number"
    client = TestClient(create_app("fixed"))
    content = body if isinstance(body, str) else json.dumps(body)
    answer = client.post(f"/v1{path}", content=content.encode())
    # Missing model is one a server may fill in; the rest are refused with a JSON 400.
    if kind in ("no_model", "huge_number"):
        assert answer.status_code in (200, 400)
    else:
        assert answer.status_code == 400 and "error" in answer.json()
    assert used(_case(kind, api)) == (f"malformed:{kind}",)


def _answer(request: httpx.Request) -> httpx.Response:
    # A server that crashes on JSON cut short, and refuses anything else.
    sent = request.content
    if sent.startswith(b'{"model": "m", "messages": [') and not sent.endswith(b"}"):
        return httpx.Response(500, text="boom")
    return httpx.Response(400, json={"error": {"message": "bad"}})


def test_the_text_goes_out_as_it_is_and_only_error_judges_it(tmp_path: Path) -> None:
    with Target("http://x.invalid/v1", "m", transport=httpx.MockTransport(_answer)) as target:
        obs = target.observe(_case("truncated"))
        refused = target.observe(_case("not_json"))
    assert isinstance(obs.exchange.request, str) and not obs.exchange.request.endswith("}")
    found = check(_case("truncated"), obs)
    assert [v.oracle for v in found] == ["error"]
    assert found[0].signature.startswith("error:http_status:500")
    assert check(_case("not_json"), refused) == []
    # Recorded and read back as the text it was.
    path = write_cassette(
        tmp_path / "c.yaml", [Recorded(obs, _case("truncated"), tuple(found))], {"kind": "x"}
    )
    (turn,) = read_turns(path)[1]
    assert turn.body == obs.exchange.request


def test_a_slow_answer_to_a_broken_body_is_counted_not_judged() -> None:
    # A loaded or queueing server is slow for every request: no answer in time says nothing.
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no answer", request=request)

    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("peer closed connection", request=request)

    with Target("http://x.invalid/v1", "m", transport=httpx.MockTransport(hang)) as target:
        obs = target.observe(_case("empty"))
    assert obs.exchange.slow and check(_case("empty"), obs) == []
    tally = Tally()
    tally.count(_case("empty"), obs)
    assert tally.coverage["malformed:empty"].slow == 1
    with Target("http://x.invalid/v1", "m", transport=httpx.MockTransport(drop)) as target:
        dropped = target.observe(_case("empty"))
    assert [v.signature for v in check(_case("empty"), dropped)] == ["error:transport"]


def test_reduce_keeps_the_break_only_when_the_failure_needs_it() -> None:
    case = _case("deep_nesting").model_copy(
        update={"options": Options(malformed="deep_nesting", seed=3, fields={"user": "u"})}
    )
    needs = reduce_case(case, lambda c: c.options.malformed == "deep_nesting", budget=100)
    assert needs.options == Options(malformed="deep_nesting")
    # A failure any broken body shows is kept with the plainest break: JSON cut short.
    any_break = reduce_case(case, lambda c: c.options.malformed is not None, budget=100)
    assert any_break.options == Options(malformed="truncated")
    spare = reduce_case(case, lambda c: c.options.fields.get("user") == "u", budget=100)
    assert spare.options.malformed is None
