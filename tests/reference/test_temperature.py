"""At temperature > 0 the failure rate climbs with the number of foreign ids in the prompt."""

from __future__ import annotations

import json
from typing import Any

from starlette.testclient import TestClient

from agentfuzz.reference import create_app

from .wire import CHAT_TOOLS

ARGS = json.dumps({"city": "Paris", "days": 2})


def history(turns: int) -> list[dict[str, Any]]:
    """``turns`` completed tool rounds, each with a client-minted ``call_<hex>`` id."""
    out: list[dict[str, Any]] = []
    for n in range(turns):
        call_id = f"call_{n:016x}"
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": ARGS},
        }
        out += [
            {"role": "user", "content": "Use get_weather."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": "17C"},
        ]
    return [*out, {"role": "user", "content": "Use get_weather again."}]


def failure_rate(profile: str, turns: int, seed: int, trials: int = 40) -> float:
    client = TestClient(create_app(profile, temperature=0.7, seed=seed))
    body = {"model": "m", "messages": history(turns), "tools": CHAT_TOOLS}
    empty = 0
    for _ in range(trials):
        message = client.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
        empty += not message.get("tool_calls") and not message.get("content")
    return empty / trials


def test_failure_rate_rises_with_turn_count() -> None:
    for seed in (0, 1, 2):
        rates = [failure_rate("vllm-kimi-k2", turns, seed) for turns in (1, 3, 8)]
        assert 0 < rates[0] < rates[1] < rates[2], (seed, rates)


def test_fixed_profile_stays_clean_at_temperature() -> None:
    assert failure_rate("vllm-kimi-k2-fixed", 8, seed=0) == 0.0


def test_temperature_zero_is_deterministic_and_identical_on_resend() -> None:
    client = TestClient(create_app("fixed", seed=5))
    body = {"model": "m", "messages": history(2), "tools": CHAT_TOOLS}
    first, second = (client.post("/v1/chat/completions", json=body).json() for _ in range(2))
    assert first["id"] == second["id"]
    assert first["choices"] == second["choices"]
