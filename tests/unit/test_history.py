import pydantic
import pytest

import agentfuzz
from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Options,
    ReasoningItem,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)


def _history() -> History:
    call = ToolCall(id="call_1", name="get", namespace="crm", arguments='{"a": 1}')
    return History(
        tools=(Tool(name="get", namespace="crm"),),
        items=(
            UserMessage(text="use get"),
            ReasoningItem(text="thinking"),
            AssistantMessage(tool_calls=(call,)),
            ToolResult(call_id="call_1", output="42"),
            UserMessage(text="again"),
        ),
    )


def test_models_are_frozen() -> None:
    h = _history()
    with pytest.raises(pydantic.ValidationError):
        h.items[0].text = "changed"  # type: ignore[misc,union-attr]


def test_case_round_trips_through_json() -> None:
    case = Case(history=_history(), options=Options(tool_choice="crm__get"), api="responses")
    assert Case.model_validate_json(case.model_dump_json()) == case


def test_flat_names_and_size() -> None:
    h = _history()
    assert h.tools[0].flat_name == "crm__get"
    assert h.calls[0].flat_name == "crm__get"
    assert h.size == 5 + 1


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(pydantic.ValidationError):
        UserMessage.model_validate({"kind": "user", "text": "x", "extra": 1})


def test_public_names_are_sorted_complete_and_importable() -> None:
    names = [n for n in agentfuzz.__all__ if n != "__version__"]
    assert names == sorted(names)
    # Every name that loads on first use is public, and every public name loads.
    assert set(names) == set(agentfuzz._HOMES)
    for name in agentfuzz.__all__:
        assert getattr(agentfuzz, name) is not None
    # The entry points a program drives agentfuzz with are all there.
    assert {"run", "FuzzConfig", "Report", "cases", "plans", "check", "register"} <= set(names)
    assert {"oracle_names", "load_profile", "replay_cassette", "Target"} <= set(names)
