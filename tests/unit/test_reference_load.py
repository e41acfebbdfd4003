"""The reference server's GPU timing: ``--capacity`` queues past that many, and ``/load`` says
how many requests were in flight, queued ones included."""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from agentfuzz.reference import serve_in_thread
from agentfuzz.reference.load import Load, Timing


def test_capacity_lets_that_many_work_at_once_and_counts_the_queue() -> None:
    inside = {"now": 0, "most": 0}
    released: list[anyio.Event] = []  # made inside the event loop

    async def app(scope: Any, receive: Any, send: Any) -> None:
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
        await released[0].wait()
        inside["now"] -= 1

    load = Load(app, capacity=3)
    levels: list[int] = []

    async def main() -> None:
        released.append(anyio.Event())
        scope = {"type": "http", "path": "/v1/chat/completions"}
        async with anyio.create_task_group() as tasks:
            for _ in range(8):
                tasks.start_soon(load, scope, None, None)
            while load.level < 8:
                await anyio.sleep(0)
            levels.append(load.snapshot()["in_flight"])
            released[0].set()

    anyio.run(main)
    assert inside["most"] == 3
    assert levels == [8]
    done = load.snapshot()
    assert done["served"] == 8 and done["in_flight"] == 0
    assert len(done["time_at"]) == 9  # it held 0 to 8 in flight


def test_load_counts_what_the_server_served() -> None:
    with serve_in_thread("fixed", latency_ms=1) as url, httpx.Client(timeout=30) as client:
        for _ in range(3):
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            assert client.post(url + "/chat/completions", json=body).status_code == 200
        client.get(url + "/models")
        load = client.get(url.removesuffix("/v1") + "/load").json()
    assert load["served"] == 3 and load["in_flight"] == 0 and load["capacity"] is None
    assert load["busy_s"] > 0


def test_a_token_is_four_characters_of_the_models_text() -> None:
    timing = Timing(per_token_ms=10)
    assert timing.tokens("") == 1 and timing.tokens("abcd") == 1 and timing.tokens("abcde") == 2
    assert timing.generating("x" * 40) == 0.1
    assert Timing().generating("x" * 40) == 0.0
