"""The judge's ``history_cut`` control: before a session oracle blames a refused turn's history,
the same request goes out with its history cut back to its first user message."""

from __future__ import annotations

import pytest

from agentfuzz.judge.judge import Judge
from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    Provenance,
    SystemMessage,
    Tool,
    UserMessage,
)
from agentfuzz.model.observation import Exchange, Observation

ASK = UserMessage(text="Use get_weather.")
HISTORY = (SystemMessage(text="Be brief."), ASK, AssistantMessage(text="Hi."), ASK)
TURN = Case(
    history=History(tools=(Tool(name="get_weather"),), items=HISTORY),
    session=Provenance(turn=2),
)


def _answer(code: int) -> Observation:
    exchange = Exchange(url="http://x/v1/chat/completions", request={}, stream=False, status=code)
    return Observation(exchange=exchange, refused=code == 400, text="ok" if code == 200 else "")


def _sent(case: Case, code: int, **judge: object) -> list[Case]:
    sent: list[Case] = []

    def send(c: Case) -> Observation:
        sent.append(c)
        return _answer(code if c is case else 400)

    obs = Judge(send, **judge).observe(case)  # type: ignore[arg-type]
    assert [r.relation for r in obs.related] == ["history_cut"] * (len(sent) - 1)
    return sent


def test_a_refused_session_turn_is_sent_again_without_its_history() -> None:
    first, control = _sent(TURN, 400)
    assert first is TURN
    assert control.history.items == HISTORY[:2]  # the system message and the first user message
    assert control.history.tools == TURN.history.tools
    assert control.session is None


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(TURN.model_copy(update={"session": None}), id="synthetic"),
        pytest.param(
            TURN.model_copy(update={"history": History(items=HISTORY[:2])}), id="no-own-output"
        ),
        pytest.param(TURN.model_copy(update={"options": Options(fields={"n": 2})}), id="field"),
    ],
)
def test_no_control_where_there_is_nothing_to_tell_apart(case: Case) -> None:
    assert _sent(case, 400) == [case]


def test_no_control_for_an_accepted_turn_or_when_its_oracles_are_not_chosen() -> None:
    assert _sent(TURN, 200) == [TURN]
    assert _sent(TURN, 400, skip=("self_rejection", "id_roundtrip")) == [TURN]
    assert _sent(TURN, 400, only=("error",)) == [TURN]
    assert len(_sent(TURN, 400, only=("id_roundtrip",))) == 2
