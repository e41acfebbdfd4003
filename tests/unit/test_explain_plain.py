"""A streamed repro that fails without streaming too is written as the plain request: the
maintainer's curl prints one JSON answer, not SSE noise (issue 41)."""

from agentfuzz.model.history import AssistantMessage, Case, History, Tool, ToolCall, UserMessage
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.reduce.explain import explain

ALL = (("chat", False), ("chat", True), ("responses", False), ("responses", True))
HEX = "call_5f0e1d2c3b4a6978"


def _case(api: str = "chat", stream: bool = True) -> Case:
    call = AssistantMessage(tool_calls=(ToolCall(id="call_0", name="get_weather"),))
    items = (UserMessage(text="weather?"), call, UserMessage(text="again"))
    history = History(tools=(Tool(name="get_weather"),), items=items)
    return Case(history=history, api=api, stream=stream)


def _obs(case: Case) -> Observation:
    return Observation(exchange=Exchange(url=case.api, request={}, stream=case.stream, status=500))


def test_failing_both_ways_the_plain_request_is_the_repro() -> None:
    done = explain(_case(), _obs, ALL, {})
    assert (done.case.api, done.case.stream) == ("chat", False)
    assert done.observation is not None and done.observation.exchange.stream is False
    assert done.reproduces_on[0] == "chat/no-stream" and "chat/stream" in done.reproduces_on


def test_failing_only_streamed_the_streamed_request_stays() -> None:
    def streamed(case: Case) -> Observation | None:
        return _obs(case) if case.stream else None

    done = explain(_case("responses"), streamed, ALL, {})
    assert (done.case.api, done.case.stream) == ("responses", True)
    assert done.reproduces_on == ("responses/stream", "chat/stream")


def test_ids_minted_by_a_streamed_answer_keep_their_mode() -> None:
    minted = {"responses/stream": [("get_weather", HEX)]}
    done = explain(_case("responses"), _obs, ALL, minted)
    assert done.mechanism == {"minted_on": "responses/stream", "ids": [HEX]}
    assert (done.case.api, done.case.stream) == ("responses", True)
