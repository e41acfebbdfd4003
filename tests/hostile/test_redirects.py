"""A redirect is the target's configuration, not its answer (issue 41, item 15).

A 302 loop with an empty body gave four findings (``knob:n``, ``tool_choice`` three times), and
a 301 with an HTML page ``error:non_json``: the redirect was judged as the server's answer. Now no
oracle reads it, and a run whose every request was redirected says where to, and exits 2
(``test_hostile_runs.py``).
"""

from __future__ import annotations

from typing import BinaryIO

import pytest

from agentfuzz import oracles
from agentfuzz.model.history import Case, History, Tool, UserMessage
from agentfuzz.model.observation import Exchange
from agentfuzz.wire.dialects import assemble
from agentfuzz.wire.target import Target
from tests.hostile.servers import Request, raw_server, respond

TOOL = Tool(name="get_weather", description="weather", parameters={"type": "object"})
CASES = [
    Case(history=History(items=(UserMessage(text="hi"),))),
    Case(history=History(items=(UserMessage(text="hi"),), tools=(TOOL,)), stream=True),
]


def _redirect(status: int, body: str, content_type: str, stream: bool) -> Exchange:
    return Exchange(
        url="http://h/v1/chat/completions",
        request={"model": "m", "messages": [], "stream": stream},
        stream=stream,
        status=status,
        content_type=content_type,
        body=body,
        headers=(("location", "https://h/v1/chat/completions"),),
    )


@pytest.mark.parametrize("case", CASES, ids=["plain", "tools-streamed"])
@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [(302, "", "application/json"), (301, "<html>Moved</html>", "text/html")],
)
def test_no_oracle_judges_a_redirect(case: Case, status: int, body: str, content_type: str) -> None:
    obs = assemble(_redirect(status, body, content_type, case.stream))
    assert obs.errors == ()
    assert oracles.check(case, obs) == []


def test_a_redirect_is_counted_as_not_served_and_says_where_it_leads() -> None:
    def loop(request: Request, out: BinaryIO) -> None:
        respond(out, 302, b"", headers={"location": request.path})

    with raw_server(loop) as server, Target(server.base_url, "m", timeout=2) as target:
        obs = target.observe(CASES[1])
    assert oracles.check(CASES[1], obs) == []
    assert target.not_served == target.answered == 1
    assert target.last_not_served == "302 (a redirect to /v1/chat/completions)"
