"""``runs.witness``: telling an OpenAI API's answers from a server that is no API at all, and
holding back findings made of the latter (issue 41 item 3)."""

from __future__ import annotations

import pytest

from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.runs.witness import NOT_API_LIMIT, NotAnApi, Witness, answer_kind

URL = "http://x/v1"
PAGE = "<!DOCTYPE HTML><html><body>Error code: 501</body></html>"


def _answer(status: int, body: str = "", content_type: str = "", **kw: object) -> Observation:
    exchange = Exchange(URL, {}, False, status=status, content_type=content_type, body=body)
    return Observation(exchange=exchange, **kw)  # type: ignore[arg-type]


API = _answer(200, '{"id": "c"}', "application/json", payloads=({"id": "c"},))
REFUSAL = _answer(400, '{"error": {}}', "application/json", payloads=({"error": {}},), refused=True)
HTML_501 = _answer(501, PAGE, "text/html")


@pytest.mark.parametrize(
    ("obs", "kind"),
    [
        (API, "api"),
        (REFUSAL, "api"),
        (HTML_501, "501 and an HTML page"),
        (_answer(405, "Method Not Allowed", "text/plain"), "405"),
        (_answer(200, PAGE, "text/html"), "an HTML page (200)"),
        (
            _answer(200, "hello", "text/plain", errors=(("non_json", "x"),)),
            "a body that is not JSON (200)",
        ),
        (_answer(500, "Internal Server Error", "text/plain"), None),  # an API may crash so
        (_answer(401, '{"error": "key"}', payloads=({"error": "key"},)), "api"),
    ],
)
def test_answer_kinds(obs: Observation, kind: str | None) -> None:
    assert answer_kind(obs) == kind


def test_a_finding_made_of_a_foreign_answer_waits_for_an_api_answer() -> None:
    made: list[str] = []
    witness = Witness()
    witness.offer(HTML_501, lambda: made.append("501"))
    witness.offer(_answer(500, "boom"), lambda: made.append("bare 500"))  # no telling: made
    assert made == ["bare 500"]
    witness.hear(HTML_501)
    assert made == ["bare 500"]
    witness.hear(API)
    assert made == ["bare 500", "501"]
    witness.offer(HTML_501, lambda: made.append("later"))  # the target is an API: at once
    assert made[-1] == "later"
    assert witness.line(URL) is None


def test_with_no_api_answer_the_findings_are_dropped_and_the_run_says_why() -> None:
    made: list[str] = []
    witness = Witness()
    witness.offer(HTML_501, lambda: made.append("501"))
    with witness.part():
        for _ in range(NOT_API_LIMIT - 1):
            witness.hear(HTML_501)
    assert made == []
    assert witness.line(URL) == (
        f"with 501 and an HTML page ({URL} is not an OpenAI-compatible API)"
    )


def test_a_part_ends_after_its_first_answers_are_all_foreign() -> None:
    witness = Witness()
    heard = 0
    with witness.part():
        for _ in range(NOT_API_LIMIT * 3):
            heard += 1
            witness.hear(HTML_501)
    assert heard == NOT_API_LIMIT
    # A part that had an API answer goes on (a server with chat but no Responses).
    with witness.part():
        witness.hear(API)
        for _ in range(NOT_API_LIMIT * 3):
            witness.hear(HTML_501)
    # Outside a part (shrinking, confirming) nothing ends.
    for _ in range(NOT_API_LIMIT * 3):
        witness.hear(HTML_501)
    with witness.part():
        raise NotAnApi  # the part ends; the run goes on to the next
