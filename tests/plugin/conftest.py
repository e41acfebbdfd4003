"""Cassettes recorded once per session against the embedded reference server, and its URLs.

``bug.yaml`` holds two turns against ``vllm-kimi-k2``: a clean first request, then seed 000's
history (a foreign ``call_<hex>`` id) whose answer is an empty turn. ``clean.yaml`` holds one
clean turn. Tests copy them into a ``pytester`` project's ``cassettes/`` folder.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentfuzz import Target
from agentfuzz.model.history import (
    AssistantMessage,
    Case,
    History,
    Tool,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.oracles import check
from agentfuzz.reference import serve_in_thread
from agentfuzz.tape.codec import Recorded, write_cassette

WEATHER = Tool(
    name="get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
ARGS = json.dumps({"city": "Paris"})


def _ask(api: str, stream: bool) -> Case:
    items = (UserMessage(text="Use get_weather for Paris."),)
    return Case(history=History(tools=(WEATHER,), items=items), api=api, stream=stream)  # type: ignore[arg-type]


def _foreign_id() -> Case:
    """Seed 000's four-item history: the call carries a ``call_<hex>`` id the model imitates."""
    call = ToolCall(id="call_4144fac2c5e1f3e0", name="get_weather", arguments=ARGS)
    items = (
        UserMessage(text="Use get_weather for Paris."),
        AssistantMessage(tool_calls=(call,)),
        ToolResult(call_id=call.id, output='{"temp_c": 17}'),
        UserMessage(text="Now use get_weather."),
    )
    return Case(history=History(tools=(WEATHER,), items=items), api="responses", stream=True)


def _record(url: str, path: Path, cases: list[Case]) -> list[list[str]]:
    """Send ``cases`` through a ``Target``, write them as one cassette; each turn's oracles."""
    target = Target(url, "kimi-k2-reference", None, 30.0)
    recorded = []
    try:
        for case in cases:
            obs = target.observe(case)
            recorded.append(Recorded(obs, case, tuple(check(case, obs))))
    finally:
        target.close()
    write_cassette(path, recorded, {"target": url, "model": target.model, "kind": "synthetic"})
    return [[v.oracle for v in r.violations] for r in recorded]


@pytest.fixture(scope="session")
def kimi_url() -> Iterator[str]:
    with serve_in_thread("vllm-kimi-k2") as url:
        yield url


@pytest.fixture(scope="session")
def fixed_url() -> Iterator[str]:
    with serve_in_thread("fixed") as url:
        yield url


@pytest.fixture(scope="session")
def recorded(kimi_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recorded")
    bug = _record(kimi_url, folder / "bug.yaml", [_ask("chat", False), _foreign_id()])
    assert bug[0] == [] and "empty_turn" in bug[1], bug
    assert _record(kimi_url, folder / "clean.yaml", [_ask("responses", True)]) == [[]]
    return folder


@pytest.fixture
def project(pytester: pytest.Pytester, recorded: Path) -> Path:
    """A pytester project whose ``cassettes/`` holds ``bug.yaml`` and ``clean.yaml``."""
    shutil.copytree(recorded, pytester.path / "cassettes")
    return pytester.path / "cassettes"
